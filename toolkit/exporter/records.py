"""What was done, as data: the orders followed and the actions taken on them, in order.

The explorer (``toolkit.explorer``) writes these records; the exporter (``toolkit.exporter``) reads only
them, so it can be tested without a gateway.  ``Tracked`` is mutable: its status is brought up to date as
the order moves on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from toolkit.callbacks import Received
from toolkit.client import LATER_TRANSACTIONS
from toolkit.flows import Order
from toolkit.models import Status, StatusResponse
from toolkit.testdata.outcomes import is_three_ds_v1_card

PAYER_METHOD = "payer:method"  # the payer's browser loaded the 3-D Secure method URL
PAYER_STATUS_PAGE = "payer:status-page"  # the merchant showed the status html; it went on by itself (gateway-run)
PAYER_CHALLENGE = "payer:challenge"  # the payer answered the ACS page (2.x challenge or 1.0.2)
PAYER_HOSTED = "payer:hosted"  # the payer paid on a hosted page
METHOD_LAPSED = "gateway:method-timed-out"  # the method URL was loaded, nobody reported it in time: the gateway set N
PAYER_TOKENIZE = "payer:tokenize"  # the payer typed a card into the gateway's Hosted Fields (the SDK's tokenize call)
HOSTED_FIELDS = "hosted-fields"  # the road of a Hosted Fields sale's 3-D Secure: the status's redirect-to, followed

# The two roads through 3-D Secure (behaviour 12): the gateway runs it (the merchant shows the status html and
# uploads nothing: the shop plugins' way, the default), or the merchant does, on its own pages, with the uploads.
GATEWAY_RUN, MERCHANT_RUN = "gateway-run", "merchant-run"
ROADS = (GATEWAY_RUN, MERCHANT_RUN)


@dataclass(eq=False)
class Tracked:
    """An order the explorer follows: the merchant's ``Order``, its parent, what the gateway says now."""

    order: Order
    parent: Tracked | None = None
    status: StatusResponse | None = None
    card_ref_id: str = ""
    redirect: Received | None = None  # the payer's redirect back to the merchant, as the receiver recorded it
    callbacks: tuple[Received, ...] = ()
    method: str = ""  # the 3-D Secure method step: loaded (not reported yet), completed, timed out, absent, lapsed
    road: str = ""  # merchant-run once the merchant uploaded a step result (or showed its own 1.0.2 page)

    @property
    def acs_result(self) -> dict[str, str]:
        """The CRes / PaRes (and MD) the payer brought back in the redirect (never masked: they are not card data)."""
        params = self.redirect.params if self.redirect is not None else {}
        return {name: params[name] for name in ("cres", "pares", "md") if name in params}

    @property
    def orderid(self) -> str:
        return self.order.orderid

    @property
    def key(self) -> str:
        """What tells this transaction from the others of its order: its request's serial-number."""
        return self.order.ack.serial_number or self.order.orderid

    @property
    def is_later(self) -> bool:
        """A later transaction of an order (capture, return, void, payout-pay): same orderid as its order."""
        return self.operation in LATER_TRANSACTIONS

    @property
    def status_query(self) -> dict[str, str]:
        """The fields of ``status`` for this transaction (a later one by its serial-number)."""
        query = {"client_orderid": self.client_orderid, "orderid": self.orderid}
        return {**query, "by_request_sn": self.key} if self.is_later else query

    @property
    def client_orderid(self) -> str:
        return self.order.client_orderid

    @property
    def operation(self) -> str:
        return self.order.operation

    @property
    def amount(self) -> Decimal | None:
        try:
            return Decimal(self.order.fields["amount"]) if self.order.fields.get("amount") else None
        except InvalidOperation:
            return None

    @property
    def currency(self) -> str:
        return self.order.fields.get("currency", "")

    @property
    def state(self) -> Status | None:
        return self.status.status if self.status is not None else None

    @property
    def three_ds_v1(self) -> bool:
        return self.order.card is not None and is_three_ds_v1_card(self.order.card.number)

    @property
    def label(self) -> str:
        """``sale 8056020: 10.42 EUR, approved``."""
        money = f"{self.order.fields['amount']} {self.currency}" if self.order.fields.get("amount") else "no amount"
        state = self.state.value if self.state else "sent"
        if self.status is not None and self.status.needs_payer:
            state += ", the payer must act"
        return f"{self.operation} {self.orderid}: {money}, {state}"


@dataclass(frozen=True)
class Action:
    """One thing done in the explorer, in order.

    ``operation`` is a catalogue operation or ``payer:method`` / ``payer:challenge``; ``target``
    the order acted on (follow-ups, uploads, payer steps), ``created`` the order it made.
    ``fields`` are masked.  ``refusal`` is the gateway's error message when it refused.
    """

    operation: str
    target: Tracked | None = None
    created: Tracked | None = None
    fields: Mapping[str, str] = field(default_factory=dict)
    outcome: str = ""
    refusal: str = ""
    detail: Mapping[str, str] = field(default_factory=dict)
    edited: tuple[str, ...] = ()

    @property
    def amount(self) -> str:
        return self.fields.get("amount", "")

    @property
    def currency(self) -> str:
        return self.fields.get("currency", "")
