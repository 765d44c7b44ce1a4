"""Reading a recorded run from disk, at the edge: ``index.json`` (merged with the parallel workers' parts) and the
JSON of each archive, with every way they can be broken said as one error, ``RecordingError``.

A recording is read, not trusted: a file is read only when it is a regular file inside the recording's folder
(the index names ``../outside.har`` or ``/etc/hostname``: refused, never opened), no larger than
``MAX_ARCHIVE_BYTES``, UTF-8 JSON (RFC 8259) nested no deeper than Python can read, without lone surrogates.
Messages name the file and, where they can, the entry and the field (``index.json: scenarios[2].file``), with
control characters escaped: they are printed.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path, PurePath
from typing import Any

from toolkit.terminal import printable

INDEX = "index.json"
# A scenario's archive is a few dozen kB: 64 MB is pages or answers of megabytes, or thousands of orders.
MAX_ARCHIVE_BYTES = 64 * 1024 * 1024
MAX_INDEX_BYTES = 16 * 1024 * 1024  # (tens of thousands of scenarios)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")  # how JSON text can hold a surrogate
_SURROGATE = re.compile("[\ud800-\udfff]")


MISSING = object()  # a field that is not there (``shown``: "nothing")


class RecordingError(ValueError):
    """A recording that cannot be read: the file, where in it (an entry, a field) and what was expected."""


def shown(value: object, limit: int = 40) -> str:
    """A value of a recording as an error message shows it: text quoted, cut, its control characters escaped."""
    if value is MISSING:
        return "nothing"
    if isinstance(value, str):
        cut = value[:limit] + ("..." if len(value) > limit else "")
        return '"' + printable(cut).replace('"', '\\"') + '"'
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        text = repr(value)
        return text if len(text) <= limit else f"a number of {len(text)} digits"
    if isinstance(value, dict):
        return "an object"
    return "an array" if isinstance(value, list) else type(value).__name__


def _where(path: Path) -> str:
    return printable(str(path))


def inside(folder: Path, name: object, where: str) -> Path:
    """``folder / name`` for a file the index names, resolved: RecordingError when the name is not a relative path
    that stays inside ``folder`` (``..``, an absolute path, a link that resolves outside)."""
    if not isinstance(name, str) or not name:
        raise RecordingError(f"{where}: expected the name of a file in the recording's folder, got {shown(name)}")
    if "\0" in name:
        raise RecordingError(f"{where}: {shown(name)}: a file name holds no NUL character")
    relative = PurePath(name)
    if relative.is_absolute() or ".." in relative.parts:
        raise RecordingError(
            f"{where}: {shown(name)} is outside the recording's folder: an index names files inside its folder only"
        )
    root = folder.resolve()
    resolved = (root / relative).resolve()
    if not resolved.is_relative_to(root):
        raise RecordingError(
            f"{where}: {shown(name)} is a link to a file outside the recording's folder: an index names files inside "
            "its folder only"
        )
    return resolved


def read_json(path: Path, *, limit: int = MAX_ARCHIVE_BYTES, shown_as: Path | None = None) -> Any:
    """The JSON document of the file ``path`` (``shown_as`` names it in errors): RecordingError when it is not a
    regular file, is larger than ``limit`` bytes, is not UTF-8, not JSON, nested too deep, or holds a lone
    surrogate."""
    name = _where(shown_as or path)
    text = _text(path, name, limit)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordingError(f"{name}: {_json_problem(exc, text)}") from None
    except RecursionError:
        raise RecordingError(f"{name}: not JSON a recording holds: arrays and objects nested too deep") from None
    except ValueError:  # a number beyond what Python converts (sys.get_int_max_str_digits(): 4300 digits)
        raise RecordingError(f"{name}: not JSON a recording holds: a number of thousands of digits") from None
    if _SURROGATE_ESCAPE.search(text):
        _no_lone_surrogate(document, name)
    return document


def _text(path: Path, name: str, limit: int) -> str:
    try:
        status = os.stat(path)
    except FileNotFoundError:
        raise RecordingError(f"{name}: no such file") from None
    except OSError as exc:
        raise RecordingError(f"{name}: cannot be read ({printable(exc.strerror or str(exc))})") from None
    if stat.S_ISDIR(status.st_mode):
        raise RecordingError(f"{name}: a folder, where a file is expected")
    if not stat.S_ISREG(status.st_mode):
        raise RecordingError(f"{name}: not a regular file (a device, a pipe or a socket)")
    if status.st_size > limit:
        raise RecordingError(
            f"{name}: {_megabytes(status.st_size)}, larger than gatekit drift reads ({_megabytes(limit)} a file; "
            "a scenario's archive is a few dozen kB): not read"
        )
    if status.st_size == 0:
        raise RecordingError(f"{name}: an empty file, where JSON is expected")
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise RecordingError(f"{name}: cannot be read ({printable(exc.strerror or str(exc))})") from None
    if len(data) > limit:  # (it grew since)
        raise RecordingError(f"{name}: larger than gatekit drift reads ({_megabytes(limit)} a file)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RecordingError(f"{name}: not UTF-8 text (byte {exc.start} is 0x{data[exc.start]:02x})") from None


def _megabytes(size: int) -> str:
    return f"{size / 1024 / 1024:.0f} MB" if size >= 1024 * 1024 else f"{size} bytes"


def _json_problem(exc: json.JSONDecodeError, text: str) -> str:
    if not text.strip():
        return "no JSON in it (only white space)"
    if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
        return f"not JSON: it ends early, after line {text.count(chr(10)) + 1} (a file cut short?)"
    return f"not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"


def _no_lone_surrogate(document: Any, name: str) -> None:
    """RecordingError at the first text holding half of a UTF-16 pair (``"\\ud800"``): not Unicode text, it cannot
    be printed, written or sent."""
    for where, value in _strings(document):
        if _SURROGATE.search(value):
            raise RecordingError(f"{name}: {where or 'a name'}: not Unicode text (a lone surrogate, {shown(value)})")


def _strings(document: Any) -> Iterator[tuple[str, str]]:
    """(where, text) of every name and string value of a JSON document, without recursion."""
    stack: list[tuple[str, Any]] = [("", document)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            yield where, value
        elif isinstance(value, dict):
            for key, item in value.items():
                yield where, key
                stack.append((f"{where}.{key}" if where else key, item))
        elif isinstance(value, list):
            stack.extend((f"{where}[{number}]", item) for number, item in enumerate(value))


def read_index(folder: Path) -> dict[str, Any]:
    """``folder/index.json`` with the scenarios of every part (``index.<worker>.json`` of parallel workers),
    in the order they started; RecordingError (a ValueError) saying what is wrong when the folder is not a
    recording or its index is broken: each scenario has a ``name`` and a ``file`` inside the folder."""
    folder = Path(folder)
    if not folder.is_dir():
        what = "no such folder" if not folder.exists() else "a file, not a recording's folder"
        raise RecordingError(f"{_where(folder)}: {what} (gatekit certify --record {_where(folder)} makes one)")
    parts = sorted(folder.glob("index*.json"))
    if not parts:
        raise RecordingError(
            f"{_where(folder)}: no {INDEX}: not a gatekit recording (gatekit certify --record {_where(folder)})"
        )
    indexes = [_index_part(folder, part) for part in parts]
    first = min(indexes, key=lambda index: str(index.get("started", "")))  # (the run started when its first part did)
    merged: dict[str, Any] = dict(first)
    merged["scenarios"] = sorted(
        (scenario for index in indexes for scenario in index["scenarios"]), key=lambda s: s.get("started", "")
    )
    return merged


def _index_part(folder: Path, part: Path) -> dict[str, Any]:
    name = _where(part)
    index = read_json(inside(folder, part.name, name), limit=MAX_INDEX_BYTES, shown_as=part)
    if not isinstance(index, dict):
        raise RecordingError(f"{name}: expected an object (profile, started, scenarios...), got {shown(index)}")
    if not isinstance(index.get("started", ""), str):
        raise RecordingError(f"{name}: started: expected a date and time (text), got {shown(index['started'])}")
    scenarios = index.get("scenarios", MISSING)
    if not isinstance(scenarios, list):
        raise RecordingError(f"{name}: scenarios: expected an array of the run's scenarios, got {shown(scenarios)}")
    for number, scenario in enumerate(scenarios):
        _scenario(folder, scenario, f"{name}: scenarios[{number}]")
    return index


def _scenario(folder: Path, scenario: Any, where: str) -> None:
    if not isinstance(scenario, dict):
        raise RecordingError(f"{where}: expected an object (name, file, tags...), got {shown(scenario)}")
    for key in ("name", "file"):
        if not isinstance(scenario.get(key), str) or not scenario[key]:
            raise RecordingError(f"{where}.{key}: expected text, got {shown(scenario.get(key, MISSING))}")
    for key in ("nodeid", "outcome", "started"):
        if not isinstance(scenario.get(key, ""), str):
            raise RecordingError(f"{where}.{key}: expected text, got {shown(scenario[key])}")
    tags = scenario.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise RecordingError(f"{where}.tags: expected an array of text, got {shown(tags)}")
    path = inside(folder, scenario["file"], f"{where}.file")
    if not path.is_file():
        what = "no such file in the recording's folder"
        if path.is_dir():
            what = "a folder, where a file is expected"
        elif path.exists():
            what = "not a regular file (a device, a pipe or a socket)"
        raise RecordingError(f"{where}.file: {shown(scenario['file'])}: {what}")


def archive_file(folder: Path, scenario: dict[str, Any]) -> Path:
    """The archive of a scenario of ``read_index(folder)``, resolved inside ``folder``."""
    return inside(Path(folder), scenario["file"], f"{_where(Path(folder) / INDEX)}: {shown(scenario['name'])}")
