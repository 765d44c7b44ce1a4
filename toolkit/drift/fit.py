"""A ``[simulator]`` section fitted to what drift found of A: taught to the simulator (``[profiles.NAME.simulator]``
of gatekit.toml, or ``gatekit simulate --config``), it answers as A did, and the next drift is clean.

Each figure says how well the recording knows it:

- ``latency``: the middle of the span in which A decided its orders, as finely as its polls and callbacks saw them:
  the span all its orders allow (a late callback or poll of a busy machine only widens one order's), over the orders
  no payer acted on (a payer's time is not the gateway's); the medians of the spans when the orders disagree;
- ``answer_delay``: A's answer time (the median of its operations' medians; the simulator's own is milliseconds);
- ``omit_fields``: the fields B sent and A never did;
- ``[simulator.outcomes]``: per CVV2, the outcome A gave its orders where B's differed (every order of that CVV2).

Figures are rounded to 50 ms.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolkit.drift.compare import Difference, _worded, medians, seconds, span_text
from toolkit.drift.shown import value
from toolkit.drift.trace import FINAL, Call, PayerStep, Trace, Wait
from toolkit.masking import CVV_MASK

STEP = 0.05  # seconds: the figures are rounded to this


@dataclass
class Fitted:
    """The fitted settings (as ``[simulator]`` holds them) and, per setting, how the recording knows it."""

    settings: dict[str, Any] = field(default_factory=dict)
    said: dict[str, str] = field(default_factory=dict)


def fit(a: Sequence[Trace], b: Sequence[Trace], differences: Sequence[Difference], latency_now: float) -> Fitted:
    """The settings that make a simulator answer as ``a`` did (``b``: the same scenarios elsewhere, for the outcomes
    that differed; ``latency_now``: the latency kept when no order of ``a`` tells it)."""
    fitted = Fitted()
    _latency(fitted, a, latency_now)
    _answer_delay(fitted, a)
    _omitted(fitted, a, differences)
    _outcomes(fitted, a, b)
    return fitted


def _rounded(value: float) -> float:
    return round(round(max(value, 0.0) / STEP) * STEP, 2)


def _latency(fitted: Fitted, a: Sequence[Trace], latency_now: float) -> None:
    spans = [span for trace in a for span in trace.processing_spans() if not span.payer]
    if not spans:
        fitted.settings["latency"] = latency_now
        fitted.said["latency"] = "no order of A was seen decided without its payer: the replay's, as it was"
        return
    low, high = max(s.low for s in spans), min(s.high for s in spans)
    allowed = "the span it allows" if len(spans) == 1 else "the span they all allow"
    if low > high:  # (orders that disagree: a gateway whose latency varies)
        low, high = statistics.median(s.low for s in spans), statistics.median(s.high for s in spans)
        allowed = "the medians of their spans"
    resolution = statistics.median(s.resolution for s in spans)
    orders = f"{len(spans)} order{'s' if len(spans) > 1 else ''}"
    fitted.settings["latency"] = _rounded((low + high) / 2)
    fitted.said["latency"] = (
        f"A decided its orders {seconds(low)}-{seconds(high)} s after answering them ({orders} without a payer step: "
        f"{allowed}; each one's polls and callbacks resolve {seconds(resolution)} s, median): the middle, rounded to "
        f"{STEP:g} s"
    )


def _answer_delay(fitted: Fitted, a: Sequence[Trace]) -> None:
    answers = [sample for trace in a for sample in trace.answer_times()]
    by_operation = medians(answers)
    if not by_operation:
        return
    median = statistics.median(by_operation.values())
    spread = span_text(min(by_operation.values()), max(by_operation.values()))
    fitted.settings["answer_delay"] = _rounded(median)
    fitted.said["answer_delay"] = (
        f"A answered in {seconds(median)} s (the median of {len(by_operation)} operations' medians, {spread}; "
        f"{len(answers)} answers), rounded to {STEP:g} s"
    )


def _omitted(fitted: Fitted, a: Sequence[Trace], differences: Sequence[Difference]) -> None:
    sent = {name for trace in a for step in trace.merchant_steps for name in _answers_fields(step)}
    extra = [d for d in differences if d.kind == "field-extra" and d.field not in sent]
    names = sorted({d.field for d in extra})
    if names:
        fitted.settings["omit_fields"] = names
        fitted.said["omit_fields"] = f"fields A never sent where B did ({len(extra)} answers)"


def _answers_fields(step: Call | Wait) -> set[str]:
    if isinstance(step, Wait):
        return {name for _, answer, _, _ in step.polls for name in answer}
    return set(step.answer)


def _outcomes(fitted: Fitted, a: Sequence[Trace], b: Sequence[Trace]) -> None:
    """Per test CVV2, A's outcome where every order of that CVV2 ended otherwise on B and alike on A (an order's
    first final status: what its card decided, not a later capture's)."""
    seen: dict[str, set[tuple[str, str, str] | None]] = defaultdict(set)  # CVV2 -> A's outcomes (None: as B's)
    others = {trace.name: trace for trace in b}
    for trace in a:
        if trace.name not in others:
            continue
        decided: set[str] = set()
        cvv2s = _cvv2s(trace)
        for one, other in zip(trace.merchant_steps, others[trace.name].merchant_steps, strict=False):
            ours, theirs = _outcome(one), _outcome(other)
            orderid = one.answer.get("paynet-order-id", "")
            cvv2 = cvv2s.get(orderid, "")
            if ours is None or theirs is None or not cvv2 or orderid in decided:
                continue
            decided.add(orderid)
            same = (ours[0], ours[1], _worded(ours[2])) == (theirs[0], theirs[1], _worded(theirs[2]))
            seen[cvv2].add(None if same else ours)
    rows = {cvv2: next(iter(outcomes)) for cvv2, outcomes in sorted(seen.items()) if len(outcomes) == 1}
    table = {cvv2: _row(*outcome) for cvv2, outcome in rows.items() if outcome is not None}
    if table:
        fitted.settings["outcomes"] = table
        orders = sum(1 for trace in a for step in trace.merchant_steps if isinstance(step, Wait))
        fitted.said["outcomes"] = f"the CVV2s whose orders A ended otherwise than B (of {orders} waits compared)"


