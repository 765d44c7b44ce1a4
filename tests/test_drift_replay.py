"""A replay reaches the replay's simulator only: a page that a recording names, which the replay's gateway did not
give (the sandbox's, or any address a recording holds), is not opened by the replay's payer; the report says so.
And a replay, which empties its folder first, never takes the recording's own folder for it.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from tests.recording_server import RecordingServer
from tests.test_drift_recordings import run_drift, sale_archive, write_recording
from toolkit.drift import against_simulator
from toolkit.payer.visits import Visit
from toolkit.recording import har


def test_a_page_the_replays_gateway_did_not_give_is_not_opened(tmp_path: Path, server: RecordingServer) -> None:
    archive = sale_archive()
    elsewhere = f"{server.base_url}/form/somewhere-a-recording-names"
    first = datetime.fromisoformat(archive["log"]["entries"][0]["startedDateTime"])
    archive["log"]["entries"].insert(1, har.entry(Visit(
        first, "GET", elsewhere, 200, 0.0, "open the hosted payment page", "gateway", body="<html></html>",
        action={"action": "open"})))  # fmt: skip
    folder = write_recording(tmp_path / "recording", {"a sale": archive})
    report = against_simulator(folder, tmp_path / "replay")
    assert server.requests == []
    assert report.notes == {
        "a sale": [f"the payer's open: {elsewhere} is not a page the replay's gateway gave: not opened"]
    }


def test_a_replay_never_writes_over_the_recording_it_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_recording(tmp_path / "replay", {"a sale": sale_archive()})
    before = sorted(path.name for path in folder.iterdir())
    ran = run_drift(capsys, folder, "--out", tmp_path)  # (its replay would go to tmp_path/replay: the recording)
    assert ran.code == 2 and f"--out: its replay/ folder is the recording {folder}" in ran.err, ran.err
    assert sorted(path.name for path in folder.iterdir()) == before
