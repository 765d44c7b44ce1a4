"""A scenario's archive (HAR 1.2) as drift reads it: typed entries, each field checked once, here.

Only what drift reads is kept: when an entry started, how long it took, the request's address, headers and
fields, the answer's HTTP status and (for the merchant's exchanges) its decoded fields, and gatekit's own
``_kind``, ``_operation``, ``_action``, ``_step``, ``_error``, ``_signed_with``.  Page bodies are not kept: drift
compares no page (the replay's payer acts on the simulator's).  A field of the wrong type, a date without its
time zone, a status that is not an HTTP status: ``RecordingError`` naming the file, the entry and the field
(``x.har: log.entries[3].response.status: expected an integer, got "abc"``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from toolkit.recording.reading import MISSING, RecordingError, read_json, shown
from toolkit.terminal import printable
from toolkit.wire import DecodeError, asks_for_json, decode_response

Pairs = tuple[tuple[str, str], ...]
Action = dict[str, Any]  # what the payer did: text, true/false, numbers, and the card (an object of those)


@dataclass(frozen=True)
class Entry:
    """One entry of an archive: the fields drift reads, typed (HAR 1.2's names; gatekit's own start with ``_``)."""

    started: datetime  # startedDateTime
    time: float  # milliseconds, as HAR counts
    url: str  # request.url
    headers: Pairs  # request.headers
    fields: dict[str, str]  # request.postData.params, else request.queryString
    status: int  # response.status: 0 for no answer
    answer: dict[str, str] = field(default_factory=dict)  # an exchange's response.content.text, decoded
    kind: str = "exchange"  # _kind: exchange, visit, callback, redirect
    operation: str = ""  # _operation
    action: Action | None = None  # _action
    step: str = ""  # _step
    error: str = ""  # _error
    signed_with: str = ""  # _signed_with

    @property
    def elapsed(self) -> float:
        """Seconds the answer took."""
        return self.time / 1000

    def header(self, name: str) -> str:
        """The first request header of that name (in any case), "" when there is none."""
        wanted = name.lower()
        return next((value for key, value in self.headers if key.lower() == wanted), "")

    @property
    def asked_json(self) -> bool:
        return asks_for_json(self.header("accept"))


@dataclass(frozen=True)
class Archive:
    """A scenario's archive: its title (the page's) and its entries in the order they started."""

    source: str  # the file, as messages name it
    title: str
    entries: list[Entry]


class _Problem(Exception):
    def __init__(self, where: str, expected: str, got: object) -> None:
        super().__init__(f"{where}: expected {expected}, got {shown(got)}")


def read_archive(path: Path, shown_as: Path | None = None) -> Archive:
    """The archive of the file ``path`` (``shown_as`` names it in messages); RecordingError for a file that is
    not one."""
    return archive_of(read_json(path, shown_as=shown_as), printable(str(shown_as or path)))


def archive_of(document: object, source: str = "the archive") -> Archive:
    """A HAR document (parsed JSON) as an ``Archive``; RecordingError naming ``source``, the entry and the field."""
    try:
        log = _object(_object(document, "the document").get("log", MISSING), "log")
        entries = _array(log.get("entries", MISSING), "log.entries")
        typed = [_entry(item, f"log.entries[{number}]") for number, item in enumerate(entries)]
        title = _title(log.get("pages"))
    except _Problem as problem:
        raise RecordingError(f"{source}: {problem}") from None
    return Archive(source, title, sorted(typed, key=lambda entry: entry.started))


def _entry(item: object, where: str) -> Entry:
    item = _object(item, where)
    request = _object(item.get("request", MISSING), f"{where}.request")
    response = _object(item.get("response", MISSING), f"{where}.response")
    kind = _optional_text(item, "_kind", where) or "exchange"
    content = _object(response.get("content", MISSING), f"{where}.response.content")
    text = _optional_text(content, "text", f"{where}.response.content")
    return Entry(
        started=_started(item.get("startedDateTime", MISSING), f"{where}.startedDateTime"),
        time=_milliseconds(item.get("time", 0), f"{where}.time"),
        url=_text(request.get("url", MISSING), f"{where}.request.url"),
        headers=_pairs(request.get("headers", []), f"{where}.request.headers"),
        fields=_fields(request, f"{where}.request"),
        status=_status(response.get("status", MISSING), f"{where}.response.status"),
        answer=_answer(text) if kind == "exchange" else {},
        kind=kind,
        operation=_optional_text(item, "_operation", where),
        action=_action(item.get("_action"), f"{where}._action"),
        step=_optional_text(item, "_step", where),
        error=_optional_text(item, "_error", where),
        signed_with=_optional_text(item, "_signed_with", where),
    )


def _answer(text: str) -> dict[str, str]:
    try:
        return decode_response(text) if text else {}
    except DecodeError:
        return {}


def _object(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Problem(where, "an object", value)
    return value


def _array(value: object, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Problem(where, "an array", value)
    return value


def _text(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise _Problem(where, "text", value)
    return value


def _optional_text(container: Mapping[str, Any], key: str, where: str) -> str:
    value = container.get(key)
    return "" if value is None else _text(value, f"{where}.{key}")


# An exchange's time, at most: a week (drift adds it to the moment the exchange started; a longer one is no HTTP
# exchange, and a time of 10**30 ms is more than Python's dates hold).
MAX_MILLISECONDS = 7 * 24 * 3600 * 1000
LAST_YEAR = 9998  # (a moment of the year 9999 plus an exchange's time may be past the last date Python holds)


def _started(value: object, where: str) -> datetime:
    expected = "an ISO 8601 date and time with its time zone (2026-11-25T21:55:56.172+00:00)"
    try:
        moment = datetime.fromisoformat(_text(value, where))
    except ValueError:
        raise _Problem(where, expected, value) from None
    if moment.tzinfo is None:
        raise _Problem(where, expected, value)
    if moment.year > LAST_YEAR:
        raise _Problem(where, f"a date before the year {LAST_YEAR + 1}", value)
    return moment


def _milliseconds(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise _Problem(where, "a number of milliseconds, 0 or more", value)
    if value > MAX_MILLISECONDS:
        raise _Problem(where, f"a number of milliseconds, at most {MAX_MILLISECONDS} (a week)", value)
    return float(value)


def _status(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Problem(where, "an integer", value)
    if not (value == 0 or 100 <= value <= 999):
        raise _Problem(where, "an HTTP status (100 to 999, or 0 for no answer)", value)
    return value


def _pairs(value: object, where: str, *, value_optional: bool = False) -> Pairs:
    """HAR's lists of ``{"name", "value"}`` (headers, query strings, form parameters: ``value`` optional)."""
    items = _array(value, where)
    try:  # (the common case at the cost of one pass: a broken list is walked again, to say where)
        if value_optional:
            pairs = tuple((item["name"], item.get("value", "")) for item in items)
        else:
            pairs = tuple((item["name"], item["value"]) for item in items)
    except (TypeError, KeyError, AttributeError):
        pairs = ()
    if len(pairs) == len(items) and all(isinstance(name, str) and isinstance(text, str) for name, text in pairs):
        return pairs
    checked = []
    for number, item in enumerate(items):
        pair = _object(item, f"{where}[{number}]")
        name = _text(pair.get("name", MISSING), f"{where}[{number}].name")
        checked.append((name, _text(pair.get("value", "" if value_optional else MISSING), f"{where}[{number}].value")))
    return tuple(checked)


