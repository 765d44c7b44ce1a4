"""HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/): a recording's serializer, one entry per record.

Every entry is a request and its response as HAR writes them; gatekit adds, as the format allows (names
that start with ``_``): ``_party`` (who sent it: ``merchant``, ``payer``, ``gateway`` for callbacks and the
payer's redirect back to the merchant), ``_kind`` (``exchange``, ``visit``, ``callback``, ``redirect``),
``_operation`` (a catalogue operation), ``_action`` (what the payer did: ``pay`` with the card, masked;
``challenge`` right or wrong; ``method``; ``follow``; ``return``; ``open``), ``_step``, ``_to``, ``_shows`` and
``_orderid`` of a visit, and ``_error`` (no answer).  ``toolkit.recording.har_read`` reads entries back.

The records are masked already; a recording keeps what the reports keep, with the public test values that
choose an outcome put back as sent (``toolkit.recording.masks``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from toolkit._version import __version__
from toolkit.callbacks.records import Received
from toolkit.exchange import Exchange, header_fields
from toolkit.payer.visits import Visit
from toolkit.recording.masks import recorded_fields, recorded_headers
from toolkit.recording.records import Record

HAR_VERSION = "1.2"
FORM_TYPE = "application/x-www-form-urlencoded"
MERCHANT_BASE = "http://merchant.invalid"  # where an arrival recorded by hand (no ``url``) is said to have come
Pairs = Iterable[tuple[str, str]]
JSON = dict[str, Any]


def iso(moment: datetime) -> str:
    """``2026-11-25T21:55:56.172+00:00``: ISO 8601 with milliseconds, as HAR asks."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def _pairs(items: Pairs) -> list[dict[str, str]]:
    return [{"name": str(name), "value": str(value)} for name, value in items]


def entry(record: Record) -> JSON:
    """The HAR entry of one record: an exchange, a visit of the payer's browser, or an arrival."""
    if isinstance(record, Exchange):
        return _exchange(record)
    if isinstance(record, Visit):
        return _visit(record)
    return _arrival(record)


def _exchange(exchange: Exchange) -> JSON:
    headers = exchange.response_headers
    mime_type = str(headers.get("Content-Type", headers.get("content-type", "")))
    answered = exchange.status_code is not None
    response = _response(
        exchange.status_code, recorded_headers(header_fields(headers)), exchange.response_body, mime_type
    )
    if exchange.body_size is not None:  # (the proxy's: the true size, of which ``left_out`` bytes are not kept)
        response["content"]["size"] = exchange.body_size
        response["bodySize"] = exchange.body_size if answered else -1
    if exchange.left_out:
        response["content"]["_truncated"] = exchange.left_out
        response["content"]["comment"] = (
            f"{exchange.left_out} of {exchange.body_size} bytes left out: {exchange.left_out_why}"
        )
    extra: JSON = {"party": "merchant", "kind": "exchange", "operation": exchange.operation}
    if exchange.signed_with:
        extra["signed_with"] = exchange.signed_with
    if exchange.error:
        extra["error"] = exchange.error
    if exchange.findings:
        extra["findings"] = list(exchange.findings)
    fields = recorded_fields(exchange.request_fields, exchange.outcome_values)
    sent = exchange.request_headers
    request = _request(exchange.method, exchange.url, recorded_headers(header_fields(sent)), fields)
    if exchange.request_body:  # (a body that is no form: its text, masked, with its own media type)
        mime = next((value for name, value in header_fields(sent) if name.lower() == "content-type"), "")
        request["postData"] = {"mimeType": mime or "text/plain", "text": exchange.request_body}
        request["bodySize"] = len(exchange.request_body.encode())
    return _entry(exchange.at or datetime.now(UTC), exchange.elapsed, (request, response), extra)


def _visit(visit: Visit) -> JSON:
    form = recorded_fields(visit.fields, visit.outcome_values) if visit.fields or visit.method == "POST" else None
    extra: JSON = {"party": "payer", "kind": "visit", "step": visit.step}
    if visit.action is not None:
        extra["action"] = dict(visit.action)
    if visit.final_url and visit.final_url != visit.url:
        extra["final_url"] = visit.final_url
    extra.update(to=visit.to, shows=visit.shows, orderid=visit.orderid)
    sent = (_request(visit.method, visit.url, (), form), _response(visit.status_code, (), visit.body, "text/html"))
    return _entry(visit.at, visit.elapsed, sent, extra)


def _arrival(received: Received) -> JSON:
    posted = received.method.upper() == "POST"
    url = received.url or MERCHANT_BASE + "/" + received.path.lstrip("/")
    request = _request(received.method, url, (), list(received.params.items()) if posted else None)
    if not posted:
        request["queryString"] = _pairs(received.params.items())
    party = "gateway" if received.kind == "callback" else "payer"
    extra = {"party": party, "kind": received.kind, "control_ok": received.control_ok}
    return _entry(received.received_wall, 0.0, (request, _response(received.answered, (), "", "")), extra)


def _request(method: str, url: str, headers: Pairs, form: Pairs | None) -> JSON:
    """A HAR request: ``form`` is its form body (``postData``), None for none."""
    query = parse_qsl(urlsplit(url).query, keep_blank_values=True)
    request: JSON = {
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
    return request


def _response(status: int | None, headers: Pairs, body: str, mime_type: str) -> JSON:
    """A HAR response: ``status`` None for no answer (HAR writes 0)."""
    size = len(body.encode())
    return {
        "status": status if status is not None else 0,
        "statusText": "" if status is not None else "no answer",
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": _pairs(headers),
        "content": {"size": size, "mimeType": mime_type or "text/plain", "text": body},
        "redirectURL": "",
        "headersSize": -1,
        "bodySize": size if status is not None else -1,
    }


def _entry(started: datetime, elapsed: float, sent: tuple[JSON, JSON], extra: Mapping[str, Any]) -> JSON:
    milliseconds = round(max(elapsed, 0.0) * 1000, 3)
    request, response = sent
    return {
        "startedDateTime": iso(started),
        "time": milliseconds,
        "request": request,
        "response": response,
        "cache": {},
        "timings": {"send": 0, "wait": milliseconds, "receive": 0},
        **{f"_{name}": value for name, value in extra.items()},
    }


def archive(records: Iterable[Record], *, title: str = "", comment: str = "") -> JSON:
    """The HAR document of ``records``: gatekit as the creator, one page (the scenario) when ``title`` is given."""
    ordered = sorted((entry(record) for record in records), key=lambda item: item["startedDateTime"])
    log: JSON = {"version": HAR_VERSION, "creator": {"name": "gatekit", "version": __version__}}
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
