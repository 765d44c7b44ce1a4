"""Where two runs of the same scenarios differ: A (a recording) against B (its replay on a simulator, or another
recording).

Per scenario, the merchant's steps in order (calls, and waits on an order's status): the HTTP status, the
answer's ``type``, ``status``, ``error-code`` and ``transaction-type``, the wording of ``error-message``, the
answer's field names (missing from B's, or only in it), the 3-D Secure path the waits saw; the
callbacks (how many, of which transaction and status, their fields) and the payer's redirects.  Over the run,
per operation: how long the answers took (medians) and how long orders stayed ``processing``, as finely as each
run's polls saw it (``trace.Span``: a difference the polls could not see is none).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from toolkit.drift.trace import ASSIGNED, Arrival, Call, Span, Trace, Wait

# An answer time differs when the medians are this far apart, in seconds and as a ratio (loopback noise is ms).
ANSWER_GAP, ANSWER_RATIO = 0.1, 1.5
# An order's time in ``processing`` differs when the spans its polls allow (medians of their ends) are this far
# apart, in seconds and as a ratio: the polls' resolution is in the spans, the gap is for a loaded machine.
PROCESSING_GAP, PROCESSING_RATIO = 0.25, 1.5
COMPARED = ("type", "status", "error-code", "transaction-type")
# Fields whose presence depends on the moment of a poll or on the payer, not on the gateway.
MOMENTARY = frozenset({"html", "redirect-to", "three-ds-method-url", "end-point-id"})


@dataclass(frozen=True)
class Difference:
    """One way B differs from A; ``kind`` is what ``drift.toml`` accepts by."""

    kind: str  # http-status, type, status, error-code, transaction-type, error-message, field-missing,
    # field-extra, three-ds-path, steps, callbacks, callback-fields, redirects, answer-time, processing-time
    scenario: str
    step: str  # "3. sale", "sale (median)" for the run's timings
    operation: str
    a: str  # what A had
    b: str  # what B had
    field: str = ""
    accepted: str = ""  # the drift.toml reason that accepts it
    note: str = ""  # how finely it was measured (timings)

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def compare_runs(
    one: Iterable[Trace], other: Iterable[Trace], *, answer_model: float | None = None
) -> list[Difference]:
    """Every difference of the scenarios both runs have (by name), then of the run's timings (``answer_model``:
    ``compare_timings``)."""
    a = {trace.name: trace for trace in one}
    b = {trace.name: trace for trace in other}
    found: list[Difference] = []
    for name in a:
        if name in b:
            found += compare_scenario(a[name], b[name])
        else:
            found.append(Difference("steps", name, "-", "", "the scenario", "none of that name"))
    found += compare_timings(list(a.values()), [b[name] for name in a if name in b], answer_model=answer_model)
    return found


def compare_scenario(a: Trace, b: Trace) -> list[Difference]:
    found: list[Difference] = []
    steps_a, steps_b = a.merchant_steps, b.merchant_steps
    for number, (one, other) in enumerate(zip(steps_a, steps_b, strict=False), start=1):
        found += _compare_step(a.name, f"{number}. {one.label}", one, other)
    if len(steps_a) != len(steps_b):
        found.append(
            Difference(
                "steps",
                a.name,
                "-",
                "",
                _labels(steps_a[len(steps_b) :]) or f"{len(steps_a)} steps",
                _labels(steps_b[len(steps_a) :]) or f"{len(steps_b)} steps",
            )
        )
    found += _compare_arrivals(a, b)
    return found


# What varies from run to run inside a message: addresses; then each run of word characters and hyphens, whole
# (an id, a token, a number or a word: ``_varying`` says).  Each character is looked at a bounded number of times:
# a message is linear to compare, however it is made (``a-a-a-...`` of 80 kB took 74 s with a lookahead per word).
_VARYING = re.compile(r"https?://\S+|https?%3A%2F%2F\S+|[\w-]+(?:\.\d+)*")
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
ID_LENGTH = 12  # a run this long with a digit in it is an id (a serial number, a token, a nonce)


def _varying(match: re.Match[str]) -> str:
    run = match.group()
    if run.startswith("http") and ("/" in run or "%" in run):
        return "#"  # an address
    core = run.strip("-")
    if len(core) >= ID_LENGTH and any(character.isdigit() for character in core):
        return run.replace(core, "#", 1)  # an id (its hyphens around it kept)
    return _NUMBER.sub("#", run) if len(run) < ID_LENGTH else run  # (a long run without a digit is a word)


def _worded(message: str) -> str:
    """A message as worded: what varies between runs in it (ids, tokens, addresses, numbers) left out."""
    return _VARYING.sub(_varying, message)


def _labels(steps: Iterable[Call | Wait]) -> str:
    return ", ".join(step.label for step in steps)


def _compare_step(scenario: str, where: str, one: Call | Wait, other: Call | Wait) -> list[Difference]:
    operation = one.operation
    if one.operation != other.operation:
        return [Difference("steps", scenario, where, operation, one.operation, other.operation)]
    found = []
    if one.http_status != other.http_status and one.asked_json and other.asked_json:  # (legacy form: always 200)
        found.append(
            Difference("http-status", scenario, where, operation, str(one.http_status), str(other.http_status))
        )
    answer_a, answer_b = one.answer, other.answer
    for name in COMPARED:
        if answer_a.get(name, "").lower() != answer_b.get(name, "").lower():
            found.append(Difference(name, scenario, where, operation, answer_a.get(name, ""), answer_b.get(name, "")))
    if _worded(answer_a.get("error-message", "")) != _worded(answer_b.get("error-message", "")):
        found.append(
            Difference(
                "error-message",
                scenario,
                where,
                operation,
                answer_a.get("error-message", ""),
                answer_b.get("error-message", ""),
            )
        )
    names_a, names_b = set(answer_a) - MOMENTARY, set(answer_b) - MOMENTARY
    found += [
        Difference("field-missing", scenario, where, operation, "sent", "not sent", name)
        for name in sorted(names_a - names_b)
    ]
    found += [
        Difference("field-extra", scenario, where, operation, "not sent", "sent", name)
        for name in sorted(names_b - names_a)
    ]
    if isinstance(one, Wait) and isinstance(other, Wait) and one.payer_steps != other.payer_steps:
        found.append(
            Difference(
                "three-ds-path",
                scenario,
                where,
                operation,
                " then ".join(one.payer_steps) or "none",
                " then ".join(other.payer_steps) or "none",
            )
        )
    return found


def _arrival_kinds(arrivals: list[Arrival]) -> Counter[str]:
    return Counter(f"{item.params.get('type', '-')} {item.params.get('status', '-')}" for item in arrivals)


def _compare_arrivals(a: Trace, b: Trace) -> list[Difference]:
    found: list[Difference] = []
    for kind in ("callback", "redirect"):
        got_a, got_b = a.arrivals(kind), b.arrivals(kind)
        kinds_a, kinds_b = _arrival_kinds(got_a), _arrival_kinds(got_b)
        if kinds_a != kinds_b:
            found.append(Difference(f"{kind}s", a.name, kind, "", _counted(kinds_a), _counted(kinds_b)))
        names_a = {name for item in got_a for name in item.params} - set(ASSIGNED)
        names_b = {name for item in got_b for name in item.params} - set(ASSIGNED)
        if got_a and got_b and names_a != names_b:
            found += [
                Difference(f"{kind}-fields", a.name, kind, "", "sent", "not sent", name)
                for name in sorted(names_a - names_b)
            ]
            found += [
                Difference(f"{kind}-fields", a.name, kind, "", "not sent", "sent", name)
                for name in sorted(names_b - names_a)
            ]
    return found


def _counted(kinds: Counter[str]) -> str:
    return ", ".join(f"{count} x {kind}" for kind, count in sorted(kinds.items())) or "none"


def medians(samples: Iterable[tuple[str, float]]) -> dict[str, float]:
    by_operation: dict[str, list[float]] = defaultdict(list)
    for operation, seconds in samples:
        by_operation[operation].append(seconds)
    return {operation: statistics.median(values) for operation, values in by_operation.items()}


def seconds(value: float) -> str:
    """Seconds as a report shows them: two decimals at most (``0.25``, ``3``)."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def span_text(low: float, high: float) -> str:
    return f"{seconds(low)} s" if seconds(low) == seconds(high) else f"{seconds(low)}-{seconds(high)} s"