def _outcome(step: Call | Wait) -> tuple[str, str, str] | None:
    """(status, error-code, error-message) of a final status, None for anything else."""
    answer = step.answer
    if answer.get("status") not in FINAL:
        return None
    return answer["status"], answer.get("error-code", ""), answer.get("error-message", "")


def _cvv2s(trace: Trace) -> dict[str, str]:
    """Per orderid, the test CVV2 its order was paid with: its request's, or what the payer typed next."""
    found: dict[str, str] = {}
    last = ""
    for step in trace.steps:
        if isinstance(step, Call) and step.answer.get("paynet-order-id"):
            last = step.answer["paynet-order-id"]
            found.setdefault(last, step.fields.get("cvv2", ""))
        elif isinstance(step, PayerStep) and last and not found.get(last):
            card = step.action.get("card")
            found[last] = str(card.get("cvv2", "")) if isinstance(card, dict) else ""
    return {orderid: cvv2 for orderid, cvv2 in found.items() if _chooses(cvv2)}


def _chooses(cvv2: str) -> bool:
    """A CVV2 that may choose an outcome: 3 or 4 digits, as a recording keeps the test values (not masked)."""
    return cvv2.isascii() and cvv2.isdigit() and len(cvv2) in (3, 4) and cvv2 != CVV_MASK


def _row(status: str, code: str, message: str) -> dict[str, str]:
    row = {"status": status}
    if code:
        row["error_code"] = value(code)
    if message:
        row["error_message"] = value(message)
    return row


def settings_toml(fitted: Fitted) -> list[str]:
    """The ``[simulator]`` section, each figure after what it rests on (a comment), and its
    ``[simulator.outcomes]``."""
    lines = ["[simulator]"]
    for name, setting in fitted.settings.items():
        if name != "outcomes":
            lines += [f"# {_comment(fitted.said.get(name, ''))}", _assignment(name, setting)]
    outcomes = fitted.settings.get("outcomes")
    if outcomes:
        lines += ["", "# " + _comment(fitted.said.get("outcomes", "")), "[simulator.outcomes]"]
        for cvv2, row in outcomes.items():
            cells = ", ".join(f"{key} = {json.dumps(text)}" for key, text in row.items())
            lines.append(f"{json.dumps(cvv2)} = {{ {cells} }}")
    return lines


def _assignment(name: str, setting: Any) -> str:
    shown = json.dumps(setting) if isinstance(setting, list) else f"{setting:g}"
    return f"{name} = {shown}"


def _comment(text: str) -> str:
    return " ".join(text.split())  # (one line)


__all__ = ["Fitted", "fit", "settings_toml"]
