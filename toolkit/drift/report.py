"""What ``gatekit drift`` shows: a table for the terminal, Markdown for CI summaries, a standalone HTML page and
JSON; and a ``[simulator]`` section fitted to the sandbox's timings.

Every value that comes from a recording (names, operations, fields, answers' words, notes) goes through
``shown``: masked, cut, and escaped for the terminal, Markdown or HTML it is written to; the JSON is ASCII.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.drift.compare import (
    ANSWER_GAP,
    ANSWER_RATIO,
    PROCESSING_GAP,
    PROCESSING_RATIO,
    Difference,
    medians,
)
from toolkit.drift.shown import html_text, markdown_code, markdown_fence, terminal, value
from toolkit.drift.trace import Trace

COLUMNS = ("kind", "scenario", "step", "field", "sandbox", "simulator", "accepted")
# What a drift report cannot say, whatever the recordings: printed with every report.
LIMITS = (
    "the sandbox's pages are not compared: the replay's payer does what the recorded one did, on the simulator's "
    "pages (a page the payer cannot read fails the sandbox run itself)",
    "callbacks are compared by count, type and fields, not by when they came or how often they were retried",
    f"timings differ only beyond {ANSWER_GAP:g} s and {ANSWER_RATIO:g}x (answers) or {PROCESSING_GAP:g} s and "
    f"{PROCESSING_RATIO:g}x (processing), medians per operation: a single slow answer is not drift; a replay's "
    "answer times are those its simulator's settings give (answer_delay, answer_latency), not what the replay "
    "measured on this machine (a busy machine is not drift)",
    "@simulator scenarios are not replayed (they drive the simulator's control API)",
)


@dataclass
class DriftReport:
    """The differences (accepted ones with their reason), what was not compared, and the fitted settings."""

    sandbox: str  # what ``a`` was (a recording's folder)
    simulator: str  # what ``b`` was
    differences: list[Difference]
    scenarios: int
    skipped: dict[str, str] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)
    suggested: dict[str, float] = field(default_factory=dict)
    folders: tuple[str, str] = ("", "")  # the two recordings compared: the sandbox's, the simulator's (a replay)

    @property
    def scenario_names(self) -> list[str]:
        """The scenarios compared, in the order the sandbox's recording has them."""
        from toolkit.recording import read_index

        skipped = set(self.skipped)
        return [s["name"] for s in read_index(Path(self.folders[0]))["scenarios"] if s["name"] not in skipped]

    @property
    def open(self) -> list[Difference]:
        return [difference for difference in self.differences if not difference.accepted]

    @property
    def verdict(self) -> str:
        if self.open:
            return f"{len(self.open)} differences not accepted"
        accepted = len(self.differences)
        return f"no difference not accepted ({accepted} accepted)" if accepted else "no difference"

    def as_json(self) -> dict[str, Any]:
        """The report as data (values masked and cut as every report shows them)."""
        return {
            "sandbox": value(self.sandbox),
            "simulator": value(self.simulator),
            "scenarios": self.scenarios,
            "verdict": self.verdict,
            "differences": [
                {key: value(text) for key, text in difference.as_dict().items()} for difference in self.differences
            ],
            "skipped": {value(name): value(why) for name, why in self.skipped.items()},
            "notes": {value(name): [value(note) for note in notes] for name, notes in self.notes.items()},
            "suggested_simulator_settings": self.suggested,
            "limits": list(LIMITS),
        }


