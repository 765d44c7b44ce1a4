"""Where two runs of the same scenarios differ: the sandbox (``a``) against the simulator (``b``).

Per scenario, the merchant's steps in order (calls, and waits on an order's status): the HTTP status, the
answer's ``type``, ``status``, ``error-code`` and ``transaction-type``, the wording of ``error-message``, the
answer's field names (missing from the simulator's, or only in it), the 3-D Secure path the waits saw; the
callbacks (how many, of which transaction and status, their fields) and the payer's redirects.  Over the run,
per operation: how long the answers took and how long orders stayed ``processing`` (medians).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from toolkit.drift.trace import ASSIGNED, Arrival, Call, Trace, Wait

# An answer time differs when the medians are this far apart, in seconds and as a ratio (loopback noise is ms).
ANSWER_GAP, ANSWER_RATIO = 0.1, 1.5
# An order's time in ``processing`` differs when the medians are this far apart (polls make it coarse).
PROCESSING_GAP, PROCESSING_RATIO = 0.5, 1.5
COMPARED = ("type", "status", "error-code", "transaction-type")
# Fields whose presence depends on the moment of a poll or on the payer, not on the gateway.
MOMENTARY = frozenset({"html", "redirect-to", "three-ds-method-url", "end-point-id"})


@dataclass(frozen=True)
class Difference:
    """One way the simulator differs from the sandbox; ``kind`` is what ``drift.toml`` accepts by."""

    kind: str  # http-status, type, status, error-code, transaction-type, error-message, field-missing,
    # field-extra, three-ds-path, steps, callbacks, callback-fields, redirects, answer-time, processing-time
    scenario: str
    step: str  # "3. sale", "run" for the run's timings
    operation: str
    sandbox: str
    simulator: str
    field: str = ""
    accepted: str = ""  # the drift.toml reason that accepts it

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def compare_runs(
    sandbox: Iterable[Trace], simulator: Iterable[Trace], *, answer_model: float | None = None
) -> list[Difference]:
    """Every difference of the scenarios both runs have (by name), then of the run's timings (``answer_model``:
    ``compare_timings``)."""
    a = {trace.name: trace for trace in sandbox}
    b = {trace.name: trace for trace in simulator}
    found: list[Difference] = []
    for name in a:
        if name in b:
            found += compare_scenario(a[name], b[name])
        else:
            found.append(Difference("steps", name, "-", "", "recorded", "not replayed"))
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


def compare_timings(a: list[Trace], b: list[Trace], *, answer_model: float | None = None) -> list[Difference]:
    """Per operation over the run: the median answer time, the median time an order stayed processing.

    ``answer_model``: the seconds the replaying simulator's settings make every answer wait (``answer_delay``,
    the median of ``answer_latency``), taken as its answer times instead of what the replay measured: a replay
    measures its own machine too, and a loaded one (a busy CI runner) answered a status in 0.85 s where the
    simulator waits 0, which is not drift."""
    found = []
    kinds = (
        ("answer-time", "answer_times", ANSWER_GAP, ANSWER_RATIO),
        ("processing-time", "processing_times", PROCESSING_GAP, PROCESSING_RATIO),
    )
    for kind, measure, gap, ratio in kinds:
        med_a = medians(sample for trace in a for sample in getattr(trace, measure)())
        med_b = medians(sample for trace in b for sample in getattr(trace, measure)())
        if kind == "answer-time" and answer_model is not None:
            med_b = {operation: answer_model for operation in med_b}
        for operation in sorted(set(med_a) & set(med_b)):
            one, other = med_a[operation], med_b[operation]
            low, high = sorted((max(one, 0.0), max(other, 0.0)))
            if high - low > gap and high > ratio * max(low, 0.001):
                found.append(
                    Difference(kind, "(the run)", f"{operation} (median)", operation, f"{one:.3f} s", f"{other:.3f} s")
                )
    return found
