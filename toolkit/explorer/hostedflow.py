"""A Hosted Fields checkout in the explorer (hosted-fields.md): the payer's part of it.

The merchant's three server calls are operations of the catalogue, sent from the form like any other:
``create_ephemeral_ticket`` (a ticket for one load of the checkout page), ``sale_v4`` (the token in place of the
card) and ``status_v4``.  The payer's part is here, with the same calls as the certification steps:

- ``tokenize``: the payer types the card of the form's outcome into the gateway's iframes; the SDK's call is made
  as the SDK makes it (``Payer.tokenize_hosted_fields``: the CORS preflight, then the card and the page's ticket to
  the SDK's origin).  The token goes into the ``sale_v4`` form; a refusal (4003: the ticket is spent...) is
  recorded as it came;
- ``challenge``: the status sends the payer to 3-D Secure (``redirect-to``, once); the payer answers the issuer's
  page with the chosen password and the browser POSTs ``status``, ``orderid``, ``merchant_order`` and ``control``
  back to the sale's ``redirect_url`` (``Payer.follow_challenge``).

Each step is noted on the timeline and recorded for the exporter.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.explorer.context import StepContext
from toolkit.explorer.history import HOSTED_FIELDS, PAYER_CHALLENGE, PAYER_TOKENIZE, Action, Tracked
from toolkit.hosted_fields import sdk_url_of
from toolkit.models import StatusResponse
from toolkit.payer import PASSWORDS, HostedFieldsToken, PayerError, TokenizeRefused
from toolkit.testdata.cards import Card
from toolkit.testdata.outcomes import outcome_for_cvv


@dataclass
class Checkout:
    """The checkout page the explorer stands for: its ticket (kept in the page once spent, as a page keeps it), the
    token the payer's typing gave and the card it stands for (masked in every record)."""

    ticket: str = ""
    token: str = ""
    card: Card | None = None


class HostedFieldsFlow:
    """The payer's part of a Hosted Fields checkout, for the explorer's model (a ``StepContext``)."""

    def __init__(self, model: StepContext, checkout: Checkout | None = None) -> None:
        self.model = model
        self.checkout = checkout or Checkout()

    def tokenize(self, card: Card) -> HostedFieldsToken:
        """The payer types ``card`` into the Hosted Fields of the page that holds the ticket; ``TokenizeRefused``
        (recorded) when the gateway refuses it; LookupError without a ticket."""
        ticket = self.checkout.ticket
        if not ticket:
            raise LookupError("no ephemeral ticket: send create_ephemeral_ticket first (one per checkout page load)")
        session = self.model.session
        outcome = outcome_for_cvv(card.cvv2).name
        try:
            token = session.payer.tokenize_hosted_fields(ticket, card, sdk_url=sdk_url_of(session.config.base_url),
                                                         origin=session.receiver.base_url)  # fmt: skip
        except TokenizeRefused as refused:
            session.timeline.note(f"the gateway refused the card typed into its Hosted Fields: {refused.code}")
            detail = {"outcome": outcome, "code": str(refused.code)}
            self.model.history.append(Action(PAYER_TOKENIZE, detail=detail, refusal=str(refused)))
            raise
        self.checkout.token, self.checkout.card = token.token, card
        session.timeline.note("the payer typed a card into the Hosted Fields: the page got a hosted fields token")
        self.model.history.append(Action(PAYER_TOKENIZE, detail={"outcome": outcome}))
        return token

    def challenge(self, tracked: Tracked, status: StatusResponse) -> str:
        """3-D Secure of a Hosted Fields sale: the payer follows ``redirect-to`` once, answers, and comes back."""
        if not status.redirect_to:
            raise PayerError(f"the v4 status of {tracked.orderid} sends the payer nowhere (no redirect-to)")
        session, which = self.model.session, self.model.password
        delivered = session.payer.follow_challenge(status, PASSWORDS[which])
        for text in (
            f"payer followed redirect-to and answered the 3-D Secure page with the {which} password",
            f"payer's browser posted the outcome back to the merchant (HTTP {delivered.status_code})",
        ):
            session.timeline.note(text, orderid=tracked.orderid, client_orderid=tracked.client_orderid)
        detail = {"version": "2", "password": which, "road": HOSTED_FIELDS}
        self.model.history.append(Action(PAYER_CHALLENGE, tracked, detail=detail))
        redirect = tracked.redirect = session.merchant.redirect_for(tracked.order)
        self.model.settle(tracked)
        signed = "signed" if redirect.control_ok else "UNSIGNED"
        state = tracked.state.value if tracked.state else "unknown"
        return (
            f"3-D Secure of a Hosted Fields sale: the payer followed redirect-to and came back to the merchant with a "
            f"{signed} {redirect.status or '?'} (status, orderid, merchant_order, control); the order is {state}"
        )