def fitted_settings(sandbox: Sequence[Trace], simulator: Sequence[Trace], latency_now: float) -> dict[str, float]:
    """``latency`` (how long the sandbox keeps an order ``processing``, its median) and ``answer_delay`` (how
    much slower its answers are than the simulator's), rounded to 50 ms."""
    processing = list(medians(s for trace in sandbox for s in trace.processing_times()).values())
    answers_a = list(medians(s for trace in sandbox for s in trace.answer_times()).values())
    answers_b = list(medians(s for trace in simulator for s in trace.answer_times()).values())
    fitted: dict[str, float] = {}
    if processing:
        fitted["latency"] = _rounded(sorted(processing)[len(processing) // 2])
    if answers_a and answers_b:
        delay = sorted(answers_a)[len(answers_a) // 2] - sorted(answers_b)[len(answers_b) // 2]
        fitted["answer_delay"] = _rounded(max(delay, 0.0))
    if "latency" not in fitted:
        fitted["latency"] = latency_now
    return fitted


def _rounded(seconds: float) -> float:
    return round(round(max(seconds, 0.0) / 0.05) * 0.05, 2)


def _cell(difference: Difference, column: str) -> str:
    value = getattr(difference, column)
    return str(value) if value else ("-" if column != "accepted" else "")


def table(report: DriftReport, width: int = 40) -> str:
    """The terminal table of the differences, then what was skipped and the suggested settings."""
    lines = [
        f"drift: {terminal(report.sandbox)} (sandbox) against {terminal(report.simulator)}: {report.scenarios} "
        f"scenarios, {report.verdict}"
    ]
    if report.differences:
        rows = [[terminal(_cell(d, column))[:width] for column in COLUMNS] for d in report.differences]
        sizes = [max(len(column), *(len(row[i]) for row in rows)) for i, column in enumerate(COLUMNS)]
        lines.append("")
        lines.append("  ".join(column.ljust(size) for column, size in zip(COLUMNS, sizes, strict=True)).rstrip())
        lines += ["  ".join(cell.ljust(size) for cell, size in zip(row, sizes, strict=True)).rstrip() for row in rows]
    lines += _tail(report)
    return "\n".join(lines) + "\n"


def _tail(report: DriftReport) -> list[str]:
    """What was not compared, the fitted settings and the limits, as lines safe for a terminal."""
    lines = []
    if report.skipped:
        lines += ["", f"not compared ({len(report.skipped)}):"]
        lines += [f"  {terminal(name)}: {terminal(why)}" for name, why in report.skipped.items()]
    if report.notes:
        lines += ["", "not replayed as recorded:"]
        lines += [f"  {terminal(name)}: {terminal(note)}" for name, notes in report.notes.items() for note in notes]
    if report.suggested:
        lines += ["", "a [simulator] section fitted to the sandbox's timings:", "", *settings_toml(report.suggested)]
    lines += ["", "what this comparison cannot say:", *(f"  - {limit}" for limit in LIMITS)]
    return lines


def settings_toml(suggested: dict[str, float]) -> list[str]:
    return ["[simulator]", *(f"{name} = {value:g}" for name, value in suggested.items())]


def markdown(report: DriftReport) -> str:
    icon = "❌" if report.open else "✅"
    lines = [
        f"## {icon} gatekit drift: {report.verdict}",
        "",
        f"{report.scenarios} scenarios of {markdown_code(report.sandbox)} (sandbox) against "
        f"{markdown_code(report.simulator)}.",
        "",
    ]
    if report.differences:
        lines += ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
        for difference in report.differences:
            cells = [_cell(difference, column) for column in COLUMNS]
            # (the kind is drift's own word; everything else comes from a recording or drift.toml: a code span)
            shown = [markdown_code(cell) if number and cell != "-" else cell for number, cell in enumerate(cells)]
            lines.append("| " + " | ".join(shown) + " |")
    tail = _tail(report)
    if tail:
        fence = markdown_fence(tail)
        lines += [
            "",
            "<details><summary>Not compared, the fitted settings, and what drift cannot say</summary>",
            "",
            f"{fence}text",
            *tail[1:],
            fence,
            "",
            "</details>",
        ]
    return "\n".join(lines) + "\n"


STYLE = (
    ".gk-drift{font-family:system-ui,sans-serif;color:#1d2430}.gk-drift table{border-collapse:collapse}"
    ".gk-drift td,.gk-drift th{border:1px solid #d0d4da;padding:.3rem .5rem;text-align:left;vertical-align:top;"
    "font-size:.9rem}.gk-drift tr.open td:first-child{border-left:4px solid #c0262d}"
    ".gk-drift tr.accepted{color:#5b6472}.gk-drift pre{background:#f4f5f7;padding:1rem;white-space:pre-wrap}"
)


def report_html(report: DriftReport, heading: str = "h3") -> str:
    """The report as an HTML fragment (a notebook's view of a ``DriftReport``; the body of ``html_page``)."""
    rows = "".join(
        '<tr class="{}">{}</tr>'.format(
            "accepted" if d.accepted else "open", "".join(f"<td>{html_text(_cell(d, c))}</td>" for c in COLUMNS)
        )
        for d in report.differences
    )
    head = "".join(f"<th>{html.escape(column)}</th>" for column in COLUMNS)
    tail = html.escape("\n".join(_tail(report)).strip())
    return (
        f'<div class="gk-drift"><style>{STYLE}</style>'
        f"<{heading}>gatekit drift: {html.escape(report.verdict)}</{heading}>"
        f"<p>{report.scenarios} scenarios of <code>{html_text(report.sandbox)}</code> (sandbox) against "
        f"{html_text(report.simulator)}.</p>"
        + (f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>" if rows else "")
        + (f"<pre>{tail}</pre>" if tail else "")
        + "</div>"
    )


def html_page(report: DriftReport) -> str:
    """A standalone page (no script, no outside resource)."""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>gatekit drift</title>"
        "<style>body{margin:2rem}</style></head><body>" + report_html(report, "h1") + "</body></html>"
    )


def json_text(report: DriftReport) -> str:
    """The JSON report, in ASCII: a control character or an escape sequence of a recording is ``\\u001b`` in it."""
    return json.dumps(report.as_json(), indent=1, ensure_ascii=True) + "\n"
