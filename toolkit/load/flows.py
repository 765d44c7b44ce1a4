"""The certification flows as load flows: the merchant's calls (``toolkit.flows.Merchant``) and the HTTP payer.

Each flow returns what it leaves behind: the orders whose callbacks must come (and how many distinct ones
each: one per final transaction of the order) and the decline, if the gateway declined. A flow that cannot go
on raises: a ``GatewayError`` (refused, transport, timeout...), a ``PayerError`` (the payer lost its way) or a
``FlowError`` (an outcome the flow cannot continue from). ``failure_kind`` names the kind for the report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

import requests

from toolkit.errors import (
    ApiError,
    AuthenticationError,
    GatewayError,
    InvalidRequestError,
    ProtocolError,
    ServerError,
    TransportError,
    WaitTimeout,
)
from toolkit.flows import FlowError, Merchant, Order
from toolkit.models import Status, StatusResponse
from toolkit.payer import Payer, PayerError
from toolkit.testdata.cards import card_for

AMOUNT = Decimal("10.00")
CAPTURED = Decimal("6.00")
RETURNED = Decimal("4.00")
PAID_OUT = Decimal("1.00")


@dataclass
class FlowRun:
    """What a flow left: orders and the distinct callbacks each must bring; the decline that ended it, if any."""

    callbacks: dict[str, int] = field(default_factory=dict)
    declined: str = ""

    def expect(self, order: Order | str, count: int = 1) -> None:
        orderid = order if isinstance(order, str) else order.orderid
        self.callbacks[orderid] = self.callbacks.get(orderid, 0) + count

    def final(self, merchant: Merchant, order: Order, *, callbacks: int = 1) -> StatusResponse:
        """The order's final status (its callback now expected); a decline ends the flow (``Declined``)."""
        status = merchant.final_status(order)
        self.expect(order, callbacks)
        if status.status is not Status.APPROVED:
            raise Declined(f"{status.status.value}: {status.error_message or 'no reason given'}")
        return status


class Declined(Exception):
    """The gateway declined (the decline mix, a declining card): the flow stops, its callbacks still come."""


def sale(merchant: Merchant, payer: Payer, run: FlowRun) -> None:
    run.final(merchant, merchant.pay("sale", card_for("approved"), AMOUNT))


def threeds(merchant: Merchant, payer: Payer, run: FlowRun) -> None:
    """3-D Secure 2: the payer's browser loads the method URL, the merchant reports it, the payer answers the
    challenge and comes back with the CRes, which the merchant uploads."""
    order = merchant.pay("sale", card_for("3ds-challenge"), AMOUNT)
    step = merchant.payer_step(order)
    if not step.needs_payer:
        raise FlowError(f"{order}: no 3-D Secure step ({step.status.value})")
    payer.load_method_url(step)
    merchant.report_method(order, "completed")
    page = payer.answer_challenge(payer.follow(merchant.payer_step(order)), payer.settings.password("right"))
    delivered = payer.return_to_merchant(page)
    if "cres" not in delivered.fields:
        raise FlowError(f"{order}: the payer came back without a CRes ({sorted(delivered.fields)})")
    merchant.client.upload_cres_result(
        client_orderid=order.client_orderid, orderid=order.orderid, cres=delivered.fields["cres"]
    )
    run.final(merchant, order)


def preauth_capture(merchant: Merchant, payer: Payer, run: FlowRun) -> None:
    order = merchant.pay("preauth", card_for("approved"), AMOUNT)
    run.final(merchant, order)
    capture = merchant.capture(order, CAPTURED)
    run.final(merchant, capture)


def partial_return(merchant: Merchant, payer: Payer, run: FlowRun) -> None:
    order = merchant.pay("sale", card_for("approved"), AMOUNT)
    run.final(merchant, order)
    run.final(merchant, merchant.return_(order, RETURNED))


def rebill(merchant: Merchant, payer: Payer, run: FlowRun) -> None:
    order = merchant.pay("sale", card_for("approved"), AMOUNT)
    run.final(merchant, order)
    reference = merchant.card_ref(order)
    run.final(merchant, merchant.rebill(reference.card_ref_id, amount=AMOUNT))


def payout(merchant: Merchant, payer: Payer, run: FlowRun) -> None:
    check = merchant.payout("payout_check", PAID_OUT, card_for("approved"))
    run.final(merchant, check)
    run.final(merchant, merchant.payout_pay(check))


def hosted_form(merchant: Merchant, payer: Payer, run: FlowRun) -> None:
    order = merchant.open_form("sale-form", AMOUNT)
    payer.pay_on_hosted_page(order.redirect_url, card_for("approved"))
    run.final(merchant, order)


Flow = Callable[[Merchant, Payer, FlowRun], None]
FLOW_FUNCTIONS: dict[str, Flow] = {
    "sale": sale,
    "threeds": threeds,
    "preauth_capture": preauth_capture,
    "partial_return": partial_return,
    "rebill": rebill,
    "payout": payout,
    "hosted_form": hosted_form,
}

# The kinds of failure a report counts, in the order it shows them.
KINDS = ("declined", "refused", "server-error", "transport", "timeout", "protocol", "payer", "flow",
         "callback-lost", "callback-duplicate")  # fmt: skip


def failure_kind(exc: BaseException) -> str:
    """The report's kind of a failure."""
    if isinstance(exc, Declined):
        return "declined"
    if isinstance(exc, TransportError):
        return "timeout" if " within " in str(exc) else "transport"
    if isinstance(exc, WaitTimeout):
        return "timeout"
    if isinstance(exc, ServerError):
        return "server-error"
    if isinstance(exc, (ApiError, AuthenticationError, InvalidRequestError)):
        return "refused"
    if isinstance(exc, ProtocolError):
        return "protocol"
    if isinstance(exc, PayerError):
        return "payer"
    if isinstance(exc, requests.Timeout):  # (the payer's browser, or a page it loads)
        return "timeout"
    if isinstance(exc, requests.RequestException):
        return "transport"
    if isinstance(exc, GatewayError):
        return "refused"
    return "flow"