def _fields(request: Mapping[str, Any], where: str) -> dict[str, str]:
    """The form fields a request sent: ``postData.params``, else the query string (``fields_of``)."""
    params: Pairs = ()
    if request.get("postData") is not None:
        post = _object(request["postData"], f"{where}.postData")
        if post.get("params") is not None:
            params = _pairs(post["params"], f"{where}.postData.params", value_optional=True)
    if not params:
        params = _pairs(request.get("queryString", []), f"{where}.queryString")
    return dict(params)


def _action(value: object, where: str) -> Action | None:
    """What the payer did: an object of text, true/false and numbers, and objects of those (the card)."""
    if value is None:
        return None
    action = _object(value, where)
    for key, item in action.items():
        if isinstance(item, dict):
            for inner, scalar in item.items():
                _scalar(scalar, f"{where}.{key}.{inner}")
        else:
            _scalar(item, f"{where}.{key}")
    return dict(action)


def _scalar(value: object, where: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise _Problem(where, "a finite number", value)
    if value is not None and not isinstance(value, (str, bool, int, float)):
        raise _Problem(where, "text, a number or true/false", value)


def _title(pages: object) -> str:
    """The first page's title (a scenario's name), "" without pages."""
    if pages is None:
        return ""
    first = _array(pages, "log.pages")[:1]
    return _optional_text(_object(first[0], "log.pages[0]"), "title", "log.pages[0]") if first else ""


__all__ = ["Archive", "Entry", "archive_of", "read_archive"]
