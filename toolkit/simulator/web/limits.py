"""Limits on what one request may cost: the body's size, the number and length of its fields.

- ``BodyLimit`` (ASGI middleware) reads every request body before the app sees it, up to
  ``max_body_bytes`` (64 KB by default, ``[simulator] max_body_bytes`` or ``--max-body``).  A bigger
  body, announced or streamed, is answered ``413`` in the format of the area addressed: the
  gateway's (``type=validation-error``, ``error-code`` 6) under ``/paynet/api/``, JSON under
  ``/_sim/``, an HTML page elsewhere.  What the client still sends is read and dropped (up to
  ``LINGER_BYTES``) so that it sees the answer instead of a reset connection.
- ``parse_form`` splits a gateway form body: at most ``MAX_FIELDS`` fields, names of at most
  ``MAX_NAME_LENGTH`` and values of at most ``MAX_VALUE_LENGTH`` characters (the catalogue's own
  lengths are checked later, field by field); ``parse_json`` reads a JSON object body within the same limits
  (a lenient simulator's reading of a request sent as ``application/json``).
"""

from __future__ import annotations

import json
import operator
import re
from urllib.parse import unquote, unquote_to_bytes

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolkit.simulator.rules.errors import SimError, field_error
from toolkit.simulator.web import render, urls
from toolkit.wire import LEGACY_TYPE, MEDIA_TYPE, DecodeError, asks_for_json, encode_json, encode_legacy, loads_json

MAX_FIELDS = 200
MAX_NAME_LENGTH = 64
MAX_VALUE_LENGTH = 16_384
LINGER_BYTES = 16 * 1024 * 1024  # read and dropped after a 413, so the client can read the answer
BODY_CODE = "6"  # error-code of a faulty request body (toolkit.simulator.rules.errors)


