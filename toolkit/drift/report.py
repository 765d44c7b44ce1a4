"""What ``gatekit drift`` shows: a summary by kind, then the differences grouped (``groups``), for the terminal,
Markdown for CI summaries, a standalone HTML page (``page``) and JSON; and a ``[simulator]`` section fitted to A
(``fit``).  A and B are the two runs compared, named after their recordings: a report never guesses which is a
sandbox.  Accepted differences (``drift.toml``) are counted; the terminal lists them when asked, Markdown and HTML
fold them.

Every value that comes from a recording (names, operations, fields, answers' words, notes) goes through
``shown``: masked, cut, and escaped for the terminal, Markdown or HTML it is written to; the JSON is ASCII.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.drift.compare import ANSWER_GAP, ANSWER_RATIO, PROCESSING_GAP, PROCESSING_RATIO, Difference
from toolkit.drift.fit import Fitted, settings_toml
from toolkit.drift.groups import Group, by_kind, grouped
from toolkit.drift.shown import markdown_code, markdown_fence, terminal, value

# What a drift report cannot say, whatever the recordings: printed with every report.
LIMITS = (
    "pages are not compared: a replay's payer does what the recorded one did, on the simulator's pages (a page the "
    "payer cannot read fails the recorded run itself)",
    "callbacks are compared by count, type and fields, not by when they came or how often they were retried",
    f"answer times differ only beyond {ANSWER_GAP:g} s and {ANSWER_RATIO:g}x, medians per operation: a single slow "
    "answer is not drift; a replay's answer times are those its simulator's settings give (answer_delay, "
    "answer_latency), not what the replay measured on this machine (a busy machine is not drift)",
    "an order's processing time is known only as finely as its polls and callbacks saw it (a poll every 3 s sees "
    f"an order decided in 0.1 s after 3 s): it differs only when the two runs' spans are {PROCESSING_GAP:g} s and "
    f"{PROCESSING_RATIO:g}x apart, and the row says how finely each was measured",
    "@simulator scenarios are not replayed (they drive the simulator's control API)",
)


@dataclass
class DriftReport:
    """The differences (accepted ones with their reason), what was not compared, and the fitted settings."""

    a: str  # what A was, as its recording knows it (profile, gateway)
    b: str  # what B was: a replay's simulator, or another recording's gateway
    differences: list[Difference]
    scenarios: int
    skipped: dict[str, str] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)
    fitted: Fitted = field(default_factory=Fitted)
    folders: tuple[str, str] = ("", "")  # the two recordings compared (B: a replay's)
    names: tuple[str, str] = ("A", "B")  # what the columns say: the recordings' names

    @property
    def scenario_names(self) -> list[str]:
        """The scenarios compared, in the order A's recording has them."""
        from toolkit.recording import read_index

        skipped = set(self.skipped)
        return [s["name"] for s in read_index(Path(self.folders[0]))["scenarios"] if s["name"] not in skipped]

    @property
    def open(self) -> list[Difference]:
        return [difference for difference in self.differences if not difference.accepted]

    @property
    def groups(self) -> list[Group]:
        """Every difference grouped, accepted ones included (``Group.accepted``)."""
        return grouped(self.differences)

    @property
    def suggested(self) -> dict[str, Any]:
        """The fitted ``[simulator]`` settings."""
        return self.fitted.settings

    @property
    def verdict(self) -> str:
        accepted = len(self.differences) - len(self.open)
        if self.open:
            kinds = sum(1 for group in self.groups if not group.accepted)
            said = f"{_many(kinds, 'difference')} not accepted ({_many(len(self.open), 'occurrence')})"
            return said + (f", {accepted} accepted" if accepted else "")
        return f"no difference not accepted ({accepted} accepted)" if accepted else "no difference"

    def as_json(self) -> dict[str, Any]:
        """The report as data (values masked and cut as every report shows them)."""
        return {
            "a": self._side(0, self.a),
            "b": self._side(1, self.b),
            "scenarios": self.scenarios,
            "verdict": self.verdict,
            "groups": [_masked(group.as_dict()) for group in self.groups],
            "differences": [_masked(difference.as_dict()) for difference in self.differences],
            "skipped": {value(name): value(why) for name, why in self.skipped.items()},
            "notes": {value(name): [value(note) for note in notes] for name, notes in self.notes.items()},
            "suggested_simulator_settings": self.fitted.settings,
            "fitted_from": self.fitted.said,
            "limits": list(LIMITS),
        }

    def _side(self, number: int, target: str) -> dict[str, str]:
        return {"name": value(self.names[number]), "folder": value(self.folders[number]), "target": value(target)}