def compare_timings(a: list[Trace], b: list[Trace], *, answer_model: float | None = None) -> list[Difference]:
    """Per operation over the run: the median answer time, and how long orders stayed processing."""
    return _answer_times(a, b, answer_model) + _processing_times(a, b)


def _answer_times(a: list[Trace], b: list[Trace], answer_model: float | None) -> list[Difference]:
    """The median answer time per operation.  ``answer_model``: the seconds the replaying simulator's settings make
    every answer wait (``answer_delay``, the median of ``answer_latency``), taken as its answer times instead of
    what the replay measured: a replay measures its own machine too, and a loaded one (a busy CI runner) answered
    a status in 0.85 s where the simulator waits 0, which is not drift."""
    med_a = medians(sample for trace in a for sample in trace.answer_times())
    med_b = medians(sample for trace in b for sample in trace.answer_times())
    note = "B's: its simulator's answer_delay" if answer_model is not None else ""
    if answer_model is not None:
        med_b = {operation: answer_model for operation in med_b}
    found = []
    for operation in sorted(set(med_a) & set(med_b)):
        one, other = med_a[operation], med_b[operation]
        low, high = sorted((max(one, 0.0), max(other, 0.0)))
        if high - low > ANSWER_GAP and high > ANSWER_RATIO * max(low, 0.001):
            found.append(Difference("answer-time", "(the run)", f"{operation} (median)", operation,
                                    f"{seconds(one)} s", f"{seconds(other)} s", note=note))  # fmt: skip
    return found


