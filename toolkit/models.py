"""Typed responses: frozen dataclasses that keep the raw mapping beside the parsed fields.

Statuses are a StrEnum (behaviour section 3); money is Decimal.  Each field is read from its
wire name, the field name with dashes (``card_type`` <- ``card-type``), except those in RENAMED.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Any, Self

from toolkit.masking import mask_text
from toolkit.operations import ResponseKind

RENAMED = {
    "kind": "type",
    "orderid": "paynet-order-id",
    "client_orderid": "merchant-order-id",
    "ephemeral_ticket": "ephemeralTicket",
    "bank_message": "bank_message",
}


class Status(StrEnum):
    APPROVED = "approved"
    DECLINED = "declined"
    FILTERED = "filtered"
    ERROR = "error"
    PROCESSING = "processing"
    UNKNOWN = "unknown"

    @property
    def is_final(self) -> bool:
        """approved, declined, filtered and error are final; processing and unknown poll on."""
        return self in FINAL_STATUSES

    @classmethod
    def parse(cls, value: str) -> Status:
        try:
            return cls(value.strip().lower())
        except ValueError:
            return cls.UNKNOWN


FINAL_STATUSES = frozenset({Status.APPROVED, Status.DECLINED, Status.FILTERED, Status.ERROR})


def _decimal(value: str) -> Decimal | None:
    try:
        return Decimal(value) if value else None
    except InvalidOperation:
        return None


_WIRE_NAMES: dict[type, tuple[tuple[str, str], ...]] = {}


def _wire_names(cls: type) -> tuple[tuple[str, str], ...]:
    """(attribute, wire name) of a response class's fields, ``raw`` aside: worked out once per class."""
    names = _WIRE_NAMES.get(cls)
    if names is None:
        names = _WIRE_NAMES[cls] = tuple(
            (f.name, RENAMED.get(f.name, f.name.replace("_", "-"))) for f in fields(cls) if f.name != "raw"
        )
    return names


@dataclass(frozen=True, repr=False)
class Response:
    """Any successful gateway response; ``raw`` is the decoded body as received."""

    raw: Mapping[str, str] = field(repr=False)
    kind: str
    serial_number: str

    @classmethod
    def from_mapping(cls, raw: Mapping[str, str]) -> Self:
        values: dict[str, Any] = {name: raw.get(wire, "") for name, wire in _wire_names(cls)}
        if "status" in values:
            values["status"] = Status.parse(values["status"])
        if "amount" in values:
            values["amount"] = _decimal(values["amount"])
        return cls(raw=dict(raw), **values)

    def get(self, name: str, default: str = "") -> str:
        """A raw field by its wire name."""
        return self.raw.get(name, default)

    def __repr__(self) -> str:
        """The fields as a dataclass shows them, card data masked (a card number typed into client_orderid)."""
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
        return mask_text(f"{type(self).__name__}({shown})")


@dataclass(frozen=True, repr=False)
class AsyncResponse(Response):
    """Acknowledgement of an asynchronous operation (``async-response``)."""

    orderid: str
    client_orderid: str
    end_point_id: str = ""
    error_message: str = ""
    error_code: str = ""


@dataclass(frozen=True, repr=False)
class FormResponse(AsyncResponse):
    """``async-form-response``: where to send the payer's browser."""

    redirect_url: str = ""


@dataclass(frozen=True, repr=False)
class StatusResponse(AsyncResponse):
    """``status-response``: the transaction as the gateway sees it now (behaviour section 3)."""

    status: Status = Status.UNKNOWN
    amount: Decimal | None = None
    currency: str = ""
    transaction_type: str = ""
    order_stage: str = ""
    html: str = field(default="", repr=False)
    redirect_to: str = ""
    descriptor: str = ""
    bin: str = ""
    last_four_digits: str = ""
    card_type: str = ""
    card_exp_month: str = ""
    card_exp_year: str = ""
    cardholder_name: str = ""
    card_ref_id: str = ""

    @property
    def is_final(self) -> bool:
        return self.status.is_final

    @property
    def needs_payer(self) -> bool:
        """The payer must act (3-D Secure): show ``html`` or send the browser to ``redirect_to``."""
        return self.status is Status.PROCESSING and bool(self.html or self.redirect_to)


