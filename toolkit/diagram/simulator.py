"""Arrows from the simulator's own records, as its control API returns them (``toolkit.SimulatorControl``).

- ``/_sim/journal`` entries: the merchant's requests (operation, HTTP status, answer type, error);
- ``/_sim/callbacks`` deliveries: every attempt of every callback (HTTP status or error, duration);
- ``/_sim/orders/{orderid}``: the 3-D Secure steps of the payer (``method_loaded_at``,
  ``acs_answered_at``), the gateway's own hops when it runs 3-D Secure (``gateway_continued_at``,
  ``gateway_applied_at``) and the order's transactions.

Times are the simulator's clock (epoch seconds).  The journal and the deliveries are masked by the
simulator; labels are masked once more here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from toolkit.diagram.model import Arrow, Lane, Tone, collapse, in_time_order, tone_of_status
from toolkit.diagram.records import money_of
from toolkit.masking import mask_text

JSON = Mapping[str, Any]
PAYER_STEPS: tuple[tuple[str, Lane, str, str], ...] = (
    ("method_loaded_at", "acs", "load the 3-D Secure method URL", "the method step done"),
    ("gateway_continued_at", "gateway", "the page goes on to the gateway", "the gateway applies the method result"),
    ("acs_answered_at", "acs", "answer the ACS page", "answered"),
    ("gateway_applied_at", "gateway", "back from the ACS with its result", "the gateway applies it"),
)


def _when(seconds: Any) -> datetime | None:
    return datetime.fromtimestamp(float(seconds), UTC) if isinstance(seconds, (int, float)) else None


def concerns(entry: JSON, orderid: str) -> bool:
    """A journal entry about this order: answered with its orderid, or naming it in the request."""
    fields = entry.get("fields") or {}
    return orderid in (str(entry.get("orderid", "")), str(fields.get("orderid", "")))


def journal_arrow(entry: JSON) -> Arrow:
    fields = entry.get("fields") or {}
    money = money_of(str(entry.get("operation", "")), dict(fields))
    status = int(entry.get("http_status", 0))
    kind = str(entry.get("response_type", ""))
    error = str(entry.get("error", ""))
    tone: Tone = "bad" if status >= 400 or error or kind in ("validation-error", "error") else "plain"
    outcome = f"HTTP {status} · {kind}" + (f": {error[:60]}" if error else "")
    label = mask_text(str(entry.get("operation", "?")) + money)
    return Arrow("merchant", "gateway", label, mask_text(outcome), tone, _when(entry.get("at")), None, 1,
                 str(entry.get("orderid", "")))  # fmt: skip


def delivery_arrows(delivery: JSON) -> list[Arrow]:
    """One arrow per attempt: ``callback sale approved``, then ``(retry 1)``, ``(retry 2)``..."""
    params = delivery.get("params") or {}
    name = f"callback {params.get('type', '')} {params.get('status', '-')}".replace("  ", " ")
    arrows = []
    for tries, attempt in enumerate(delivery.get("attempts") or ()):
        answered = attempt.get("http_status")
        delivered = answered is not None and 200 <= int(answered) < 300
        outcome = f"answered {answered}" if answered is not None else f"no answer: {attempt.get('error', '')[:60]}"
        tone = tone_of_status(str(params.get("status", ""))) if delivered else "bad"
        label = mask_text(name + (f" (retry {tries})" if tries else ""))
        elapsed = attempt.get("elapsed")
        arrows.append(
            Arrow("gateway", "endpoint", label, mask_text(outcome), tone, _when(attempt.get("at")),
                  float(elapsed) if isinstance(elapsed, (int, float)) else None, 1, str(delivery.get("orderid", "")))
        )  # fmt: skip
    if delivery.get("state") == "pending" and delivery.get("next_at"):
        arrows.append(Arrow("gateway", "endpoint", mask_text(name + " (next try due)"), "pending", "wait",
                            _when(delivery["next_at"])))  # fmt: skip
    return arrows


def payer_arrows(order: JSON) -> list[Arrow]:
    """The payer's 3-D Secure steps the simulator saw (the ACS pages are the simulator's), and the gateway's own
    hops on the gateway-run road (behaviour 12)."""
    arrows = []
    for tx in order.get("transactions") or ():
        extra = tx.get("extra") or {}
        for key, lane, step, shows in PAYER_STEPS:
            if key in extra:
                arrows.append(
                    Arrow("payer", lane, step, shows, "plain", _when(extra[key]), None, 1, str(tx["orderid"]))
                )
    return arrows


def arrows_from_simulator(
    journal: Iterable[JSON], deliveries: Iterable[JSON], order: JSON | None = None, *, orderid: str | None = None
) -> list[Arrow]:
    """The order's arrows (``orderid``, else every entry given), in time order, repeated polls collapsed."""
    entries = [e for e in journal if orderid is None or concerns(e, orderid)]
    arrows = [journal_arrow(e) for e in entries]
    arrows += [arrow for delivery in deliveries for arrow in delivery_arrows(delivery)]
    arrows += payer_arrows(order or {})
    return collapse(in_time_order(arrows))
