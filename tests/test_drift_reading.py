"""A recording ``gatekit drift`` cannot read is said as such: exit 2 ("could not run", as every command's), one line
naming the file and, where it can, the entry, the field and what was expected; never exit 1 (drift found), never
"a bug of gatekit".  The corpus breaks one thing at a time, in the archive or in the index; in both modes (two
recordings compared, or a replay) the error comes before anything is compared or replayed.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_drift_recordings import run_drift, sale_archive, write_recording
from toolkit import cli
from toolkit.drift import RecordingError, read_recording
from toolkit.drift.archive import archive_of

Archive = dict[str, Any]
GOOD = json.dumps(sale_archive(), indent=1)


def _set(path: str, value: object) -> Callable[[Archive], None]:
    """Set the field at ``path`` (``log.entries.0.response.status``) of an archive."""

    def change(archive: Archive) -> None:
        *parents, last = path.split(".")
        target: Any = archive
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if value is _DELETE:
            del target[last]
        elif isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return change


_DELETE = object()
E0 = "log.entries.0"


def _callback_query(query: object) -> Callable[[Archive], None]:
    """The callback as a GET: its fields in the query string (``query``)."""

    def change(archive: Archive) -> None:
        request = archive["log"]["entries"][2]["request"]
        del request["postData"]
        request["queryString"] = query

    return change


# (id, the archive as bytes, or a change to a good one; what the message says after the file's name)
BROKEN_ARCHIVES: list[tuple[str, bytes | Callable[[Archive], None], str]] = [
    ("empty-file", b"", "an empty file, where JSON is expected"),
    ("only-white-space", b"  \n\t\n", "no JSON in it (only white space)"),
    ("not-json", b"HTTP/1.1 200 OK\r\n", "not JSON: Expecting value at line 1, column 1"),
    ("truncated", GOOD[: len(GOOD) // 2].encode(), "not JSON: it ends early, after line"),
    ("invalid-utf8", b'{"log": {"entries": [], "comment": "caf\xe9"}}', "not UTF-8 text (byte 39 is 0xe9)"),
    (
        "lone-surrogate",
        b'{"log": {"entries": [], "comment": "\\ud800"}}',
        'log.comment: not Unicode text (a lone surrogate, "\\ud800")',
    ),
    (
        "nested-too-deep",
        b'{"log": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "not JSON a recording holds: arrays and objects nested too deep",
    ),
    (
        "a-5000-digit-number",
        b'{"log": {"entries": [], "comment": ' + b"9" * 5000 + b"}}",
        "not JSON a recording holds: a number of thousands of digits",
    ),
    ("top-level-array", b"[]", "the document: expected an object, got an array"),
    ("top-level-text", b'"a HAR"', 'the document: expected an object, got "a HAR"'),
    ("no-log", b"{}", "log: expected an object, got nothing"),
    ("log-a-number", b'{"log": 5}', "log: expected an object, got 5"),
    ("no-entries", _set("log.entries", _DELETE), "log.entries: expected an array, got nothing"),
    ("entries-an-object", _set("log.entries", {}), "log.entries: expected an array, got an object"),
    ("entry-a-number", _set(E0, 5), "log.entries[0]: expected an object, got 5"),
    ("no-request", _set(f"{E0}.request", _DELETE), "log.entries[0].request: expected an object, got nothing"),
    ("no-response", _set(f"{E0}.response", None), "log.entries[0].response: expected an object, got null"),
    (
        "status-text",
        _set(f"{E0}.response.status", "abc"),
        'log.entries[0].response.status: expected an integer, got "abc"',
    ),
    (
        "status-text-digits",
        _set(f"{E0}.response.status", "200"),
        'log.entries[0].response.status: expected an integer, got "200"',
    ),
    (
        "status-true",
        _set(f"{E0}.response.status", True),
        "log.entries[0].response.status: expected an integer, got true",
    ),
    ("status-1e999", b"", "log.entries[0].response.status: expected an integer, got inf"),  # (written below)
    (
        "status-70000",
        _set(f"{E0}.response.status", 70000),
        "log.entries[0].response.status: expected an HTTP status (100 to 999, or 0 for no answer), got 70000",
    ),
    (
        "started-not-a-date",
        _set(f"{E0}.startedDateTime", "yesterday"),
        "log.entries[0].startedDateTime: expected an ISO 8601 date and time with its time zone",
    ),
    (
        "started-without-zone",
        _set(f"{E0}.startedDateTime", "2026-11-25T21:55:00"),
        "log.entries[0].startedDateTime: expected an ISO 8601 date and time with its time zone "
        '(2026-11-25T21:55:56.172+00:00), got "2026-11-25T21:55:00"',
    ),
    (
        "started-a-number",
        _set(f"{E0}.startedDateTime", 1764107700),
        "log.entries[0].startedDateTime: expected text, got 1764107700",
    ),
    (
        "time-text",
        _set(f"{E0}.time", "fast"),
        'log.entries[0].time: expected a number of milliseconds, 0 or more, got "fast"',
    ),
    (
        "time-negative",
        _set(f"{E0}.time", -5),
        "log.entries[0].time: expected a number of milliseconds, 0 or more, got -5",
    ),
    ("time-nan", b"", "log.entries[0].time: expected a number of milliseconds, 0 or more, got nan"),  # (written below)
    (
        "time-of-ages",  # (found by the test of any field changed: 10**30 ms was more than a date can take)
        _set(f"{E0}.time", 10**30),
        "log.entries[0].time: expected a number of milliseconds, at most 604800000 (a week), got 1000000000000000000",
    ),
    (
        "started-at-the-end-of-time",
        _set(f"{E0}.startedDateTime", "9999-12-31T23:59:59.999+00:00"),
        "log.entries[0].startedDateTime: expected a date before the year 9999, got",
    ),
    ("url-an-array", _set(f"{E0}.request.url", []), "log.entries[0].request.url: expected text, got an array"),
    ("headers-an-object", _set(f"{E0}.request.headers", {}), "log.entries[0].request.headers: expected an array"),
    (
        "header-value-a-number",
        _set(f"{E0}.request.headers.0.value", 5),
        "log.entries[0].request.headers[0].value: expected text, got 5",
    ),
    (
        "post-data-text",
        _set(f"{E0}.request.postData", "amount=1"),
        "log.entries[0].request.postData: expected an object",
    ),
    (
        "params-a-number",
        _set(f"{E0}.request.postData.params", 5),
        "log.entries[0].request.postData.params: expected an array, got 5",
    ),
    (
        "param-value-a-number",
        _set(f"{E0}.request.postData.params.2.value", 10.42),
        "log.entries[0].request.postData.params[2].value: expected text, got 10.42",
    ),
    (
        "param-without-a-name",
        _set(f"{E0}.request.postData.params.2.name", _DELETE),
        "log.entries[0].request.postData.params[2].name: expected text, got nothing",
    ),
    (
        "query-string-of-text",
        _callback_query(["a=b"]),
        'log.entries[2].request.queryString[0]: expected an object, got "a=b"',
    ),
    ("no-content", _set(f"{E0}.response.content", _DELETE), "log.entries[0].response.content: expected an object"),
    (
        "content-text-a-number",
        _set(f"{E0}.response.content.text", 5),
        "log.entries[0].response.content.text: expected text, got 5",
    ),
    ("kind-a-number", _set(f"{E0}._kind", 1), "log.entries[0]._kind: expected text, got 1"),
    (
        "operation-an-object",
        _set(f"{E0}._operation", {"name": "sale"}),
        "log.entries[0]._operation: expected text, got an object",
    ),
    ("action-text", _set(f"{E0}._action", "pay"), 'log.entries[0]._action: expected an object, got "pay"'),
    (
        "action-card-nested",
        _set(f"{E0}._action", {"action": "pay", "card": {"number": {"digits": []}}}),
        "log.entries[0]._action.card.number: expected text, a number or true/false, got an object",
    ),
    ("pages-a-number", _set("log.pages", 5), "log.pages: expected an array, got 5"),
    ("page-title-a-list", _set("log.pages.0.title", ["a sale"]), "log.pages[0].title: expected text, got an array"),
]
BROKEN_ARCHIVES_WRITTEN = {
    "status-1e999": GOOD.replace('"status": 200', '"status": 1e999', 1).encode(),
    "time-nan": GOOD.replace('"time": 50.0', '"time": NaN', 1).encode(),
}


def _broken(tmp_path: Path, archive: bytes | Callable[[Archive], None], case: str) -> Path:
    if case in BROKEN_ARCHIVES_WRITTEN:
        data = BROKEN_ARCHIVES_WRITTEN[case]
        assert data != GOOD.encode()
    elif isinstance(archive, bytes):
        data = archive
    else:
        changed = json.loads(GOOD)
        archive(changed)
        data = json.dumps(changed, indent=1).encode()
    return write_recording(tmp_path / "broken", {"a sale": sale_archive(), "a broken sale": data},
                           files={"a broken sale": "x.har"})  # fmt: skip


def _says_it_cannot_read(code: int, err: str, expected: str) -> None:
    assert code == 2, err
    assert "bug of gatekit" not in err and "Traceback" not in err, err
    assert len(err.splitlines()) == 1, err
    assert expected in err, err


@pytest.mark.parametrize(("archive", "expected"), [case[1:] for case in BROKEN_ARCHIVES],
                         ids=[case[0] for case in BROKEN_ARCHIVES])  # fmt: skip
def test_a_broken_archive_is_a_recording_drift_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest, archive: Any, expected: str
) -> None:
    case = request.node.callspec.id
    broken = _broken(tmp_path, archive, case)
    good = write_recording(tmp_path / "good", {"a sale": sale_archive(), "a broken sale": sale_archive()})
    ran = run_drift(capsys, broken, good, "--out", tmp_path / "out")
    _says_it_cannot_read(ran.code, ran.err, f"gatekit drift: {broken / 'x.har'}: {expected}")
    assert not (tmp_path / "out").exists()  # (no report of a comparison that did not happen)


def test_the_message_names_the_file_the_entry_the_field_and_what_was_expected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = sale_archive()
    archive["log"]["entries"].append(json.loads(json.dumps(archive["log"]["entries"][1])))
    archive["log"]["entries"][3]["response"]["status"] = "abc"
    folder = write_recording(tmp_path / "recordings", {"a sale": archive}, files={"a sale": "x.har"})
    ran = run_drift(capsys, folder, folder, "--out", tmp_path / "out")
    assert (ran.code, ran.err) == (
        2,
        f'gatekit drift: {folder}/x.har: log.entries[3].response.status: expected an integer, got "abc"\n',
    )


def test_the_second_recording_is_read_as_carefully_as_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write_recording(tmp_path / "good", {"a sale": sale_archive()})
    broken = write_recording(tmp_path / "other", {"a sale": b'{"log": {"entries": {}}}'}, files={"a sale": "x.har"})
    ran = run_drift(capsys, good, broken, "--out", tmp_path / "out")
    _says_it_cannot_read(ran.code, ran.err, f"{broken / 'x.har'}: log.entries: expected an array, got an object")


def _index(tmp_path: Path, text: str | None, *, folder_as_index: bool = False) -> Path:
    folder = write_recording(tmp_path / "broken", {"a sale": sale_archive()}, files={"a sale": "a.har"})
    (folder / "index.json").unlink()
    if folder_as_index:
        (folder / "index.json").mkdir()
    elif text is not None:
        (folder / "index.json").write_text(text, encoding="utf-8")
    return folder


def _scenarios(*scenarios: object, started: object = "2026-11-25T21:55:00.000+00:00") -> str:
    return json.dumps({"profile": "test", "started": started, "scenarios": list(scenarios)})


A = {"name": "a sale", "file": "a.har"}
BROKEN_INDEXES: list[tuple[str, str | None, str]] = [
    ("no-index", None, "no index.json: not a gatekit recording"),
    ("empty", "", "index.json: an empty file, where JSON is expected"),
    ("not-json", "scenarios: a sale", "index.json: not JSON: Expecting value at line 1, column 1"),
    ("an-array", "[]", "index.json: expected an object (profile, started, scenarios...), got an array"),
    (
        "no-scenarios",
        '{"profile": "test"}',
        "index.json: scenarios: expected an array of the run's scenarios, got nothing",
    ),
    ("scenarios-an-object", '{"scenarios": {"a sale": "a.har"}}', "index.json: scenarios: expected an array"),
    (
        "scenario-text",
        _scenarios("a.har"),
        'index.json: scenarios[0]: expected an object (name, file, tags...), got "a.har"',
    ),
    ("no-name", _scenarios({"file": "a.har"}), "index.json: scenarios[0].name: expected text, got nothing"),
    ("no-file", _scenarios({"name": "a sale"}), "index.json: scenarios[0].file: expected text, got nothing"),
    ("file-a-number", _scenarios({"name": "a sale", "file": 5}), "index.json: scenarios[0].file: expected text, got 5"),
    (
        "file-missing",
        _scenarios({"name": "a sale", "file": "gone.har"}),
        'index.json: scenarios[0].file: "gone.har": no such file in the recording\'s folder',
    ),
    (
        "file-the-folder",
        _scenarios({"name": "a sale", "file": "."}),
        'index.json: scenarios[0].file: ".": a folder, where a file is expected',
    ),
    (
        "tags-text",
        _scenarios({**A, "tags": "simulator"}),
        'index.json: scenarios[0].tags: expected an array of text, got "simulator"',
    ),
    ("started-a-number", _scenarios(A, started=5), "index.json: started: expected a date and time (text), got 5"),
    (
        "nested-too-deep",
        '{"scenarios": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "index.json: not JSON a recording holds",
    ),
]


@pytest.mark.parametrize(("text", "expected"), [case[1:] for case in BROKEN_INDEXES],
                         ids=[case[0] for case in BROKEN_INDEXES])  # fmt: skip
def test_a_broken_index_is_a_recording_drift_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None, expected: str
) -> None:
    folder = _index(tmp_path, text)
    good = write_recording(tmp_path / "good", {"a sale": sale_archive()})
    ran = run_drift(capsys, folder, good, "--out", tmp_path / "out")
    _says_it_cannot_read(ran.code, ran.err, expected)
    assert str(folder) in ran.err


def test_an_index_that_is_a_folder_is_said_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _index(tmp_path, None, folder_as_index=True)
    ran = run_drift(capsys, folder, folder, "--out", tmp_path / "out")
    _says_it_cannot_read(ran.code, ran.err, f"{folder / 'index.json'}: a folder, where a file is expected")


@pytest.mark.parametrize("what", ["missing", "a-file"])
def test_a_recording_that_is_not_a_folder_is_said_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], what: str
) -> None:
    path = tmp_path / "recording"
    if what == "a-file":
        path.write_text(GOOD)
    ran = run_drift(capsys, path, "--out", tmp_path / "out")
    said = "no such folder" if what == "missing" else "a file, not a recording's folder"
    _says_it_cannot_read(ran.code, ran.err, f"{path}: {said}")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_in_place_of_an_archive_is_refused_without_waiting_on_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_recording(tmp_path / "broken", {"a sale": None}, files={"a sale": "x.har"})
    os.mkfifo(folder / "x.har")
    with _unblocking_readers(folder / "x.har") as readers:
        ran = run_drift(capsys, folder, folder, "--out", tmp_path / "out")
    assert readers == []  # (opened, the pipe waits for a writer for ever: here the writer comes, and says so)
    _says_it_cannot_read(
        ran.code, ran.err, 'scenarios[0].file: "x.har": not a regular file (a device, a pipe or a socket)'
    )


@contextlib.contextmanager
def _unblocking_readers(fifo: Path) -> Iterator[list[str]]:
    """Meanwhile, a reader that opens ``fifo`` gets a writer that closes at once (end of file), and is listed."""
    done, readers = threading.Event(), []

    def writer() -> None:
        while not done.wait(0.01):  # (until the test is over: a reader, if any, gets its end of file)
            try:
                handle = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: no reader
                continue
            os.close(handle)
            readers.append(str(fifo))

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        yield readers
    finally:
        done.set()
        thread.join()


@pytest.mark.parametrize(
    "case", ["status-text", "no-entries", "nested-too-deep", "invalid-utf8", "action-card-nested", "time-nan"]
)
def test_a_replay_of_a_broken_recording_stops_before_the_simulator_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    archive = next(archive for name, archive, _ in BROKEN_ARCHIVES if name == case)
    expected = next(expected for name, _, expected in BROKEN_ARCHIVES if name == case)
    broken = _broken(tmp_path, archive, case)
    ran = run_drift(capsys, broken, "--out", tmp_path / "out")
    _says_it_cannot_read(ran.code, ran.err, f"{broken / 'x.har'}: {expected}")
    assert not (tmp_path / "out" / "replay").exists()  # (the replay's folder is made when the simulator starts)


def test_the_command_as_users_start_it_exits_2_with_one_line(tmp_path: Path) -> None:
    broken = _broken(tmp_path, _set(f"{E0}.response.status", "abc"), "status-text")
    command = [sys.executable, "-m", "toolkit.cli", "drift", str(broken), str(broken), "--out", str(tmp_path / "o")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f'gatekit drift: {broken}/x.har: log.entries[0].response.status: expected an integer, got "abc"\n'
    )


def test_a_recording_read_as_a_library_raises_one_error_type(tmp_path: Path) -> None:
    broken = _broken(tmp_path, b'{"log": 5}', "log-a-number")
    with pytest.raises(RecordingError, match=r"x\.har: log: expected an object, got 5"):
        read_recording(broken)
    with pytest.raises(RecordingError, match=r"^the archive: log\.entries\[0\]: expected an object, got 5$"):
        archive_of({"log": {"entries": [5]}})
    assert issubclass(RecordingError, ValueError)  # (callers that caught read_index's ValueError still do)


def test_what_har_leaves_optional_is_read_without_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No time (0), no headers, no query string, a parameter without a value (HAR: optional), no pages, a _kind
    drift does not know (skipped), an archive with a byte order mark, text escaped as ASCII (an emoji as a pair of
    surrogates): read, and compared."""
    archive = sale_archive()
    archive["log"]["entries"][0]["request"]["postData"]["params"][1]["value"] = "Order \U0001f600"
    for entry in archive["log"]["entries"]:
        del entry["time"], entry["request"]["headers"], entry["request"]["queryString"]
    del archive["log"]["entries"][0]["request"]["postData"]["params"][0]["value"]
    archive["log"]["entries"].append({**archive["log"]["entries"][2], "_kind": "websocket"})
    del archive["log"]["pages"]
    data = b"\xef\xbb\xbf" + json.dumps(archive, ensure_ascii=True).encode()
    assert b"\\ud83d\\ude00" in data
    a = write_recording(tmp_path / "a", {"a sale": data})
    ran = run_drift(capsys, a, a, "--out", tmp_path / "out")
    assert (ran.code, ran.err) == (0, ""), ran.out