def parse_form(raw: bytes) -> list[tuple[str, str]]:
    """The name=value pairs of a form body; a SimError that names the rule when the body breaks one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SimError("the request body is not UTF-8 form data", code=BODY_CODE) from None
    if text and text.count("&") >= MAX_FIELDS:
        raise SimError(f"the request body has more than {MAX_FIELDS} fields", code=BODY_CODE)
    pairs = _split_form(text)
    _check_lengths(pairs, len(text))
    return pairs


def parse_json(raw: bytes) -> list[tuple[str, str]]:
    """The members of a JSON object body as name=value pairs, within the limits of a form: what a lenient
    simulator reads from a request sent as ``application/json`` (text as it is, numbers as written, ``true`` and
    ``false``, ``null`` as an empty value, a nested value as its JSON text); a SimError for any other body."""
    try:
        data = loads_json(raw)
    except DecodeError as exc:
        raise SimError(f"the request body is sent as JSON and is not: {exc}", code=BODY_CODE) from None
    if not isinstance(data, dict):
        raise SimError("a JSON request body is read as an object of fields; this one is not an object", code=BODY_CODE)
    if len(data) > MAX_FIELDS:
        raise SimError(f"the request body has more than {MAX_FIELDS} fields", code=BODY_CODE)
    pairs = [(name, _json_text(value)) for name, value in data.items()]
    _check_lengths(pairs, len(raw))
    return pairs


def _json_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, default=str, ensure_ascii=False) if isinstance(value, (dict, list)) else str(value)


def _check_lengths(pairs: list[tuple[str, str]], size: int) -> None:
    """No field name above ``MAX_NAME_LENGTH`` characters, no value above ``MAX_VALUE_LENGTH`` (``size``: the
    body's, which bounds every value)."""
    if pairs and max(map(len, map(_NAME, pairs))) > MAX_NAME_LENGTH:
        name = next(name for name, _ in pairs if len(name) > MAX_NAME_LENGTH)
        raise field_error(f"a field name of {len(name)} characters ({name[:20]}...); at most {MAX_NAME_LENGTH}")
    if size > MAX_VALUE_LENGTH and max(map(len, map(_VALUE, pairs))) > MAX_VALUE_LENGTH:
        name, value = next(pair for pair in pairs if len(pair[1]) > MAX_VALUE_LENGTH)
        raise field_error(f"{name}: a value of {len(value)} characters; at most {MAX_VALUE_LENGTH}")


_NAME, _VALUE = operator.itemgetter(0), operator.itemgetter(1)
_PARTITION = operator.methodcaller("partition", "=")
_ESCAPED_SEPARATOR = re.compile(r"%(?:26|3[Dd])")  # an escaped & or =: the pairs must be split before unquoting


def _split_form(text: str) -> list[tuple[str, str]]:
    """``urllib.parse.parse_qsl(text, keep_blank_values=True)``, unquoting the whole body at once when no
    escaped ``&`` or ``=`` is in it (then unquoting cannot make a separator), else pair by pair."""
    whole = ("%" in text or "+" in text) and _ESCAPED_SEPARATOR.search(text) is None
    if whole:  # (what ``unquote`` gives, without its pass over the text for non-ASCII runs)
        text = unquote_to_bytes(text.replace("+", " ")).decode("utf-8", "replace")
    items = text.split("&")
    if "" in items:
        items = [item for item in items if item]
    if whole or not ("%" in text or "+" in text):
        return [(name, value) for name, _, value in map(_PARTITION, items)]
    pairs = []
    for item in items:
        name, _, value = item.partition("=")
        if "%" in name or "+" in name:  # (each side apart: a value is escaped far more often than a name)
            name = unquote(name.replace("+", " "))
        if "%" in value or "+" in value:
            value = unquote(value.replace("+", " "))
        pairs.append((name, value))
    return pairs


class BodyLimit:
    """Reads each request body whole (it is small) before the app runs; 413 beyond ``limit`` bytes."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = await read_body(scope, receive, send, self.limit)
        if body is not None:
            await self.app(scope, _replay(body, receive), send)


async def read_body(scope: Scope, receive: Receive, send: Send, limit: int) -> bytes | None:
    """The whole body of an HTTP request, up to ``limit`` bytes; None when there is nobody to answer any more
    (a 413 was sent, or the client went away)."""
    declared = _content_length(scope)
    if declared is not None and declared > limit:
        await _refuse(scope, receive, send, f"{declared} bytes", limit, linger=declared <= LINGER_BYTES)
        return None
    message = await receive()
    if message["type"] == "http.request" and not message.get("more_body", False):  # the usual: one message
        body: bytes = message.get("body", b"")
        if len(body) <= limit:
            return body
    chunks: list[bytes] = []
    size = 0
    while True:
        if message["type"] == "http.disconnect":
            return None  # the client went away (or was too slow): nobody to answer
        size += len(message.get("body", b""))
        if size > limit:  # (linger only while more is coming: after the last part, receive() would wait for ever)
            more = bool(message.get("more_body", False))
            await _refuse(scope, receive, send, f"more than {limit} bytes", limit, linger=more)
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)
        message = await receive()


async def whole_body(receive: Receive) -> bytes:
    """The request body (what ``Request.body()`` reads; behind ``BodyLimit`` it comes in one message)."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body in one message, then the real channel (a disconnect, for long-polls that watch for one)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() and len(text) < 19 else None
    return None


async def _refuse(scope: Scope, receive: Receive, send: Send, size: str, limit: int, *, linger: bool) -> None:
    if linger:
        await _drain(receive)
    status, headers, body, kind = _too_large(scope, size, limit)
    headers.append((b"connection", b"close"))
    scope[render.SENT_SCOPE_KEY] = status  # (what a request log tells: ``front.Front``)
    if kind:
        scope[render.ANSWER_SCOPE_KEY] = (kind, "")
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _drain(receive: Receive) -> None:
    """Read what the client still sends (up to LINGER_BYTES) and drop it."""
    dropped = 0
    while dropped <= LINGER_BYTES:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body", False):
            return
        dropped += len(message.get("body", b""))


def _too_large(scope: Scope, size: str, limit: int) -> tuple[int, list[tuple[bytes, bytes]], bytes, str]:
    """The 413: status, headers, body, and the ``type`` of a gateway answer ("" for a page or a control call)."""
    path: str = scope["path"]
    message = f"a request body of {size} is refused: the simulator takes at most {limit} bytes (max_body_bytes)"
    if path.startswith(urls.PAGE_ROOT + "/api/"):
        fields = render.error_body(render.new_serial(), SimError(message, http_status=413, code=BODY_CODE))
        if any(name == b"accept" and asks_for_json(value.decode("latin-1")) for name, value in scope["headers"]):
            media, text = MEDIA_TYPE, encode_json(fields)
        else:  # (the legacy form, with a 413 here too)
            media, text = LEGACY_TYPE, encode_legacy(fields)
        return 413, [(b"content-type", media.encode())], text.encode(), fields["type"]
    if path.startswith("/_sim/"):
        body = json.dumps({"error": f"body: {message}", "field": "body"}).encode()
        return 413, [(b"content-type", b"application/json")], body, ""
    page = f"<!doctype html><title>Request too large</title><p id='page-error'>{message.capitalize()}.</p>".encode()
    return 413, [(b"content-type", b"text/html; charset=utf-8")], page, ""
