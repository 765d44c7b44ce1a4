"""The parts of a sequence diagram: lanes (who takes part) and arrows (one exchange each), as plain data.

Lanes, left to right: the merchant's back end, the gateway, the issuer's ACS (3-D Secure pages), the
payer's browser, and the merchant's callback endpoint (server callbacks and the payer's redirect
land there).  An ``Arrow`` carries what it says already masked: the records it is made from are.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

Lane = Literal["merchant", "gateway", "acs", "payer", "endpoint"]
Tone = Literal["ok", "bad", "wait", "plain"]
LANES: dict[Lane, str] = {
    "merchant": "merchant",
    "gateway": "gateway",
    "acs": "ACS (3-D Secure)",
    "payer": "payer's browser",
    "endpoint": "merchant's callback endpoint",
}
ALWAYS: tuple[Lane, ...] = ("merchant", "gateway")
APPROVED, REFUSED, PENDING = (
    frozenset({"approved"}),
    frozenset({"declined", "filtered", "error"}),
    frozenset({"processing", "unknown"}),
)


@dataclass(frozen=True)
class Arrow:
    """One exchange: who called whom, what (``label``), with what result (``outcome``), when and how long.

    ``at`` is when it started (UTC; None keeps the arrow where it was given), ``elapsed`` its duration in
    seconds (None when unknown), ``count`` how many identical exchanges in a row it stands for (status polls).
    """

    source: Lane
    target: Lane
    label: str
    outcome: str
    tone: Tone = "plain"
    at: datetime | None = None
    elapsed: float | None = None
    count: int = 1
    orderid: str = ""

    @property
    def timing(self) -> str:
        """``12 ms``, ``1.24 s``, or "" when unknown."""
        if self.elapsed is None:
            return ""
        return f"{self.elapsed * 1000:.0f} ms" if self.elapsed < 1 else f"{self.elapsed:.2f} s"

    @property
    def title(self) -> str:
        """The label with its repeat count: ``status ×3``."""
        return self.label + (f" ×{self.count}" if self.count > 1 else "")

    def same_as(self, other: Arrow) -> bool:
        """Whether ``other`` repeats this exchange (same parties, label and outcome): polls collapse."""
        return (self.source, self.target, self.label, self.outcome) == (
            other.source,
            other.target,
            other.label,
            other.outcome,
        )


def tone_of_status(status: str) -> Tone:
    """The colour a gateway status gets: approved green, declined / filtered / error red, processing amber."""
    value = status.strip().lower()
    if value in APPROVED:
        return "ok"
    if value in REFUSED:
        return "bad"
    return "wait" if value in PENDING else "plain"


def lanes_of(arrows: list[Arrow]) -> list[Lane]:
    """The lanes the arrows use (merchant and gateway always), in the fixed left-to-right order."""
    used = {lane for arrow in arrows for lane in (arrow.source, arrow.target)} | set(ALWAYS)
    return [lane for lane in LANES if lane in used]


def collapse(arrows: list[Arrow]) -> list[Arrow]:
    """Consecutive identical exchanges (status polls saying the same) become one arrow with a count."""
    out: list[Arrow] = []
    for arrow in arrows:
        if out and out[-1].same_as(arrow):
            last = out[-1]
            total = None if last.elapsed is None or arrow.elapsed is None else last.elapsed + arrow.elapsed
            out[-1] = Arrow(
                last.source, last.target, last.label, last.outcome, last.tone, last.at, total, last.count + 1,
                last.orderid,
            )  # fmt: skip
        else:
            out.append(arrow)
    return out


def in_time_order(arrows: list[Arrow]) -> list[Arrow]:
    """Sorted by start time to the millisecond (what a recording keeps: live records and the same records read
    back from it come out in one order); arrows of one millisecond, and an arrow without a time, stay in the
    order given (one without a time right after the arrow given before it)."""
    keyed: list[tuple[float, int, Arrow]] = []
    last = float("-inf")
    for index, arrow in enumerate(arrows):
        last = int(arrow.at.timestamp()) * 1000 + arrow.at.microsecond // 1000 if arrow.at is not None else last
        keyed.append((last, index, arrow))
    return [arrow for _, _, arrow in sorted(keyed, key=lambda item: (item[0], item[1]))]
