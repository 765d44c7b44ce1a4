"""A recording's ``index.json`` names files inside its own folder, and nothing else: ``../outside.har``, an
absolute path, a link that resolves outside the folder are refused, the message naming the index's entry, and
the file they name is never opened (the interpreter's audit events say which files were).  Files in a subfolder,
and links that stay inside, are read as before.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.test_drift_recordings import files_opened, run_drift, sale_archive, write_recording
from toolkit.drift import RecordingError
from toolkit.drift.report import DriftReport
from toolkit.drift.views import side_by_side


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A good archive outside the recording's folder (were it read, drift would compare it)."""
    path = tmp_path / "outside.har"
    path.write_text(json.dumps(sale_archive("a sale")), encoding="utf-8")
    return path


def _naming(tmp_path: Path, file: str) -> Path:
    return write_recording(tmp_path / "recording", {"a sale": None}, files={"a sale": file})


def _refused(ran_code: int, err: str, opened: list[str], outside: Path, entry: str) -> None:
    assert ran_code == 2, err
    assert entry in err, err
    assert "bug of gatekit" not in err
    assert str(outside.resolve()) not in opened


@pytest.mark.parametrize("mode", ["compare", "replay"])
def test_an_entry_that_climbs_out_of_the_folder_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], outside: Path, mode: str
) -> None:
    folder = _naming(tmp_path, "../outside.har")
    args = (folder, folder) if mode == "compare" else (folder,)
    with files_opened() as opened:
        ran = run_drift(capsys, *args, "--out", tmp_path / "out")
    expected = f'{folder}/index.json: scenarios[0].file: "../outside.har" is outside the recording\'s folder: an ' \
        "index names files inside its folder only"  # fmt: skip
    _refused(ran.code, ran.err, opened, outside, expected)
    assert not (tmp_path / "out").exists()


def test_an_absolute_path_is_refused_unread(tmp_path: Path, capsys: pytest.CaptureFixture[str], outside: Path) -> None:
    folder = _naming(tmp_path, str(outside))
    with files_opened() as opened:
        ran = run_drift(capsys, folder, folder, "--out", tmp_path / "out")
    _refused(ran.code, ran.err, opened, outside, f'scenarios[0].file: "{str(outside)[:40]}...')


def test_etc_hostname_is_refused_unread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _naming(tmp_path, "/etc/hostname")
    with files_opened() as opened:
        ran = run_drift(capsys, folder, folder, "--out", tmp_path / "out")
    assert ran.code == 2 and 'scenarios[0].file: "/etc/hostname" is outside the recording\'s folder' in ran.err
    assert "/etc/hostname" not in opened


def test_a_link_that_resolves_outside_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], outside: Path
) -> None:
    folder = _naming(tmp_path, "x.har")
    (folder / "x.har").symlink_to(outside)
    with files_opened() as opened:
        ran = run_drift(capsys, folder, folder, "--out", tmp_path / "out")
    expected = 'scenarios[0].file: "x.har" is a link to a file outside the recording\'s folder'
    _refused(ran.code, ran.err, opened, outside, expected)


def test_a_linked_folder_that_leads_outside_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], outside: Path
) -> None:
    folder = _naming(tmp_path, "elsewhere/outside.har")
    (folder / "elsewhere").symlink_to(outside.parent, target_is_directory=True)
    with files_opened() as opened:
        ran = run_drift(capsys, folder, folder, "--out", tmp_path / "out")
    _refused(ran.code, ran.err, opened, outside, '"elsewhere/outside.har" is a link to a file outside')


def test_an_index_that_links_outside_is_refused_unread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = write_recording(tmp_path / "elsewhere", {"a sale": sale_archive()})
    folder = tmp_path / "recording"
    folder.mkdir()
    (folder / "index.json").symlink_to(elsewhere / "index.json")
    with files_opened() as opened:
        ran = run_drift(capsys, folder, folder, "--out", tmp_path / "out")
    assert ran.code == 2 and '"index.json" is a link to a file outside the recording\'s folder' in ran.err
    assert str((elsewhere / "index.json").resolve()) not in opened


def test_a_file_name_with_a_nul_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _naming(tmp_path, "x.har\u0000../../etc/hostname")
    ran = run_drift(capsys, folder, folder, "--out", tmp_path / "out")
    assert ran.code == 2 and 'scenarios[0].file: "x.har\\x00../../etc/hostname": a file name holds no NUL' in ran.err


def test_files_in_a_subfolder_and_links_that_stay_inside_are_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_recording(tmp_path / "recording", {"a sale": sale_archive(), "another": sale_archive("another")},
                             files={"a sale": "sales/a.har", "another": "b.har"})  # fmt: skip
    os.replace(folder / "b.har", folder / "real-b.har")
    (folder / "b.har").symlink_to("sales/../real-b.har")
    with files_opened() as opened:
        ran = run_drift(capsys, folder, folder, "--out", tmp_path / "out")
    assert (ran.code, ran.err) == (0, ""), ran.out
    assert str((folder / "real-b.har").resolve()) in opened and str((folder / "sales" / "a.har").resolve()) in opened


def test_the_notebook_view_refuses_an_entry_outside_too(tmp_path: Path, outside: Path) -> None:
    folder = _naming(tmp_path, "../outside.har")
    report = DriftReport(str(folder), str(folder), [], 1, folders=(str(folder), str(folder)))
    with files_opened() as opened, pytest.raises(RecordingError, match="outside the recording's folder"):
        side_by_side(report, "a sale")
    assert str(outside.resolve()) not in opened
