"""The wire: form-encode requests; decode responses in JSON or the legacy ``key=value`` form.

Behaviour section 2: with ``Accept: application/vnd.pay+json`` the body is a JSON object;
without it the gateway answers ``type=async-response\\n&serial-number=...\\n`` (url-encoded
pairs, each value followed by a newline).  Values are trimmed; numbers become strings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from toolkit.operations import ResponseKind

MEDIA_TYPE = "application/vnd.pay+json"
FORM_TYPE = "application/x-www-form-urlencoded"
LEGACY_TYPE = "text/html;charset=utf-8"


MAX_DEPTH = 32  # a gateway answer is flat; nested values are kept as JSON text
MAX_NUMBER_DIGITS = 64
RESPONSE_TYPES = frozenset({*(kind.value for kind in ResponseKind), "validation-error", "error"})
_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_AMOUNT = re.compile(r"[0-9]{1,15}(?:\.[0-9]{1,4})?")  # an answer's amount: no sign, no exponent, no NaN
_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')  # a JSON string ("unrolled": no alternation per character)
_BRACKETS = re.compile(r"[\[\]{}]")


class DecodeError(ValueError):
    """A body that is neither a JSON object nor legacy key=value pairs."""


def content_type_problem(content_type: str) -> str:
    """What is wrong with a request's ``Content-Type`` for the gateway, "" when nothing is (spec 2.1: requests are
    ``application/x-www-form-urlencoded``; any case, any parameter such as ``charset``).

    Behaviour section 12: a servlet-style form reader sees any other body (none, ``text/plain``,
    ``application/json``) as an empty form.  The simulator refuses such a request with this sentence, the proxy
    flags it and the client refuses to send it: all three say the same."""
    if content_type.partition(";")[0].strip().lower() == FORM_TYPE:
        return ""
    sent = content_type.strip()
    shown = (sent if len(sent) <= 60 else sent[:60] + "...") if sent else "missing"
    return (
        f"Content-Type: {shown}, not {FORM_TYPE}: the gateway reads form bodies only (spec 2.1) and sees this one "
        "as an empty form, every field missing"
    )


def asks_for_json(accept: str) -> bool:
    """An ``Accept`` header that asks for ``application/vnd.pay+json`` (behaviour 2), in any case (RFC 9110 8.3.1:
    media types are case-insensitive, so ``Application/Vnd.Pay+JSON`` asks for JSON too)."""
    return MEDIA_TYPE in accept or MEDIA_TYPE in accept.lower()


def encode_form(fields: Mapping[str, str] | Iterable[tuple[str, str]]) -> str:
    """``application/x-www-form-urlencoded`` UTF-8 body (what ``urlencode(items, quote_via=quote)`` gives)."""
    items = list(fields.items()) if isinstance(fields, Mapping) else list(fields)
    if not all(type(name) is str and type(value) is str for name, value in items):
        return urlencode(items, quote_via=quote)
    return "&".join(f"{_quote(name)}={_quote(value)}" for name, value in items)


_UNRESERVED = re.compile(r"[A-Za-z0-9_.~-]*").fullmatch  # what quote(safe="") leaves as it is
_RESERVED = re.compile(r"[^A-Za-z0-9_.~-]")
_ASCII_ESCAPES = {chr(code): f"%{code:02X}" for code in range(128)}


def _escape(match: re.Match[str]) -> str:
    return _ASCII_ESCAPES[match.group()]


def _quote(text: str) -> str:
    """``quote(text, safe="")``: unreserved text as it is; in ASCII text only the other characters are escaped."""
    if _UNRESERVED(text):
        return text
    return _RESERVED.sub(_escape, text) if text.isascii() else quote(text, safe="")


def decode_form(body: str | bytes) -> list[tuple[str, str]]:
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    return parse_qsl(text, keep_blank_values=True)


def decode_request_body(body: object) -> list[tuple[str, str]]:
    """The pairs of a prepared request's form body (``requests.PreparedRequest.body``); none for None or a stream."""
    return decode_form(body) if isinstance(body, (str, bytes)) else []


