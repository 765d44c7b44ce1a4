"""The payer's part, for the explorer: 3-D Secure (method step, 2.x challenge, 1.0.2 page) and hosted pages.

The same calls as the certification steps (``toolkit.payer.Payer`` and ``toolkit.flows.Merchant``):
the payer's browser loads the method URL, the merchant reports it, the payer answers the ACS page
and comes back to the merchant's ``redirect_url``, the merchant uploads the CRes / PaRes.  Each
step is noted on the timeline and recorded for the exporter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from toolkit.errors import ApiError
from toolkit.explorer.history import PAYER_CHALLENGE, PAYER_HOSTED, PAYER_METHOD, Action, Tracked
from toolkit.htmlforms import Page
from toolkit.models import FormResponse, StatusResponse
from toolkit.testdata.cards import card_for
from toolkit.testdata.outcomes import CHALLENGE_PASSWORD

if TYPE_CHECKING:
    from toolkit.explorer.model import ExplorerModel

PASSWORDS = {"right": CHALLENGE_PASSWORD, "wrong": "not-the-password"}


class PayerFlow:
    """Does what the payer must on the selected order; ``run`` returns what happened, in words."""

    def __init__(self, model: ExplorerModel) -> None:
        self.model = model

    def _note(self, tracked: Tracked, text: str) -> None:
        self.model.session.timeline.note(text, orderid=tracked.orderid, client_orderid=tracked.client_orderid)

    def run(self, tracked: Tracked) -> str:
        if isinstance(tracked.order.ack, FormResponse):
            return self.hosted_page(tracked)
        status = self.model.settle(tracked)
        if status is None or not status.needs_payer:
            return f"nothing for the payer to do: the order is {status.status.value if status else 'unknown'}"
        if not tracked.three_ds_v1 and Page.parse("about:blank", 200, status.html).iframes:
            self.method_step(tracked, status)
            status = self.model.settle(tracked)
        if status is not None and status.needs_payer:
            self.challenge(tracked, status)
        self.model.settle(tracked)
        return f"the order is {tracked.state.value if tracked.state else 'unknown'}"

    def method_step(self, tracked: Tracked, status: StatusResponse) -> None:
        """The browser loads the method URL (unless the result is 'timed out' / 'absent'); the merchant reports it."""
        session, how = self.model.session, self.model.method_result
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
        tracked.redirect = session.merchant.redirect_for(order)  # the merchant's record: control verified, masked
        # The CRes / PaRes as the browser posted them: the receiver's record masks free text, and a
        # digit run of the ACS signature can pass the Luhn check (toolkit/callbacks/records.py).
        result = delivered.fields
        tracked.acs_result = {name: result[name] for name in ("cres", "pares", "md") if name in result}
        if tracked.three_ds_v1:
            pares, md = result["pares"], result.get("md", "")
            self._upload(
                "upload_pares_result",
                tracked,
                lambda: session.client.upload_pares_result(
                    client_orderid=order.client_orderid, orderid=order.orderid, pares=pares, md=md
                ),
            )
        else:
            cres = result["cres"]
            self._upload(
                "upload_cres_result",
                tracked,
                lambda: session.client.upload_cres_result(
                    client_orderid=order.client_orderid, orderid=order.orderid, cres=cres
                ),
            )

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
