"""HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/): the archive, and one entry per exchange.

Every entry is a request and its response as HAR writes them; gatekit adds, as the format allows (names
that start with ``_``): ``_party`` (who sent it: ``merchant``, ``payer``, ``gateway`` for callbacks and the
payer's redirect back to the merchant), ``_kind`` (``exchange``, ``visit``, ``callback``, ``redirect``),
``_operation`` (a catalogue operation), ``_action`` (what the payer did: ``pay`` with the card, masked;
``challenge`` right or wrong; ``method``; ``follow``; ``return``; ``open``) and ``_error`` (no answer).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from toolkit._version import __version__

HAR_VERSION = "1.2"
FORM_TYPE = "application/x-www-form-urlencoded"
Pairs = Iterable[tuple[str, str]]


def iso(moment: datetime) -> str:
    """``2026-11-25T21:55:56.172+00:00``: ISO 8601 with milliseconds, as HAR asks."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def _pairs(items: Pairs) -> list[dict[str, str]]:
    return [{"name": str(name), "value": str(value)} for name, value in items]


def entry(
    *,
    started: datetime,
    method: str,
    url: str,
    request_headers: Pairs = (),
    form: Pairs | None = None,
    status: int | None,
    response_headers: Pairs = (),
    body: str = "",
    mime_type: str = "",
    elapsed: float = 0.0,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One HAR entry: ``form`` is the request's form body (``postData``), ``status`` None for no answer."""
    headers = list(request_headers)
    query = parse_qsl(urlsplit(url).query, keep_blank_values=True)
    request: dict[str, Any] = {
        "method": method.upper(),
        "url": url,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": _pairs(headers),
        "queryString": _pairs(query),
        "headersSize": -1,
        "bodySize": -1,
    }
    if form is not None:
        items = list(form)
        request["postData"] = {"mimeType": FORM_TYPE, "params": _pairs(items)}  # (HAR: params or text, not both)
        request["bodySize"] = len(urlencode(items).encode())
    encoded = body.encode()
    response = {
        "status": status if status is not None else 0,
        "statusText": "" if status is not None else "no answer",
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": _pairs(response_headers),
        "content": {"size": len(encoded), "mimeType": mime_type or "text/plain", "text": body},
        "redirectURL": "",
        "headersSize": -1,
        "bodySize": len(encoded) if status is not None else -1,
    }
    milliseconds = round(max(elapsed, 0.0) * 1000, 3)
    return {
        "startedDateTime": iso(started),
        "time": milliseconds,
        "request": request,
        "response": response,
        "cache": {},
        "timings": {"send": 0, "wait": milliseconds, "receive": 0},
        **{f"_{name}": value for name, value in (extra or {}).items()},
    }


def archive(entries: list[dict[str, Any]], *, title: str = "", comment: str = "") -> dict[str, Any]:
    """The HAR document: gatekit as the creator, one page (the scenario) when ``title`` is given."""
    ordered = sorted(entries, key=lambda item: item["startedDateTime"])
    log: dict[str, Any] = {"version": HAR_VERSION, "creator": {"name": "gatekit", "version": __version__}}
    if title:
        started = ordered[0]["startedDateTime"] if ordered else iso(datetime.now(UTC))
        log["pages"] = [{"startedDateTime": started, "id": "scenario", "title": title, "pageTimings": {}}]
        for item in ordered:
            item["pageref"] = "scenario"
    log["entries"] = ordered
    if comment:
        log["comment"] = comment
    return {"log": log}


def fields_of(item: Mapping[str, Any]) -> dict[str, str]:
    """The form fields an entry sent (``postData.params``, else the query string)."""
    request = item["request"]
    params = request.get("postData", {}).get("params") or request.get("queryString", [])
    return {param["name"]: param["value"] for param in params}