@dataclass(frozen=True, repr=False)
class CardRefResponse(AsyncResponse):
    """``create-card-ref-response``: the card reference made from a transaction."""

    card_ref_id: str = ""
    status: Status = Status.UNKNOWN


@dataclass(frozen=True, repr=False)
class CardInfoResponse(Response):
    """``get-card-info-response``: holder, BIN, last four digits and expiry of a stored card (behaviour section 10).

    ``card_type`` (the brand, spec 4.3) may be absent; ``masked_pan`` is made from BIN and last four.
    """

    card_printed_name: str
    bin: str
    last_four_digits: str
    expire_year: str
    expire_month: str
    card_ref_id: str = ""
    card_type: str = ""

    @property
    def masked_pan(self) -> str:
        return f"{self.bin}******{self.last_four_digits}" if self.bin and self.last_four_digits else ""

    @property
    def missing(self) -> tuple[str, ...]:
        """The fields the gateway documents that this answer lacks (a public client library refuses those)."""
        names = ("card-printed-name", "bin", "last-four-digits", "expire-year", "expire-month")
        return tuple(name for name in names if not self.raw.get(name))


@dataclass(frozen=True, repr=False)
class RecurringPaymentResponse(Response):
    """``create-recurring-payment-response``: the new subscription's id."""

    recurring_payment_id: str
    client_orderid: str = ""


@dataclass(frozen=True, repr=False)
class EphemeralTicketResponse(Response):
    """Hosted Fields' ``create-ephemeral-ticket`` answer (hosted-fields.md 3.2): ``{"ephemeralTicket": ...}``, no
    ``type`` and no ``serial-number``.  The ticket is single use, valid 15 minutes, and safe to put in the page."""

    ephemeral_ticket: str = ""


@dataclass(frozen=True, repr=False)
class HostedSaleResponse(AsyncResponse):
    """The v4 sale's answer (hosted-fields.md 3.3): ``paynet-order-id`` comes as a JSON number (a string in every
    other answer); ``orderid`` holds its digits exactly, ``paynet_order_id`` the number."""

    @property
    def paynet_order_id(self) -> int:
        return int(self.orderid)


@dataclass(frozen=True, repr=False)
class HostedStatusResponse(StatusResponse):
    """The v4 status answer as the Hosted Fields pages read it (hosted-fields.md 3.4): ``redirect-to`` (never
    ``html``) while the payer must pass 3-D Secure; approval code, RRN and ``bank_message`` once approved;
    ``error-code`` a JSON number (kept here as its digits)."""

    approval_code: str = ""
    processor_rrn: str = ""
    bank_message: str = ""


# The models of the Hosted Fields calls (``AnswerStyle.HOSTED_FIELDS``), by response kind.
HOSTED_FIELDS_MODELS: dict[ResponseKind, type[Response]] = {
    ResponseKind.TICKET: EphemeralTicketResponse,
    ResponseKind.ASYNC: HostedSaleResponse,
    ResponseKind.STATUS: HostedStatusResponse,
}

RESPONSE_MODELS: dict[ResponseKind, type[Response]] = {
    ResponseKind.ASYNC: AsyncResponse,
    ResponseKind.FORM: FormResponse,
    ResponseKind.STATUS: StatusResponse,
    ResponseKind.CARD_REF: CardRefResponse,
    ResponseKind.CARD_INFO: CardInfoResponse,
    ResponseKind.RECURRING: RecurringPaymentResponse,
    ResponseKind.TICKET: EphemeralTicketResponse,
}
