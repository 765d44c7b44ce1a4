"""The wire: form-encode requests; decode responses in JSON or the legacy ``key=value`` form.

Behaviour section 2: with ``Accept: application/vnd.pay+json`` the body is a JSON object;
without it the gateway answers ``type=async-response\\n&serial-number=...\\n`` (url-encoded
pairs, each value followed by a newline).  Values are trimmed; numbers become strings.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from decimal import Decimal
from urllib.parse import parse_qsl, quote, urlencode

MEDIA_TYPE = "application/vnd.pay+json"
FORM_TYPE = "application/x-www-form-urlencoded"
LEGACY_TYPE = "text/html;charset=utf-8"


class DecodeError(ValueError):
    """A body that is neither a JSON object nor legacy key=value pairs."""


def encode_form(fields: Mapping[str, str] | Iterable[tuple[str, str]]) -> str:
    """``application/x-www-form-urlencoded`` UTF-8 body."""
    items = list(fields.items()) if isinstance(fields, Mapping) else list(fields)
    return urlencode(items, quote_via=quote)


def decode_form(body: str | bytes) -> list[tuple[str, str]]:
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    return parse_qsl(text, keep_blank_values=True)


def decode_request_body(body: object) -> list[tuple[str, str]]:
    """The pairs of a prepared request's form body (``requests.PreparedRequest.body``); none for None or a stream."""
    return decode_form(body) if isinstance(body, (str, bytes)) else []


def decode_response(body: str | bytes) -> dict[str, str]:
    """Decode either response form into a flat mapping of trimmed strings."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    stripped = text.strip()
    if not stripped:
        raise DecodeError("empty response body")
    if stripped.startswith("{"):
        return _decode_json(stripped)
    if "=" not in stripped or stripped.lstrip().startswith("<"):
        raise DecodeError(f"not JSON and not key=value pairs: {stripped[:80]!r}")
    return {name.strip(): value.strip() for name, value in parse_qsl(stripped, keep_blank_values=True)}


def _decode_json(text: str) -> dict[str, str]:
    try:
        data = json.loads(text, parse_float=Decimal)  # 10.10 stays "10.10", never through float
    except json.JSONDecodeError as exc:
        raise DecodeError(f"invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise DecodeError("JSON body is not an object")
    return {str(name): _scalar(value) for name, value in data.items()}


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
    return json.dumps(dict(fields), ensure_ascii=False)