def _spans(traces: Iterable[Trace]) -> dict[str, list[Span]]:
    """The processing spans of the orders of ``traces``, by operation."""
    by_operation: dict[str, list[Span]] = defaultdict(list)
    for trace in traces:
        for span in trace.processing_spans():
            by_operation[span.operation].append(span)
    return by_operation


def _median_span(spans: list[Span]) -> tuple[float, float, float]:
    """(low, high, resolution): the medians of the spans' ends and of their widths."""
    return (statistics.median(s.low for s in spans), statistics.median(s.high for s in spans),
            statistics.median(s.resolution for s in spans))  # fmt: skip


def _processing_times(a: list[Trace], b: list[Trace]) -> list[Difference]:
    """Per operation, how long orders stayed processing: a difference only when A's span and B's are apart (a
    sandbox profile polling every 3 s sees an order decided in 0.1 s after 3 s: the same, at its resolution)."""
    spans_a, spans_b = _spans(a), _spans(b)
    found = []
    for operation in sorted(set(spans_a) & set(spans_b)):
        low_a, high_a, res_a = _median_span(spans_a[operation])
        low_b, high_b, res_b = _median_span(spans_b[operation])
        near, far = (high_b, low_a) if low_a - high_b > low_b - high_a else (high_a, low_b)
        if far - near > PROCESSING_GAP and far > PROCESSING_RATIO * max(near, 0.001):
            note = f"A's polls resolve {seconds(res_a)} s, B's {seconds(res_b)} s"
            found.append(Difference("processing-time", "(the run)", f"{operation} (median)", operation,
                                    span_text(low_a, high_a), span_text(low_b, high_b), note=note))  # fmt: skip
    return found
