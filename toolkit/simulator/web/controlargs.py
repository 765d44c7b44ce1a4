"""Input of the control API: JSON bodies and query values, each refusal naming its field (HTTP 400)."""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from decimal import Decimal
from typing import Any

from starlette.requests import Request

from toolkit.masking import mask_text
from toolkit.simulator.storage import row_id
from toolkit.simulator.storage.base import MAX_ROW_ID
from toolkit.wire import DecodeError, loads_json

MAX_DIGITS = 19  # no count, limit or id of the control API needs more


class ControlError(Exception):
    """Refused control request: ``{"error": "<field>: <why>", "field": "<field>"}`` with ``http_status``."""

    def __init__(self, field: str, message: str, *, http_status: int = 400) -> None:
        super().__init__(mask_text(f"{field}: {message}"))
        self.field = field
        self.http_status = http_status

    def body(self) -> dict[str, str]:
        return {"error": str(self), "field": self.field}


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object; an empty body is ``{}``."""
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        data = loads_json(raw)  # depth and number sizes bounded; floats as Decimal
    except DecodeError as exc:
        raise ControlError("body", f"is not valid JSON ({str(exc).removeprefix('invalid JSON: ')})") from None
    if not isinstance(data, dict):
        raise ControlError("body", "must be a JSON object")
    return data


def number(data: Mapping[str, Any], name: str, *, default: float | None = None, maximum: float = math.inf) -> float:
    """A finite number between 0 and ``maximum`` (JSON number or numeric string)."""
    value = data.get(name, default)
    if value is None:
        raise ControlError(name, "is required")
    if isinstance(value, bool) or (isinstance(value, str) and len(value) > MAX_DIGITS):
        raise ControlError(name, f"must be a number, not {_shown(value)}")
    try:
        result = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ControlError(name, f"must be a number, not {_shown(value)}") from None
    if not math.isfinite(result) or not 0 <= result <= maximum:
        raise ControlError(name, f"must be a number from 0 to {maximum:g}, not {_shown(value)}")
    return result


def integer(
    data: Mapping[str, Any], name: str, *, default: int | None = None, minimum: int = 0, maximum: int = 10**9
) -> int:
    """A whole number between ``minimum`` and ``maximum`` (JSON number or digit string)."""
    value = data.get(name, default)
    if value is None:
        raise ControlError(name, "is required")
    if isinstance(value, Decimal) and value == value.to_integral_value():
        value = int(value)  # (a JSON number with no fraction)
    if isinstance(value, str) and value.strip().isascii() and value.strip().lstrip("-").isdigit():
        if len(value.strip()) > MAX_DIGITS:  # int() of 5000 digits raises, and no limit is that large
            raise ControlError(name, f"must be from {minimum} to {maximum}, not a number of {len(value)} digits")
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ControlError(name, f"must be a whole number, not {_shown(value)}")
    if not minimum <= value <= maximum:
        raise ControlError(name, f"must be from {minimum} to {maximum}, not {_shown(value)}")
    return value


def text(
    data: Mapping[str, Any], name: str, *, default: str | None = None, choices: Collection[str] | None = None
) -> str:
    """A string (numbers are written as text); one of ``choices`` when given."""
    value = data.get(name, default)
    if value is None:
        raise ControlError(name, "is required" + (f": one of {'|'.join(choices)}" if choices else ""))
    if isinstance(value, Decimal) and value == value.to_integral_value():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ControlError(name, f"must be a string, not {_shown(value)}")
    value = str(value).strip()
    if choices is not None and value not in choices:
        raise ControlError(name, f"must be one of {'|'.join(choices)}, not {value!r}")
    return value


def orderid(value: Any, name: str = "orderid") -> int:
    """A gateway orderid (ASCII digits, at most SQLite's largest integer), from a path, a query or a body."""
    if isinstance(value, Decimal) and value == value.to_integral_value():
        value = int(value)
    key = row_id(value.strip()) if isinstance(value, str) else value
    if isinstance(key, int) and not isinstance(key, bool) and 0 < key <= MAX_ROW_ID:
        return key
    raise ControlError(name, f"must be a gateway orderid (digits), not {_shown(value)}")


def _shown(value: Any) -> str:
    """A value as the refusal shows it: JSON, cut to 40 characters (a 5000-digit id is not repeated)."""
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else f"{text[:40]}... ({len(text)} characters)"
