"""Drift a person can read (issue 38, points 3 and 6): a difference repeated in many scenarios is one row, with how
often and where; a summary by kind comes first; what ``drift.toml`` accepts is counted, and listed only with
``--show-accepted``; ``drift.html`` folds each group's occurrences; the columns are the two recordings' names,
and a recording is described by what it knows of its gateway, never called a sandbox; a replay says which
scenario it is at.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.test_drift_recordings import run_drift, write_recording
from tests.test_drift_timing import order, recording

DECLINED_A = {"status": "declined", "error-code": "05", "error-message": "Do not honor"}
DECLINED_B = {"status": "declined", "error-code": "51", "error-message": "Insufficient funds"}
SCENARIOS = 30


def _runs(tmp_path: Path) -> tuple[Path, Path]:
    """A: 30 sales whose final status has no ``descriptor`` (B's has), answered in 0.3 s (B's in 0.05 s), and a
    decline worded and coded otherwise: 30 + 2 + 2 differences of four kinds."""
    a = {f"a sale {n}": order([(0.1, "approved")], took=0.3) for n in range(SCENARIOS)}
    b = {f"a sale {n}": order([(0.1, "approved")], final={"descriptor": "GATEKIT"}) for n in range(SCENARIOS)}
    a["a decline"] = order([(0.1, "declined")], cvv2="116", final=DECLINED_A, took=0.3)
    b["a decline"] = order([(0.1, "declined")], cvv2="116", final=DECLINED_B | {"descriptor": "GATEKIT"})
    return recording(tmp_path / "last-week", a), recording(tmp_path / "today", b)


def _rows(out: str) -> list[str]:
    """The lines of the table of differences (those after its header, up to the blank line)."""
    lines = out.splitlines()
    start = next(number for number, line in enumerate(lines) if line.startswith("kind "))
    return lines[start + 1 : lines.index("", start)]


def test_repeated_differences_are_one_row_each_after_a_summary_by_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _runs(tmp_path)
    ran = run_drift(capsys, a, b, "--out", tmp_path / "out")
    assert ran.code == 1, ran.err
    rows = _rows(ran.out)
    assert [row.split()[0] for row in rows] == ["field-extra", "answer-time", "error-code", "error-message"], ran.out
    descriptor = rows[0]
    assert "descriptor" in descriptor and re.search(r"\b31\b", descriptor) and "in 31 scenarios" in descriptor
    assert "a decline" in rows[2] and "05" in rows[2] and "51" in rows[2]
    summary = next(line for line in ran.out.splitlines() if line.startswith("by kind:"))
    assert summary == "by kind: field-extra 31, answer-time 2, error-code 1, error-message 1"
    assert ran.out.index("by kind:") < ran.out.index("\nkind ")
    assert "4 differences not accepted (35 occurrences)" in ran.out.splitlines()[0]
    report = json.loads((tmp_path / "out" / "drift.json").read_text())
    assert len(report["differences"]) == 35 and len(report["groups"]) == 4
    assert report["groups"][0] | {"scenarios": []} == {
        "kind": "field-extra", "field": "descriptor", "fields": ["descriptor"], "a": "not sent", "b": "sent",
        "count": 31, "operations": ["status"], "scenarios": [], "accepted": "", "note": "",
    }  # fmt: skip


def test_accepted_differences_are_counted_and_listed_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _runs(tmp_path)
    accept = tmp_path / "drift.toml"
    accept.write_text('[[accept]]\nkind = "field-extra"\nfield = "descriptor"\nreason = "it sends no descriptor"\n')
    ran = run_drift(capsys, a, b, "--out", tmp_path / "out", "--accept", accept)
    assert ran.code == 1 and "descriptor" not in "\n".join(_rows(ran.out)), ran.out
    assert "accepted in drift.toml: field-extra 31 (--show-accepted lists them)" in ran.out
    assert "3 differences not accepted (4 occurrences), 31 accepted" in ran.out.splitlines()[0]
    shown = run_drift(capsys, a, b, "--out", tmp_path / "out", "--accept", accept, "--show-accepted")
    accepted = shown.out[shown.out.index("accepted in drift.toml") :]
    assert re.search(r"field-extra\s+descriptor\s+not sent\s+sent\s+31\s.*it sends no descriptor", accepted)


class _Outline(HTMLParser):
    """The tags of a page, and the text of each ``<summary>``."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.summaries: list[str] = []
        self._in_summary = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "summary":
            self._in_summary = True
            self.summaries.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in_summary = self._in_summary and tag != "summary"

    def handle_data(self, data: str) -> None:
        if self._in_summary:
            self.summaries[-1] += data


def test_the_html_report_folds_each_group_after_the_summary_by_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _runs(tmp_path)
    run_drift(capsys, a, b, "--out", tmp_path / "out")
    page = (tmp_path / "out" / "drift.html").read_text(encoding="utf-8")
    outline = _Outline()
    outline.feed(page)
    groups = [text for text in outline.summaries if text.startswith(("field-extra", "answer-time", "error-"))]
    assert len(groups) == 4 and "descriptor" in groups[0] and "31" in groups[0], outline.summaries
    assert page.index("by kind") < page.index("<details")
    assert page.count("a sale 7") == 1  # (each occurrence listed once, inside its group, folded)
    assert outline.tags.count("details") >= 4


def test_the_columns_are_the_recordings_names_and_no_recording_is_called_a_sandbox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _runs(tmp_path)
    simulator = {"profile": "simulator", "base_url": "embedded simulator", "simulator": {"latency": 0}}
    for folder, target in ((a, {"base_url": "https://gateway.example/paynet"}), (b, simulator)):
        index = json.loads((folder / "index.json").read_text())
        (folder / "index.json").write_text(json.dumps(index | target))  # fmt: skip
    ran = run_drift(capsys, a, b, "--out", tmp_path / "out")
    header = next(line for line in ran.out.splitlines() if line.startswith("kind "))
    assert header.split() == ["kind", "field", "last-week", "today", "count", "where"], header
    assert "sandbox" not in ran.out.lower() and "sandbox" not in (tmp_path / "out" / "drift.md").read_text()
    described = ran.out.splitlines()[1:3]
    assert described[0].split()[:2] == ["A", "last-week:"] and "profile test" in described[0], described
    assert described[1].split()[:2] == ["B", "today:"] and "a gatekit simulator" in described[1], described


def test_a_replay_says_which_scenario_it_is_at(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_recording(tmp_path / "recorded", {"a sale": _sale(), "another sale": _sale()})
    ran = run_drift(capsys, folder, "--out", tmp_path / "out")
    lines = ran.out.splitlines()
    assert lines[0].startswith("gatekit drift: replaying 2 scenarios of recorded on a fresh simulator"), lines[:4]
    assert re.fullmatch(r"  1/2  a sale  \d+\.\d s", lines[1]) and re.fullmatch(r"  2/2  another sale  \d+\.\d s",
                                                                                 lines[2]), lines[:4]  # fmt: skip
    assert lines[3].startswith("replayed in ") and lines[4].startswith("drift: 2 scenarios of recorded (A) against")


def _sale() -> dict[str, object]:
    from tests.test_drift_recordings import sale_archive

    return sale_archive()
