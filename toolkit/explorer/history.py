"""What the explorer's last action showed (``Result``); the records of what was done are
``toolkit.exporter.records`` (``Tracked``, ``Action``), which the exporter reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from toolkit.display.html import Tone, tone_of
from toolkit.display.views import decoded_answer
from toolkit.exchange import Exchange
from toolkit.exporter.records import (
    GATEWAY_RUN,
    HOSTED_FIELDS,
    MERCHANT_RUN,
    METHOD_LAPSED,
    PAYER_CHALLENGE,
    PAYER_HOSTED,
    PAYER_METHOD,
    PAYER_STATUS_PAGE,
    PAYER_TOKENIZE,
    ROADS,
    Action,
    Tracked,
)
from toolkit.models import StatusResponse

__all__ = [
    "GATEWAY_RUN",
    "HOSTED_FIELDS",
    "MERCHANT_RUN",
    "METHOD_LAPSED",
    "PAYER_CHALLENGE",
    "PAYER_HOSTED",
    "PAYER_METHOD",
    "PAYER_STATUS_PAGE",
    "PAYER_TOKENIZE",
    "ROADS",
    "Action",
    "Result",
    "Tracked",
]


@dataclass(frozen=True)
class Result:
    """What the last action showed: its requests (masked), the answer, the order's status, or why not."""

    title: str
    ok: bool
    message: str = ""
    exchanges: tuple[Exchange, ...] = ()
    status: StatusResponse | None = None
    problems: tuple[str, ...] = field(default=())

    @property
    def tone(self) -> Tone:
        """The colour of the outcome: red when refused or declined, amber while processing, green when approved."""
        if not self.ok:
            return "bad"
        return tone_of(self.status.status.value) if self.status is not None else "ok"

    @property
    def exchange(self) -> Exchange | None:
        """The main request of the action (the first one that is not a status poll)."""
        main = [e for e in self.exchanges if e.operation not in ("status", "status_v4")] or list(self.exchanges)
        return main[0] if main else None

    @property
    def response(self) -> dict[str, str]:
        """The decoded (masked) answer to the main request."""
        return decoded_answer(self.exchange) if self.exchange is not None else {}
