"""What a recording holds reaches the terminal, and the reports drift writes, as text, never as commands: escape
sequences (ANSI CSI and OSC, 8-bit C1 controls), other control characters and bidirectional overrides are shown
escaped (``\\x1b[2J``); in Markdown, a name is a code span (no tag, no link, no extra table cell); in HTML it is
escaped; the JSON is ASCII.  Card data in a recording made by another tool is masked wherever drift shows it, and
a message of megabytes is cut.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.test_drift_recordings import run_drift, sale_archive, write_recording
from toolkit.drift.compare import Difference
from toolkit.drift.report import DriftReport, markdown, table

# What a terminal (or a log, or a CI page) would act on: C0 controls but the newline, DEL, C1 controls (0x9b is an
# 8-bit CSI), the line and paragraph separators, bidirectional overrides and isolates.
UNSAFE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
NAME = (
    "\x1b]0;owned\x07a sale \x1b[2J\x9b31m\u202eevil\r\n<img src=x onerror=alert(1)> | `tick` [link](http://x.example)"
)
OPERATION = "sale\x1b[5m"
MESSAGE = "Do not honor \x1b[31mred\x1b[0m card 4538977399606732"
PAN = "4538977399606732"


def _recordings(tmp_path: Path) -> tuple[Path, Path]:
    a = write_recording(tmp_path / "a", {NAME: sale_archive(NAME, operation=OPERATION, status="declined",
                                                            message=MESSAGE)})  # fmt: skip
    b = write_recording(tmp_path / "b", {NAME: sale_archive(NAME, operation="sale", status="approved")})
    return a, b


@pytest.fixture
def drifted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, Path]:
    """``gatekit drift a b`` of two recordings whose scenario name, operation and message hold escape sequences
    (and a card number): what it printed, and where its reports are."""
    a, b = _recordings(tmp_path)
    ran = run_drift(capsys, a, b, "--out", tmp_path / "out")
    assert ran.code == 1, ran.err
    return ran.out, tmp_path / "out"


def test_the_terminal_table_shows_escape_sequences_escaped(drifted: tuple[str, Path]) -> None:
    out, _ = drifted
    assert not UNSAFE.search(out), repr(UNSAFE.search(out))
    assert "\\x1b]0;owned\\x07a sale \\x1b[2J\\x9b31m" in out  # (the name, cut to the column's width)
    assert "sale\\x1b[5m, in \\x1b]0;owned" in out  # (where: the operation, then the scenario)
    assert "Do not honor \\x1b[31mred\\x1b[0m" in out


def test_card_data_in_a_recording_is_masked_wherever_drift_shows_it(drifted: tuple[str, Path]) -> None:
    out, reports = drifted
    for text in (out, *(path.read_text(encoding="utf-8") for path in reports.glob("drift.*"))):
        assert PAN not in text
    assert "453897******6732" in (reports / "drift.md").read_text(encoding="utf-8")


def test_the_markdown_report_keeps_a_name_as_text_in_its_own_cell(drifted: tuple[str, Path]) -> None:
    markdown_it = pytest.importorskip("markdown_it")
    _, reports = drifted
    text = (reports / "drift.md").read_text(encoding="utf-8")
    assert not UNSAFE.search(text)
    rendered = markdown_it.MarkdownIt("commonmark").enable("table").render(text)
    assert "<img" not in rendered and "<a " not in rendered and "\x1b" not in rendered
    rows = re.findall(r"<tr>(.*?)</tr>", rendered, re.DOTALL)
    assert len(rows) > 1 and all(len(re.findall(r"<t[dh]", row)) == 6 for row in rows), rendered
    assert "&lt;img src=x onerror=alert(1)&gt; | `tick` [link](http://x.example)" in rendered


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)


def test_the_html_report_is_escaped_and_free_of_control_characters(drifted: tuple[str, Path]) -> None:
    _, reports = drifted
    text = (reports / "drift.html").read_text(encoding="utf-8")
    assert not UNSAFE.search(text), repr(UNSAFE.search(text))
    parser = _Tags()
    parser.feed(text)
    assert parser.tags <= {"html", "head", "meta", "title", "style", "body", "div", "h1", "h2", "p", "br", "strong",
                           "code", "span", "details", "summary", "table", "thead", "tbody", "tr", "th", "td", "pre",
                           "ul", "li"}, parser.tags  # fmt: skip
    assert "&lt;img src=x onerror=alert(1)&gt;" in text


def test_the_json_report_is_ascii_and_gives_the_name_back_exactly(drifted: tuple[str, Path]) -> None:
    _, reports = drifted
    data = (reports / "drift.json").read_bytes()
    assert data.isascii() and not UNSAFE.search(data.decode())
    report = json.loads(data)
    assert {difference["scenario"] for difference in report["differences"]} == {NAME}


def test_a_value_in_an_error_message_is_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = sale_archive()
    archive["log"]["entries"][0]["response"]["status"] = "\x1b]0;owned\x07\x9b2J"
    folder = write_recording(tmp_path / "recording\x1b[2J", {"a sale": archive}, files={"a sale": "x.har"})
    ran = run_drift(capsys, folder, folder, "--out", tmp_path / "out")
    assert ran.code == 2 and not UNSAFE.search(ran.err.rstrip("\n")), repr(ran.err)
    assert 'recording\\x1b[2J/x.har: log.entries[0].response.status: expected an integer, got "\\x1b]0;owned' in ran.err


def test_names_and_notes_of_what_was_not_replayed_are_escaped() -> None:
    report = DriftReport(
        "a", "b", [Difference("steps", "s\x1b[2J", "-", "", "recorded", "not replayed")], 1,
        skipped={"\x1b]0;x\x07skipped": "needs \x9b the control API"},
        notes={"noted\x1b[1m": ["the payer's open: http://x.example/\x1b[2J is not a page the replay's gateway gave"]},
    )  # fmt: skip
    for text in (table(report), markdown(report)):
        assert not UNSAFE.search(text), repr(UNSAFE.search(text))
        assert "\\x1b]0;x\\x07skipped: needs \\x9b the control API" in text
        assert "noted\\x1b[1m: the payer's open: http://x.example/\\x1b[2J is not" in text


def test_a_message_of_megabytes_is_cut_in_every_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    long = "refused: " + "word " * 400_000
    a = write_recording(tmp_path / "a", {"a sale": sale_archive(status="declined", message=long)})
    b = write_recording(tmp_path / "b", {"a sale": sale_archive(status="approved")})
    ran = run_drift(capsys, a, b, "--out", tmp_path / "out")
    assert ran.code == 1 and len(ran.out) < 10_000
    for name in ("drift.md", "drift.html", "drift.json"):
        text = (tmp_path / "out" / name).read_text(encoding="utf-8")
        assert len(text) < 20_000 and f"({len(long.strip())} characters)" in text, name