def decode_response(body: str | bytes) -> dict[str, str]:
    """Decode either response form into a flat mapping of trimmed strings; DecodeError for anything else (a body
    that is not UTF-8 too: the gateway answers in UTF-8, and a replaced character would change a value)."""
    try:
        text = body.decode("utf-8") if isinstance(body, bytes) else body
    except UnicodeDecodeError as exc:
        raise DecodeError(f"not UTF-8 text (byte {exc.start}): the gateway answers in UTF-8") from None
    stripped = text.strip()
    if not stripped:
        raise DecodeError("empty response body")
    if stripped.startswith("{"):
        return _decode_json(stripped)
    if "=" not in stripped or stripped.lstrip().startswith("<"):
        raise DecodeError(f"not JSON and not key=value pairs: {stripped[:80]!r}")
    pairs = parse_qsl(stripped, keep_blank_values=True)
    strange = next((name.strip() for name, _ in pairs if not _NAME.fullmatch(name.strip())), None)
    if strange is not None:
        raise DecodeError(f"not key=value pairs of the gateway: a name {strange[:40]!r}")
    return {name.strip(): value.strip() for name, value in pairs}


def check_answer(body: Mapping[str, str]) -> None:
    """DecodeError unless ``body`` is a gateway response: a known ``type``, an orderid made of digits."""
    kind = body.get("type", "").strip().lower()
    if not kind:
        raise DecodeError("no type field: not a gateway response")
    if kind not in RESPONSE_TYPES:
        raise DecodeError(f"type {kind[:40]!r} is not a gateway response type ({', '.join(sorted(RESPONSE_TYPES))})")
    orderid = body.get("paynet-order-id", "")
    if orderid and not (orderid.isascii() and orderid.isdigit() and len(orderid) <= MAX_NUMBER_DIGITS):
        raise DecodeError(f"paynet-order-id {orderid[:40]!r} is not a gateway orderid (digits)")
    amount = body.get("amount", "")
    if amount and not _AMOUNT.fullmatch(amount):
        raise DecodeError(f"amount {amount[:40]!r} is not an amount of the gateway (major units with a dot: 10.42)")


def loads_json(text: str | bytes) -> Any:
    """``json.loads`` for text from outside: at most MAX_DEPTH levels, numbers of at most MAX_NUMBER_DIGITS
    characters (floats as Decimal), no NaN or Infinity; DecodeError says which rule failed."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise DecodeError("invalid JSON: not UTF-8") from None
    depth = _nesting(text) if text.count("[") + text.count("{") > MAX_DEPTH else 0  # fewer brackets: not too deep
    if depth > MAX_DEPTH:
        raise DecodeError(f"invalid JSON: nested {depth} levels deep (at most {MAX_DEPTH})")
    try:
        return json.loads(text, parse_float=_decimal, parse_int=_integer, parse_constant=_no_constant)
    except DecodeError:
        raise
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise DecodeError(f"invalid JSON: {exc}") from None


def _decode_json(text: str) -> dict[str, str]:
    data = loads_json(text)
    if not isinstance(data, dict):
        raise DecodeError("JSON body is not an object")
    # (the names of a JSON object are text already; most values are text)
    return {name: value.strip() if type(value) is str else _scalar(value) for name, value in data.items()}


def _decimal(text: str) -> Decimal:
    """Numbers stay exact (10.10 stays "10.10", never through float), and short: no 5000-digit integers."""
    if len(text) > MAX_NUMBER_DIGITS:
        raise DecodeError(f"invalid JSON: a number of {len(text)} characters (at most {MAX_NUMBER_DIGITS})")
    return Decimal(text)


def _integer(text: str) -> int:
    return int(_decimal(text))


def _no_constant(name: str) -> object:
    raise DecodeError(f"invalid JSON: {name} is not a number the gateway sends")


def _nesting(text: str) -> int:
    """How deep arrays and objects nest (strings skipped), before json.loads could hit the recursion limit."""
    deepest = depth = 0
    for bracket in _BRACKETS.findall(_STRINGS.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _scalar(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, default=str)
    return str(value).strip()


def encode_legacy(fields: Mapping[str, str]) -> str:
    """The legacy body: ``key=value\\n&key=value\\n`` with url-encoded keys and values."""
    return "&".join(f"{quote(name, safe='-_.')}={quote(str(value), safe='-_.')}\n" for name, value in fields.items())


def encode_json(fields: Mapping[str, str]) -> str:
    """``json.dumps(dict(fields), ensure_ascii=False)``; text values (all of an answer's) without the encoder's
    set-up on each call."""
    try:
        return "{" + ", ".join([_string(name) + ": " + _string(value) for name, value in fields.items()]) + "}"
    except TypeError:  # a value that is not text (a number, a list): the encoder writes it
        return _JSON.encode(fields if type(fields) is dict else dict(fields))


_JSON = json.JSONEncoder(ensure_ascii=False)  # what ``json.dumps(..., ensure_ascii=False)`` builds on each call
_string: Callable[[str], str] = json.encoder.encode_basestring  # (C: what the encoder itself calls)