def _many(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _masked(data: dict[str, Any]) -> dict[str, Any]:
    return {key: [value(item) for item in text] if isinstance(text, list) else value(text) if isinstance(text, str)
            else text for key, text in data.items()}  # fmt: skip


def names_of(one: Path, other: Path) -> tuple[str, str]:
    """The columns' names for two recordings: their folders' names, told apart when they are alike."""
    a, b = one.name or str(one), other.name or str(other)
    if a == b:
        a, b = f"{one.parent.name}/{a}", f"{other.parent.name}/{b}"
    return (f"{a} (A)", f"{b} (B)") if a == b else (a, b)


def columns(report: DriftReport) -> tuple[str, ...]:
    return ("kind", "field", *report.names, "count", "where")


def cells(group: Group) -> list[str]:
    where = f"{group.where}; {group.note}" if group.note else group.where
    fields = group.field if len(group.fields) <= 3 else f"{', '.join(group.fields[:2])}, {len(group.fields) - 2} more"
    return [group.kind, fields or "-", group.a or "-", group.b or "-", str(group.count), where]


def opened(report: DriftReport) -> list[Group]:
    return [group for group in report.groups if not group.accepted]


def accepted(report: DriftReport) -> list[Group]:
    return [group for group in report.groups if group.accepted]


def heading(report: DriftReport, shown: Any = terminal) -> list[str]:
    """The first lines: how many scenarios, the verdict, and what A and B were."""
    one, other = (shown(name) for name in report.names)
    return [
        f"drift: {_many(report.scenarios, 'scenario')} of {one} (A) against {other} (B): {report.verdict}",
        f"  A  {one}: {shown(report.a)}",
        f"  B  {other}: {shown(report.b)}",
    ]


def table(report: DriftReport, width: int = 40, *, show_accepted: bool = False) -> str:
    """The terminal's report: the verdict, a summary by kind, the groups not accepted, how many were accepted (and
    which, with ``show_accepted``), then what was skipped, the fitted section and the limits."""
    lines = heading(report)
    if report.open:
        lines += ["", f"by kind: {by_kind(report.open)}", ""]
        lines += _rows(columns(report), [cells(group) for group in opened(report)], width)
    kept = accepted(report)
    if kept:
        said = f"accepted in drift.toml: {by_kind(d for group in kept for d in group.differences)}"
        lines += ["", said if show_accepted else f"{said} (--show-accepted lists them)"]
        lines += [""] if show_accepted else []
        if show_accepted:
            rows = [[*cells(group), group.accepted] for group in kept]
            lines += _rows((*columns(report), "accepted"), rows, width)
    lines += tail(report)
    return "\n".join(lines) + "\n"


def _rows(head: tuple[str, ...], rows: list[list[str]], width: int) -> list[str]:
    shown = [[terminal(cell)[: width * 2 if number == 5 else width] for number, cell in enumerate(row)] for row in rows]
    head = tuple(terminal(name)[:width] for name in head)
    sizes = [max(len(name), *(len(row[i]) for row in shown)) for i, name in enumerate(head)]
    lines = ["  ".join(name.ljust(size) for name, size in zip(head, sizes, strict=True)).rstrip()]
    return lines + [
        "  ".join(cell.ljust(size) for cell, size in zip(row, sizes, strict=True)).rstrip() for row in shown
    ]


def tail(report: DriftReport) -> list[str]:
    """What was not compared, the fitted settings and the limits, as lines safe for a terminal."""
    lines = []
    if report.skipped:
        lines += ["", f"not compared ({len(report.skipped)}):"]
        lines += [f"  {terminal(name)}: {terminal(why)}" for name, why in report.skipped.items()]
    if report.notes:
        lines += ["", "not replayed as recorded:"]
        lines += [f"  {terminal(name)}: {terminal(note)}" for name, notes in report.notes.items() for note in notes]
    if report.fitted.settings:
        said = f"the [simulator] section fitted to A ({terminal(report.names[0])}), for gatekit simulate --config (in"
        lines += ["", f"{said} gatekit.toml, as [profiles.NAME.simulator]):", "", *settings_toml(report.fitted)]
    lines += ["", "what this comparison cannot say:", *(f"  - {limit}" for limit in LIMITS)]
    return lines


def markdown(report: DriftReport) -> str:
    icon = "❌" if report.open else "✅"
    one, other = (markdown_code(name) for name in report.names)
    lines = [
        f"## {icon} gatekit drift: {report.verdict}",
        "",
        f"{_many(report.scenarios, 'scenario')} of **A** {one} ({markdown_code(report.a)}) against **B** {other} "
        f"({markdown_code(report.b)}).",
        "",
    ]
    if report.open:
        lines += [f"By kind: {by_kind(report.open)}.", "", *_markdown_table(report, opened(report))]
    kept = accepted(report)
    if kept:
        said = by_kind(d for group in kept for d in group.differences)
        lines += ["", f"<details><summary>Accepted in drift.toml: {said}</summary>", "",
                  *_markdown_table(report, kept, reason=True), "", "</details>"]  # fmt: skip
    tailed = tail(report)
    fence = markdown_fence(tailed)
    lines += ["", "<details><summary>Not compared, the fitted settings, and what drift cannot say</summary>", "",
              f"{fence}text", *tailed[1:], fence, "", "</details>"]  # fmt: skip
    return "\n".join(lines) + "\n"


def _markdown_table(report: DriftReport, groups: list[Group], *, reason: bool = False) -> list[str]:
    head = ["kind", "field", *(markdown_code(name) for name in report.names), "count", "where"]
    head += ["accepted"] if reason else []
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for group in groups:
        row = [*cells(group), *([group.accepted] if reason else [])]
        # (the kind and the count are drift's own words; everything else may come from a recording: a code span)
        shown = [cell if number in (0, 4) or cell == "-" else markdown_code(cell) for number, cell in enumerate(row)]
        lines.append("| " + " | ".join(shown) + " |")
    return lines


def json_text(report: DriftReport) -> str:
    """The JSON report, in ASCII: a control character or an escape sequence of a recording is ``\\u001b`` in it."""
    return json.dumps(report.as_json(), indent=1, ensure_ascii=True) + "\n"
