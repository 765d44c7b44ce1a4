"""The payer's part, for the explorer: 3-D Secure on either road, and hosted pages.

3-D Secure has two roads (behaviour 12), chosen by what the merchant does (``road``):

- gateway-run (the default, the shop plugins' way): the merchant shows the status ``html`` to the payer's
  browser and uploads nothing; the page loads the method URL and goes on by itself to the gateway, which takes
  the payer to the challenge, applies the ACS's result and POSTs the payer to ``redirect_url`` with the final
  status and ``control``;
- merchant-run: the payer's browser loads the method URL, the merchant reports it (within 10 s of the load), the
  payer answers the ACS page (1.0.2: the merchant's own page, naming its own ``TermUrl``) and comes back to the
  merchant, who uploads the CRes / PaRes.  An order is merchant-run from its first upload on.

The same calls as the certification steps (``toolkit.payer.Payer`` and ``toolkit.flows.Merchant``); each step is
noted on the timeline and recorded for the exporter.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from toolkit.errors import ApiError, GatewayError
from toolkit.explorer.context import StepContext
from toolkit.explorer.history import (
    GATEWAY_RUN,
    MERCHANT_RUN,
    METHOD_LAPSED,
    PAYER_CHALLENGE,
    PAYER_HOSTED,
    PAYER_METHOD,
    PAYER_STATUS_PAGE,
    Action,
    Tracked,
)
from toolkit.explorer.hostedflow import HostedFieldsFlow
from toolkit.flows import METHOD_WINDOW
from toolkit.models import FormResponse, HostedSaleResponse, StatusResponse
from toolkit.payer import PASSWORDS, PayerError
from toolkit.payer.forms import Page
from toolkit.testdata.cards import card_for


class PayerFlow:
    """Does what the payer must on the selected order; ``run`` returns what happened, in words."""

    def __init__(self, model: StepContext) -> None:
        self.model = model

    def _note(self, tracked: Tracked, text: str) -> None:
        self.model.session.timeline.note(text, orderid=tracked.orderid, client_orderid=tracked.client_orderid)

    def road(self, tracked: Tracked) -> str:
        """The order's road: merchant-run once the merchant uploaded to it, else the one chosen in the explorer."""
        return MERCHANT_RUN if tracked.road == MERCHANT_RUN else self.model.road

    def run(self, tracked: Tracked) -> str:
        if isinstance(tracked.order.ack, FormResponse):
            return self.hosted_page(tracked)
        status = self.model.settle(tracked)
        if status is None or not status.needs_payer:
            return f"nothing for the payer to do: the order is {status.status.value if status else 'unknown'}"
        if isinstance(tracked.order.ack, HostedSaleResponse):  # (its status sends the payer: redirect-to, once)
            return HostedFieldsFlow(self.model).challenge(tracked, status)
        lapsed = self.record_lapse(tracked) if self.method_lapsed(tracked, status) else ""
        if self.road(tracked) == GATEWAY_RUN:
            return lapsed + self.gateway_runs(tracked, status)
        return lapsed + self.merchant_runs(tracked, status)

    # --- at Send ------------------------------------------------------------------------------------

    def at_send(self, tracked: Tracked) -> str:
        """What 3-D Secure asks right after Send.  Gateway-run: nothing yet (no window runs until the payer's browser
        loads the method URL).  Merchant-run: the merchant's page loads the method frame at once, and the gateway
        waits ``METHOD_WINDOW`` seconds from that load for the report, less than a person takes to reach for the
        payer button: report it now (``auto_method``), or say by when it must be reported."""
        status = tracked.status
        if status is None or not status.needs_payer or isinstance(tracked.order.ack, FormResponse):
            return ""
        if isinstance(tracked.order.ack, HostedSaleResponse):
            return "3-D Secure: the v4 status sends the payer to the issuer (redirect-to): act as the payer"
        if self.road(tracked) == GATEWAY_RUN:
            steps = (
                "the issuer's 1.0.2 page"
                if tracked.three_ds_v1
                else f"the method step (its {METHOD_WINDOW} s window starts with the load), the challenge"
            )
            return (
                "3-D Secure, run by the gateway: act as the payer; the merchant shows the status html to the payer's "
                f"browser, which goes through {steps} and back to the merchant with the final status; nothing to upload"
            )
        if not self.awaits_method(tracked, status):
            return "3-D Secure, run by the merchant: act as the payer for the issuer's page, then the merchant uploads"
        how = self.model.method_result
        try:
            if how == "completed":
                self.load_method(tracked, status)
            if self.model.auto_method:
                self.report_method(tracked, how)
        except (GatewayError, PayerError) as exc:
            return f"3-D Secure: the method step failed: {exc}"
        self.model.settle(tracked)
        if self.model.auto_method:
            done = "the payer's browser loaded the method URL and " if how == "completed" else ""
            return (
                f"3-D Secure, run by the merchant: {done}the merchant reported the method step as {how} at once "
                f"(the gateway waits only {METHOD_WINDOW} s from the load); act as the payer for the challenge"
            )
        if how != "completed":
            return f"3-D Secure, run by the merchant: act as the payer to report the method step as {how}"
        by = (datetime.now(UTC) + timedelta(seconds=METHOD_WINDOW)).strftime("%H:%M:%S")
        return (
            f"3-D Secure, run by the merchant: the payer's browser loaded the method URL; act as the payer within "
            f"{METHOD_WINDOW} s (before {by} UTC) to report it, or the gateway times the method step out (N)"
        )

    # --- the method step ----------------------------------------------------------------------------

    def awaits_method(self, tracked: Tracked, status: StatusResponse) -> bool:
        """The status hands the payer's browser the 3-D Secure 2 method frame (the step is still pending)."""
        if tracked.three_ds_v1 or not status.needs_payer:
            return False
        return bool(self.model.session.payer.html_page(status).iframes)

    @staticmethod
    def method_lapsed(tracked: Tracked, status: StatusResponse) -> bool:
        """The payer's browser loaded the method URL, nobody reported it, and the gateway decided ``N`` itself: the
        window (10 s) runs only from that load, so a method step never started cannot lapse (behaviour 12)."""
        return tracked.method == "loaded" and status.get("three-ds-comp-ind") == "N" and not tracked.three_ds_v1

    def record_lapse(self, tracked: Tracked) -> str:
        """What happened, recorded (the export says it in a comment)."""
        tracked.method = "lapsed"
        self._note(tracked, f"the gateway timed out the 3-D Secure method step (not reported within {METHOD_WINDOW} s)")
        self.model.history.append(Action(METHOD_LAPSED, tracked, detail={"indicator": "N"}))
        return f"the method step was not reported within {METHOD_WINDOW} s of the load: the gateway timed it out (N); "

    def load_method(self, tracked: Tracked, status: StatusResponse) -> None:
        """The payer's browser loads the method URL in its hidden frame: the method window starts."""
        page = self.model.session.payer.load_method_url(status)
        tracked.method = "loaded"
        self._note(tracked, f"payer's browser loaded the 3-D Secure method URL (HTTP {page.status_code})")
        self.model.history.append(Action(PAYER_METHOD, tracked))

    def report_method(self, tracked: Tracked, how: str) -> None:
        """upload-method-url-result: from now on the order is merchant-run."""
        merchant = self.model.session.merchant
        self._upload("upload_method_url_result", tracked, lambda: merchant.report_method(tracked.order, how), how)
        tracked.method = how

    # --- merchant-run -------------------------------------------------------------------------------

    def merchant_runs(self, tracked: Tracked, status: StatusResponse) -> str:
        """The method step (loaded unless 'timed out' / 'absent', then reported), the ACS page, the upload."""
        if self.awaits_method(tracked, status):
            how = self.model.method_result
            if how == "completed" and tracked.method != "loaded":
                self.load_method(tracked, status)
            self.report_method(tracked, how)
            status = self.model.settle(tracked) or status
        elif tracked.method == "lapsed":
            self.report_method(tracked, "timed out")  # late, and answered: it agrees with the gateway (behaviour 12)
            status = self.model.settle(tracked) or status
        if status.needs_payer:
            self.challenge(tracked, status)
        self.model.settle(tracked)
        return f"3-D Secure run by the merchant: the order is {tracked.state.value if tracked.state else 'unknown'}"

    def challenge(self, tracked: Tracked, status: StatusResponse) -> None:
        """The payer answers the ACS page, comes back to the merchant; the merchant uploads the result.  1.0.2: the
        merchant's own page posts the PaReq with its own ``TermUrl`` (``Merchant.own_authentication_page``)."""
        session, order, which = self.model.session, tracked.order, self.model.password
        merchant, payer = session.merchant, session.payer
        if tracked.three_ds_v1:
            tracked.road = MERCHANT_RUN  # (its own TermUrl: the ACS hands the PaRes to the merchant)
            page = payer.show_html(merchant.own_authentication_page(order, status))
        else:
            page = payer.follow(status)
        version = self._answer(tracked, page, which, MERCHANT_RUN)
        redirect = tracked.redirect = merchant.redirect_for(order)  # control verified, card data masked
        if version == "1.0.2":
            self._upload("upload_pares_result", tracked, lambda: merchant.upload_authentication_result(order, redirect))
        else:
            self._upload("upload_cres_result", tracked, lambda: merchant.upload_challenge_result(order, redirect))

    def _answer(self, tracked: Tracked, page: Page, which: str, road: str) -> str:
        """The payer answers the ACS page with the chosen password and goes back to the merchant; the version."""
        payer = self.model.session.payer
        delivered = payer.return_to_merchant(payer.answer_challenge(page, PASSWORDS[which]))
        version = "1.0.2" if tracked.three_ds_v1 else "2"
        self._note(tracked, f"payer answered the 3-D Secure {version} page with the {which} password")
        self._note(tracked, f"payer's browser went back to the merchant (HTTP {delivered.status_code})")
        detail = {"version": version, "password": which, "road": road}
        self.model.history.append(Action(PAYER_CHALLENGE, tracked, detail=detail))
        return version

    def _upload(self, operation: str, tracked: Tracked, call: Callable[[], object], how: str = "") -> None:
        fields = {"client_orderid": tracked.client_orderid, "orderid": tracked.orderid}
        try:
            call()
        except ApiError as exc:
            self.model.history.append(Action(operation, tracked, None, fields, refusal=exc.error_message))
            raise
        tracked.road = MERCHANT_RUN
        self.model.history.append(Action(operation, tracked, None, fields, detail={"how": how} if how else {}))

    # --- gateway-run --------------------------------------------------------------------------------

    def gateway_runs(self, tracked: Tracked, status: StatusResponse) -> str:
        """The merchant shows the status html; it goes on by itself (method step, gateway, challenge); the payer
        answers the ACS page when there is one; the gateway sends the payer back with the final status."""
        session, order = self.model.session, tracked.order
        payer = session.payer
        seen = len(payer.visits)
        page = payer.show_html(status.html) if status.html else payer.follow(status)
        loaded = any("method URL" in visit.step for visit in payer.visits[seen:])
        tracked.road = GATEWAY_RUN
        self._note(
            tracked,
            "the merchant showed the status html to the payer's browser"
            + (": it loaded the 3-D Secure method URL and went on to the gateway by itself" if loaded else ""),
        )
        version = "1.0.2" if tracked.three_ds_v1 else "2"
        self.model.history.append(Action(PAYER_STATUS_PAGE, tracked, detail={"version": version}))
        if payer.shows_challenge(page):
            self._answer(tracked, page, self.model.password, GATEWAY_RUN)
        else:
            delivered = payer.return_to_merchant(page)
            self._note(tracked, f"payer's browser went back to the merchant (HTTP {delivered.status_code})")
        redirect = tracked.redirect = session.merchant.redirect_for(order)
        self.model.settle(tracked)
        state = tracked.state.value if tracked.state else "unknown"
        signed = "signed" if redirect.control_ok else "UNSIGNED"
        return (
            f"3-D Secure run by the gateway: the payer came back to the merchant with a {signed} "
            f"{redirect.status or '?'}; the order is {state}, nothing uploaded"
        )

    # --- hosted pages -------------------------------------------------------------------------------

    def hosted_page(self, tracked: Tracked) -> str:
        """The payer opens the gateway's page, enters an approved card, passes 3-D Secure if asked, comes back."""
        session = self.model.session
        delivered = session.payer.pay_on_hosted_page(tracked.order.redirect_url, card_for("approved"))
        self._note(tracked, f"payer paid on the hosted page with an approved card (HTTP {delivered.status_code})")
        self.model.history.append(Action(PAYER_HOSTED, tracked, detail={"card": "approved"}))
        tracked.redirect = session.merchant.redirect_for(tracked.order)
        self.model.settle(tracked)
        return f"the payer came back to the merchant; the order is {tracked.state.value if tracked.state else '?'}"