ODD_VALUES = st.sampled_from([None, True, 0, -1, 10**30, 1.5, float("inf"), float("nan"), "", "\x1b[2J", "visit",
                              "callback", "2026-01-01", "2026-01-01T00:00:00Z", "453897" + "*" * 40, [], [1], {},
                              {"a": {"b": []}}])  # fmt: skip


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        found += _paths(child, (*path, key))
    return found


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.data())
def test_any_field_of_an_archive_changed_is_compared_or_said_unreadable_never_a_bug(data: st.DataObject) -> None:
    """Whatever one field (or three) of a good archive becomes (another type, null, a date without its zone, an
    infinite number, an escape sequence) or loses: drift compares it (0, 1) or says it cannot read it (2)."""
    archive = json.loads(GOOD)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _paths(archive)[1:]
        if not paths:  # (the document is {} now)
            break
        *parents, last = data.draw(st.sampled_from(paths))
        target = archive
        for key in parents:
            target = target[key]
        if isinstance(target, dict) and data.draw(st.booleans()):
            target.pop(last, None)
        elif isinstance(target, (dict, list)):
            target[last] = copy.deepcopy(data.draw(ODD_VALUES))  # (a list or an object of its own)
    with tempfile.TemporaryDirectory() as work:
        a = write_recording(Path(work) / "a", {"a sale": json.dumps(archive).encode()})
        b = write_recording(Path(work) / "b", {"a sale": sale_archive()})
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = cli.main(["drift", str(a), str(b), "--out", str(Path(work) / "out")])
    assert code in (0, 1, 2) and "bug of gatekit" not in err.getvalue(), err.getvalue()
    assert code != 2 or err.getvalue().startswith(f"gatekit drift: {a}/scenario-0.har: "), err.getvalue()
