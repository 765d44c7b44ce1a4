"""``drift.html`` (and a notebook's view of a report): the verdict, what A and B were, a summary by kind, then one
folded group per difference (its occurrences inside), the accepted ones folded apart, the fitted section, and what
drift cannot say.  No script, no outside resource; every value of a recording escaped (``shown.html_text``).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from toolkit.drift.fit import settings_toml
from toolkit.drift.groups import TIMINGS, Group, by_kind
from toolkit.drift.report import LIMITS, accepted, cells, opened
from toolkit.drift.shown import html_text

if TYPE_CHECKING:
    from toolkit.drift.report import DriftReport

_GRID = "display:grid;grid-template-columns:9.5rem 7rem minmax(7rem,1fr) minmax(7rem,1fr) 3.5rem minmax(10rem,1.6fr)"
STYLE = (
    ".gk-drift{font-family:system-ui,sans-serif;color:#1d2430;max-width:80rem;line-height:1.35}"
    ".gk-drift code{font-family:ui-monospace,monospace;font-size:.88em}"
    ".gk-drift .sides{margin:.2rem 0 .8rem}.gk-drift .kinds span{display:inline-block;background:#eef0f3;"
    "border-radius:1rem;padding:.1rem .6rem;margin:0 .3rem .3rem 0;font-size:.9rem}"
    ".gk-drift .kinds span.open{background:#fbe4e4;color:#8a1c21}"
    f".gk-drift .row{{{_GRID};gap:.6rem;padding:.35rem .5rem;font-size:.9rem}}"
    ".gk-drift .row>span{overflow-wrap:anywhere}.gk-drift .head{font-weight:600;color:#5b6472;"
    "border-bottom:2px solid #d0d4da}.gk-drift details.group{border-bottom:1px solid #e3e6ea}"
    ".gk-drift details.group>summary{list-style:none;cursor:pointer}"
    ".gk-drift details.group>summary::-webkit-details-marker{display:none}"
    ".gk-drift details.group>summary:hover{background:#f6f7f9}"
    ".gk-drift details.group.open>summary>span:first-child{border-left:4px solid #c0262d;padding-left:.4rem}"
    ".gk-drift details.group>summary>span:first-child::before{content:'\\25B8  ';color:#5b6472}"
    ".gk-drift details.group[open]>summary>span:first-child::before{content:'\\25BE  '}"
    ".gk-drift .n{text-align:right;font-variant-numeric:tabular-nums}"
    ".gk-drift table{border-collapse:collapse;margin:.3rem 0 .8rem 1.6rem}"
    ".gk-drift td,.gk-drift th{border:1px solid #d0d4da;padding:.25rem .5rem;text-align:left;vertical-align:top;"
    "font-size:.85rem}.gk-drift .accepted{color:#5b6472}.gk-drift details.apart>summary{cursor:pointer;"
    "margin:1rem 0 .3rem;font-weight:600}.gk-drift pre{background:#f4f5f7;padding:1rem;white-space:pre-wrap}"
)


def report_html(report: DriftReport, heading: str = "h3") -> str:
    """The report as an HTML fragment (a notebook's view of a ``DriftReport``; the body of ``html_page``):
    ``heading`` for its title, the next level for its parts."""
    sub = f"h{min(int(heading[1:]) + 1, 6)}" if heading[1:].isdigit() else "h4"
    parts = [
        f'<div class="gk-drift"><style>{STYLE}</style>',
        f"<{heading}>gatekit drift: {html.escape(report.verdict)}</{heading}>",
        _sides(report),
    ]
    if report.open:
        parts += [_kinds("by kind", by_kind(report.open), "open"), _groups(report, opened(report))]
    kept = accepted(report)
    if kept:
        said = by_kind(d for group in kept for d in group.differences)
        parts.append(f'<details class="apart"><summary>Accepted in drift.toml: {html.escape(said)}</summary>'
                     f"{_groups(report, kept)}</details>")  # fmt: skip
    parts += [_not_compared(report), _fitted(report, sub), _limits(), "</div>"]
    return "".join(parts)


def html_page(report: DriftReport) -> str:
    """A standalone page (no script, no outside resource)."""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>gatekit drift</title>"
        "<style>body{margin:2rem}</style></head><body>" + report_html(report, "h1") + "</body></html>"
    )


def _sides(report: DriftReport) -> str:
    one, other = (html_text(name) for name in report.names)
    compared = f"{report.scenarios} scenario{'' if report.scenarios == 1 else 's'} compared"
    return (
        f'<p class="sides">{compared}.<br><strong>A</strong> <code>{one}</code>: {html_text(report.a)}<br>'
        f"<strong>B</strong> <code>{other}</code>: {html_text(report.b)}</p>"
    )


def _kinds(title: str, counted: str, css: str) -> str:
    chips = "".join(f'<span class="{css}">{html.escape(item)}</span>' for item in counted.split(", "))
    return f'<p class="kinds">{html.escape(title)}: {chips}</p>'


def _groups(report: DriftReport, groups: list[Group]) -> str:
    head = "".join(f"<span>{html_text(name)}</span>" for name in ("kind", "field", *report.names, "count", "where"))
    return f'<div class="groups"><div class="row head">{head}</div>{"".join(_group(report, g) for g in groups)}</div>'


def _group(report: DriftReport, group: Group) -> str:
    row = cells(group)
    if group.accepted:
        row[5] += f" (accepted: {group.accepted})"
    spans = "".join(f'<span class="{"n" if number == 4 else ""}">{html_text(cell)}</span>'
                    for number, cell in enumerate(row))  # fmt: skip
    css = "group accepted" if group.accepted else "group open"
    return f'<details class="{css}"><summary class="row">{spans}</summary>{_occurrences(report, group)}</details>'


def _occurrences(report: DriftReport, group: Group) -> str:
    """Each difference of the group: its scenario and step (a timing: its operation), A's value and B's."""
    timing = group.kind in TIMINGS
    head = ("operation" if timing else "scenario", "step", *report.names, *(("measured",) if timing else ()))
    rows = []
    for d in group.differences:
        values = (d.operation, d.step, d.a, d.b, d.note) if timing else (d.scenario, d.step, d.a, d.b)
        rows.append("<tr>" + "".join(f"<td>{html_text(text)}</td>" for text in values) + "</tr>")
    header = "".join(f"<th>{html_text(name)}</th>" for name in head)
    return f"<table><thead><tr>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _not_compared(report: DriftReport) -> str:
    lines = [f"{name}: {why}" for name, why in report.skipped.items()]
    lines += [f"{name}: {note}" for name, notes in report.notes.items() for note in notes]
    if not lines:
        return ""
    said = f"Not compared, or not replayed as recorded ({len(lines)})"
    shown = "\n".join(html_text(line) for line in lines)
    return f'<details class="apart"><summary>{said}</summary><pre>{shown}</pre></details>'


def _fitted(report: DriftReport, heading: str) -> str:
    if not report.fitted.settings:
        return ""
    text = "\n".join(settings_toml(report.fitted))
    return (
        f"<{heading}>The [simulator] section fitted to A</{heading}><p>Taught to the simulator (gatekit simulate "
        "--config, or [profiles.NAME.simulator] in gatekit.toml), it answers as A did; each figure says what it rests "
        f"on.</p><pre>{html.escape(text)}</pre>"
    )


def _limits() -> str:
    items = "".join(f"<li>{html.escape(limit)}</li>" for limit in LIMITS)
    return f'<details class="apart"><summary>What this comparison cannot say</summary><ul>{items}</ul></details>'
