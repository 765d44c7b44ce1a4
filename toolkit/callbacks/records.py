"""What the receiver records: one frozen ``Received`` per arrival, card data already masked.

Behaviour section 4: the gateway calls ``server_callback_url`` with a GET whose query carries
``status``, ``orderid``, ``merchant_order``, ``client_orderid``, ``type``, ``amount``, ...,
masked card fields and ``control``; "callbacks can arrive more than once; merchants de-duplicate
on (orderid, type, status)".  Behaviour section 5: the payer's browser POSTs the same kind of
parameters (no ``type``) to ``redirect_url``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from toolkit.masking import mask_value

Kind = Literal["callback", "redirect"]
CALLBACK: Kind = "callback"
REDIRECT: Kind = "redirect"

# The gateway's identifiers, checksums and signed 3-D Secure tokens are never free text: a run of digits
# inside a base64url CRes/PaRes may pass the Luhn check, and masking would corrupt it.  The merchant's own
# client_orderid (and its echo, merchant_order) is free text: a card number typed into it is masked.
_NOT_FREE_TEXT = frozenset(
    {"orderid", "control", "amount", "currency", "status", "type", "cardrefid", "cres", "pares", "md"}
)  # fmt: skip


def _mask_one(name: str, value: str) -> str:
    if name in _NOT_FREE_TEXT:
        return value
    return mask_value(name, value)


def mask_params(params: Mapping[str, str]) -> dict[str, str]:
    """Card data masked by field name (``toolkit.masking``), and any card number in free text."""
    return {name: _mask_one(name, value) for name, value in params.items()}


@dataclass(frozen=True)
class Received:
    """One callback or redirect as it arrived; ``params`` are masked.

    ``control_ok`` is None when the receiver has no control key.  ``received_at`` is
    ``time.monotonic()`` (for durations), ``received_wall`` the UTC wall clock (for reports).
    ``answered`` is the HTTP status the receiver answered (non-200 makes the gateway retry).
    ``duplicate``: an earlier arrival with the same (orderid, type, status) was answered 200.
    ``url``: where it arrived (the receiver's address and ``path``, masked); "" in records made by hand.
    """

    kind: Kind
    method: str
    path: str
    params: dict[str, str] = field(hash=False)
    control_ok: bool | None
    received_at: float
    received_wall: datetime
    duplicate: bool = False
    answered: int = 200
    delayed: float = 0.0
    url: str = ""

    @property
    def orderid(self) -> str:
        return self.params.get("orderid", "")

    @property
    def client_orderid(self) -> str:
        """The merchant's order id: ``client_orderid``, or ``merchant_order`` where only that is sent (the Hosted
        Fields return after 3-D Secure, hosted-fields.md section 8)."""
        return client_orderid_of(self.params)

    @property
    def status(self) -> str:
        return self.params.get("status", "")

    @property
    def type(self) -> str:
        return self.params.get("type", "")

    @property
    def dedupe_key(self) -> tuple[str, str, str, str]:
        """(kind, orderid, type, status); client_orderid stands in when orderid is missing."""
        return (self.kind, self.orderid or self.client_orderid, self.type, self.status.lower())

    def matches(
        self,
        *,
        orderid: str | None = None,
        client_orderid: str | None = None,
        status: str | None = None,
        type: str | None = None,
    ) -> bool:
        """True when every given criterion holds (none given: always); ``type`` is the transaction's."""
        return (
            (orderid is None or self.orderid == str(orderid))
            and (client_orderid is None or self.client_orderid == _mask_one("client_orderid", client_orderid))
            and (status is None or self.status.lower() == str(status).lower())
            and (type is None or self.type == type)
        )

    def summary(self) -> str:
        """``callback orderid=8056020 client_orderid=inv-1 status=approved (answered 500)``."""
        extra = " duplicate" if self.duplicate else ""
        answered = f" (answered {self.answered})" if self.answered != 200 else ""
        kind = f" type={self.type}" if self.type else ""
        return (
            f"{self.kind} orderid={self.orderid or '-'} client_orderid={self.client_orderid or '-'}{kind} "
            f"status={self.status or '-'}{extra}{answered}"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (masked params, wall clock in ISO 8601)."""
        return {
            "kind": self.kind,
            "method": self.method,
            "path": self.path,
            "params": dict(self.params),
            "control_ok": self.control_ok,
            "duplicate": self.duplicate,
            "answered": self.answered,
            "delayed": self.delayed,
            "received_at": self.received_wall.isoformat(),
        }


def client_orderid_of(params: Mapping[str, str]) -> str:
    """The merchant's order id of a callback or redirect: ``client_orderid``, or ``merchant_order`` where only that
    is sent (the Hosted Fields return after 3-D Secure, hosted-fields.md section 8)."""
    return params.get("client_orderid") or params.get("merchant_order", "")
