"""The results of a load run a person can read: ``summary.md`` (for CI, like certify's) and ``results.json``.

Built from Locust's statistics (``toolkit.load.users`` names them: ``flow``, ``gateway``, ``payer`` and
``callback`` requests) by plain functions over ``Row`` and ``Failure`` records, so nothing here imports Locust.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from toolkit.load.flows import KINDS

SECTIONS = (("flow", "Flows"), ("gateway", "Gateway operations"), ("payer", "Payer pages"))
_KIND = re.compile(r"^(?:\w+\(['\"])?(?P<kind>[a-z-]+): (?P<reason>.*?)(?:['\"]\))?$", re.DOTALL)


@dataclass(frozen=True)
class Row:
    """One line of Locust's statistics: requests of one type and name."""

    type: str
    name: str
    requests: int
    failures: int
    rate: float  # per second, over the run
    p50: float  # milliseconds
    p95: float
    p99: float


@dataclass(frozen=True)
class Failure:
    type: str
    name: str
    kind: str
    reason: str
    count: int


def failure_of(type_: str, name: str, error: str, count: int) -> Failure:
    """Locust's failure (``LoadFailure('declined: ...')``, as Locust writes an exception) as kind and reason."""
    match = _KIND.match(error.strip())
    kind = match.group("kind") if match and match.group("kind") in KINDS else "other"
    reason = match.group("reason") if match and kind != "other" else error
    return Failure(type_, name, kind, reason, count)


@dataclass(frozen=True)
class Results:
    target: str
    users: int
    seconds: float
    rows: tuple[Row, ...]
    failures: tuple[Failure, ...]
    workers: int = 0
    interrupted: bool = False  # stopped by Ctrl-C or SIGTERM before its end (``toolkit.load.ending``)

    def of(self, type_: str) -> list[Row]:
        return sorted((row for row in self.rows if row.type == type_), key=lambda row: -row.requests)

    def count(self, type_: str, name: str) -> int:
        return sum(row.requests for row in self.rows if row.type == type_ and row.name == name)

    @property
    def callbacks(self) -> dict[str, int]:
        received, lost = self.count("callback", "received"), self.count("callback", "lost")
        return {"expected": received + lost, "received": received, "lost": lost,
                "duplicates": self.count("callback", "duplicate")}  # fmt: skip

    def by_kind(self) -> dict[str, int]:
        """Failures of the flows, gateway requests and payer pages, and of callbacks, by kind."""
        counts: dict[str, int] = {}
        for failure in self.failures:
            counts[failure.kind] = counts.get(failure.kind, 0) + failure.count
        return {kind: counts[kind] for kind in (*KINDS, "other") if kind in counts}

    @property
    def verdict(self) -> str:
        """INTERRUPTED (whatever ran), else FAILURES when a flow failed or a callback was lost or duplicated,
        else PASS."""
        if self.interrupted:
            return "INTERRUPTED"
        callbacks = self.callbacks
        failed = sum(row.failures for row in self.of("flow")) + callbacks["lost"] + callbacks["duplicates"]
        return "FAILURES" if failed else "PASS"

    def as_json(self) -> str:
        data = {**asdict(self), "verdict": self.verdict, "callbacks": self.callbacks,
                "failures_by_kind": self.by_kind()}  # fmt: skip
        return json.dumps(data, indent=2, sort_keys=True)


def _ms(value: float) -> str:
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}"


HEAD_RULE = "|---|---:|---:|---:|---:|---:|---:|"
INTERRUPTED_NOTE = (
    "Interrupted (Ctrl-C or SIGTERM) before its end: the users were stopped first, their flows in progress are "
    "not counted; the figures cover what finished."
)


def _table(rows: Iterable[Row], noun: str) -> list[str]:
    lines = [
        f"| {noun} | requests | failed | per second | p50 ms | p95 ms | p99 ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        share = f" ({row.failures / row.requests:.1%})" if row.failures and row.requests else ""
        lines.append(f"| {row.name} | {row.requests} | {row.failures}{share} | {row.rate:.1f} | {_ms(row.p50)} | "
                     f"{_ms(row.p95)} | {_ms(row.p99)} |")  # fmt: skip
    return lines


def summary_markdown(results: Results) -> str:
    """The Markdown summary: what ran, per flow, per operation and per page, the callbacks, failures by kind."""
    flows = results.of("flow")
    done = sum(row.requests for row in flows)
    failed = sum(row.failures for row in flows)
    callbacks = results.callbacks
    workers = f", {results.workers} Locust workers" if results.workers else ""
    lines = [f"# gatekit load: {results.verdict}", ""]
    if results.interrupted:
        lines += [INTERRUPTED_NOTE, ""]
    lines += [
        f"Target {results.target}: {results.users} users{workers}, {results.seconds:.0f} s; "
        f"{done} flows ({done / results.seconds if results.seconds else 0:.1f}/s), {failed} failed.",
        "",
        f"Callbacks: {callbacks['received']} received of {callbacks['expected']} expected, "
        f"{callbacks['lost']} lost, {callbacks['duplicates']} duplicated.",
    ]
    for type_, title in SECTIONS:
        rows = results.of(type_)
        if rows:
            lines += ["", f"## {title}", "", *_table(rows, title.split()[-1].rstrip("s").lower())]
    kinds = results.by_kind()
    if kinds:
        lines += ["", "## Failures by kind", "", "| kind | count | first reasons |", "|---|---:|---|"]
        for kind, count in kinds.items():
            reasons = sorted((f for f in results.failures if f.kind == kind), key=lambda f: -f.count)[:3]
            shown = "; ".join(f"{f.type} {f.name}: {f.reason} ({f.count})" for f in reasons)
            lines.append(f"| {kind} | {count} | {shown.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def write(results: Results, folder: Path) -> Path:
    """``summary.md`` and ``results.json`` in ``folder``; the summary's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(results.as_json())
    summary = folder / "summary.md"
    summary.write_text(summary_markdown(results))
    return summary
