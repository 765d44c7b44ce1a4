"""The payer's part, for the explorer: 3-D Secure (method step, 2.x challenge, 1.0.2 page) and hosted pages.

The same calls as the certification steps (``toolkit.payer.Payer`` and ``toolkit.flows.Merchant``):
the payer's browser loads the method URL, the merchant reports it, the payer answers the ACS page
and comes back to the merchant's ``redirect_url``, the merchant uploads the CRes / PaRes.  Each
step is noted on the timeline and recorded for the exporter.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from toolkit.errors import ApiError, GatewayError
from toolkit.explorer.context import StepContext
from toolkit.explorer.history import METHOD_LAPSED, PAYER_CHALLENGE, PAYER_HOSTED, PAYER_METHOD, Action, Tracked
from toolkit.flows import METHOD_WINDOW
from toolkit.models import FormResponse, StatusResponse
from toolkit.payer import PASSWORDS, PayerError
from toolkit.testdata.cards import card_for


class PayerFlow:
    """Does what the payer must on the selected order; ``run`` returns what happened, in words."""

    def __init__(self, model: StepContext) -> None:
        self.model = model

    def _note(self, tracked: Tracked, text: str) -> None:
        self.model.session.timeline.note(text, orderid=tracked.orderid, client_orderid=tracked.client_orderid)

    def run(self, tracked: Tracked) -> str:
        if isinstance(tracked.order.ack, FormResponse):
            return self.hosted_page(tracked)
        status = self.model.settle(tracked)
        if status is None or not status.needs_payer:
            return f"nothing for the payer to do: the order is {status.status.value if status else 'unknown'}"
        lapsed = ""
        if self.awaits_method(tracked, status):
            self.method_step(tracked, status)
            status = self.model.settle(tracked)
        elif self.method_lapsed(tracked, status):
            lapsed = self.record_lapse(tracked)
        if status is not None and status.needs_payer:
            self.challenge(tracked, status)
        self.model.settle(tracked)
        return lapsed + f"the order is {tracked.state.value if tracked.state else 'unknown'}"

    def at_send(self, tracked: Tracked) -> str:
        """3-D Secure 2: the gateway waits ``METHOD_WINDOW`` seconds for the method step, less than a person
        takes to reach for the payer button: do it now (``auto_method``), or say by when it must be done."""
        if tracked.status is None or not self.awaits_method(tracked, tracked.status):
            return ""
        if not self.model.auto_method:
            by = (datetime.now(UTC) + timedelta(seconds=METHOD_WINDOW)).strftime("%H:%M:%S")
            return (
                f"3-D Secure: act as the payer within {METHOD_WINDOW} s (before {by} UTC), or the gateway times "
                "the method step out (N)"
            )
        try:
            self.method_step(tracked, tracked.status)
        except (GatewayError, PayerError) as exc:
            return f"3-D Secure: the method step failed: {exc}"
        self.model.settle(tracked)
        done = "the payer's browser loaded the method URL and " if self.model.method_result == "completed" else ""
        return (
            f"3-D Secure: {done}the merchant reported the method step as {self.model.method_result} at once "
            f"(the gateway waits only {METHOD_WINDOW} s); act as the payer for the challenge"
        )

    def awaits_method(self, tracked: Tracked, status: StatusResponse) -> bool:
        """The status hands the payer's browser the 3-D Secure 2 method frame (the 10 s window is running)."""
        if tracked.three_ds_v1 or not status.needs_payer:
            return False
        return bool(self.model.session.payer.html_page(status).iframes)

    @staticmethod
    def method_lapsed(tracked: Tracked, status: StatusResponse) -> bool:
        """Nobody reported the method step and the gateway decided ``N`` itself (the window passed)."""
        return not tracked.method and status.get("three-ds-comp-ind") == "N" and not tracked.three_ds_v1

    def record_lapse(self, tracked: Tracked) -> str:
        """What happened, recorded: the export reports the method step as timed out, which reaches the same state."""
        tracked.method = "lapsed"
        self._note(tracked, f"the gateway timed out the 3-D Secure method step (not reported within {METHOD_WINDOW} s)")
        self.model.history.append(Action(METHOD_LAPSED, tracked, detail={"indicator": "N"}))
        return f"the method step was not reported within {METHOD_WINDOW} s: the gateway timed it out (N); "

    def method_step(self, tracked: Tracked, status: StatusResponse) -> None:
        """The browser loads the method URL (unless the result is 'timed out' / 'absent'); the merchant reports it."""
        session, how = self.model.session, self.model.method_result
        tracked.method = how
        if how == "completed":
            page = session.payer.load_method_url(status)
            self._note(tracked, f"payer's browser loaded the 3-D Secure method URL (HTTP {page.status_code})")
            self.model.history.append(Action(PAYER_METHOD, tracked))
        self._upload(
            "upload_method_url_result",
            tracked,
            lambda: session.merchant.report_method(tracked.order, how),
            {"how": how},
        )

    def challenge(self, tracked: Tracked, status: StatusResponse) -> None:
        """The payer answers the ACS page, comes back to the merchant; the merchant uploads the result."""
        session, order, which = self.model.session, tracked.order, self.model.password
        page = session.payer.answer_challenge(session.payer.follow(status), PASSWORDS[which])
        delivered = session.payer.return_to_merchant(page)
        version = "1.0.2" if tracked.three_ds_v1 else "2"
        self._note(tracked, f"payer answered the 3-D Secure {version} page with the {which} password")
        self._note(tracked, f"payer's browser went back to the merchant (HTTP {delivered.status_code})")
        self.model.history.append(Action(PAYER_CHALLENGE, tracked, detail={"version": version, "password": which}))
        merchant = session.merchant
        redirect = tracked.redirect = merchant.redirect_for(order)  # control verified, card data masked
        if tracked.three_ds_v1:
            self._upload("upload_pares_result", tracked, lambda: merchant.upload_authentication_result(order, redirect))
        else:
            self._upload("upload_cres_result", tracked, lambda: merchant.upload_challenge_result(order, redirect))

    def _upload(
        self, operation: str, tracked: Tracked, call: Callable[[], object], detail: dict[str, str] | None = None
    ) -> None:
        fields = {"client_orderid": tracked.client_orderid, "orderid": tracked.orderid}
        try:
            call()
        except ApiError as exc:
            self.model.history.append(Action(operation, tracked, None, fields, refusal=exc.error_message))
            raise
        self.model.history.append(Action(operation, tracked, None, fields, detail=detail or {}))

    def hosted_page(self, tracked: Tracked) -> str:
        """The payer opens the gateway's page, enters an approved card, passes 3-D Secure if asked, comes back."""
        session = self.model.session
        delivered = session.payer.pay_on_hosted_page(tracked.order.redirect_url, card_for("approved"))
        self._note(tracked, f"payer paid on the hosted page with an approved card (HTTP {delivered.status_code})")
        self.model.history.append(Action(PAYER_HOSTED, tracked, detail={"card": "approved"}))
        tracked.redirect = session.merchant.redirect_for(tracked.order)
        self.model.settle(tracked)
        return f"the payer came back to the merchant; the order is {tracked.state.value if tracked.state else '?'}"
