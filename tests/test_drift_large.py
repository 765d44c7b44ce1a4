"""Large recordings: an archive over ``MAX_ARCHIVE_BYTES`` is refused unread (a 261 MB HAR ran over 300 s at 1.6
GB); what drift reads keeps no page body it does not compare; a message built to be slow to compare is compared in
linear time.  ``benchmarks/bench_drift.py`` measures the figures (``make bench`` at length); its short pass here
says it runs and judges its goals.  No test asserts a time: the one that could hang runs under a deadline a
thousand times what it takes.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tracemalloc
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.test_drift_recordings import files_opened, run_drift, sale_archive, write_recording
from toolkit.drift import traces
from toolkit.drift.replay import card_number
from toolkit.payer.visits import Visit
from toolkit.recording import har
from toolkit.recording.reading import MAX_ARCHIVE_BYTES

ROOT = Path(__file__).resolve().parents[1]


def _sparse_archive(tmp_path: Path, size: int) -> Path:
    """A recording whose archive is ``size`` bytes (a sparse file: no disk, no time to write)."""
    folder = write_recording(tmp_path / "big", {"a sale": sale_archive()}, files={"a sale": "x.har"})
    with (folder / "x.har").open("r+b") as handle:
        handle.truncate(size)
    return folder


@pytest.mark.parametrize("mode", ["compare", "replay"])
def test_an_archive_over_the_limit_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    folder = _sparse_archive(tmp_path, 261 * 1024 * 1024)
    args = (folder, folder) if mode == "compare" else (folder,)
    with files_opened() as opened:
        ran = run_drift(capsys, *args, "--out", tmp_path / "out")
    assert (ran.code, ran.err) == (
        2,
        f"gatekit drift: {folder}/x.har: 261 MB, larger than gatekit drift reads (64 MB a file; a scenario's archive "
        "is a few dozen kB): not read\n",
    )
    assert str((folder / "x.har").resolve()) not in opened
    assert not (tmp_path / "out").exists()


def test_an_archive_just_under_the_limit_is_read(tmp_path: Path) -> None:
    page = "<p>" + "x" * (MAX_ARCHIVE_BYTES - 20_000) + "</p>"
    archive = sale_archive()
    visit = har.entry(Visit(_at(archive, 0), "GET", "https://sandbox.gateway.example/form/1", 200, 0.0, "", "gateway",
                            body=page, action={"action": "open"}))  # fmt: skip
    archive["log"]["entries"].insert(1, visit)
    folder = write_recording(tmp_path / "a", {"a sale": archive})
    assert MAX_ARCHIVE_BYTES - 20_000 < (folder / "scenario-0.har").stat().st_size <= MAX_ARCHIVE_BYTES
    assert [type(step).__name__ for step in traces(folder)[0].steps] == ["Call", "PayerStep", "Wait", "Arrival"]


def _at(archive: dict[str, Any], number: int) -> datetime:
    return datetime.fromisoformat(archive["log"]["entries"][number]["startedDateTime"])


def test_what_drift_keeps_of_an_archive_holds_no_page_body(tmp_path: Path) -> None:
    """A scenario whose payer saw 16 MB of pages: drift compares none of them, and keeps none (it kept them all,
    as read, for as long as the comparison lasted)."""
    archive = sale_archive()
    pages = [har.entry(Visit(_at(archive, 0), "GET", f"https://sandbox.gateway.example/form/{number}", 200, 0.0, "",
                             "gateway", body="<p>" + "x" * 4_000_000 + "</p>", action={"action": "open"}))
             for number in range(4)]  # fmt: skip
    archive["log"]["entries"][1:1] = pages
    folder = write_recording(tmp_path / "a", {"a sale": archive})
    tracemalloc.start()
    try:
        kept = traces(folder)
        retained, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(kept[0].steps) == 7
    assert retained < 1_000_000, f"{retained} bytes kept of a 16 MB recording"


def test_a_message_made_to_be_slow_to_compare_is_compared_in_linear_time(tmp_path: Path) -> None:
    """``a-a-a-...`` (200 kB): the wording's pattern looked ahead from each of its 100,000 words (80 kB took 74 s;
    this one, hours).  The deadline is a thousand times what the comparison takes now."""
    message = "a-" * 100_000
    for name in ("a", "b"):
        write_recording(tmp_path / name, {"a sale": sale_archive(status="declined", message=message)})
    command = [sys.executable, "-m", "toolkit.cli", "drift", "a", "b", "--out", "out"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stderr) == (0, ""), done.stdout[-2000:]


def test_the_wording_of_messages_leaves_out_what_varies_only() -> None:
    from toolkit.drift.compare import _worded

    assert _worded("amount 10.42 is too low") == _worded("amount 7 is too low") == "amount # is too low"
    assert _worded("serial cc3d3cbe-3972-4245-a17d-e91774b37481 unknown") == "serial # unknown"
    assert _worded("see https://sandbox.example/p?a=1 now") == "see # now"
    assert _worded("-abcdefghijkl1- and a long word abcdefghijklmnop") == "-#- and a long word abcdefghijklmnop"
    assert _worded("Do not honor") != _worded("Insufficient funds")


def test_a_masked_card_number_longer_than_any_card_is_not_rebuilt() -> None:
    masked = "453897" + "*" * 10_000 + "6732"
    assert card_number(masked) == masked
    assert card_number("453897******6732") == "4538977399606732"  # (a public test card, as itself)


@pytest.mark.slow
def test_the_drift_benchmark_runs_and_judges_its_goals(tmp_path: Path) -> None:
    command = [sys.executable, "benchmarks/bench_drift.py", "--megabytes", "65", "--under", "1",
               "--shapes", "answer,orders", "--keep", str(tmp_path)]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    rows = re.findall(r"^(answer|orders)\s+(\d+) MB  drift A B\s+(\d+\.\d+) s\s+(\d+) MB  exit (\d)  (met|NOT met)",
                      done.stdout, re.MULTILINE)  # fmt: skip
    assert [(shape, int(size), int(code)) for shape, size, _, _, code, _ in rows] == [
        ("answer", 65, 2), ("answer", 1, 0), ("orders", 65, 2), ("orders", 1, 0)
    ], done.stdout  # fmt: skip
    assert all(float(seconds) > 0 and int(rss) > 0 for _, _, seconds, rss, _, _ in rows), done.stdout
    assert re.search(r"^goals: (met|NOT met)$", done.stdout, re.MULTILINE), done.stdout
