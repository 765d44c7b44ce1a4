"""Input of the control API: JSON bodies and query values, each refusal naming its field (HTTP 400)."""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from typing import Any

from fastapi import Request

from toolkit.masking import mask_text
from toolkit.simulator.store import MAX_ROW_ID, row_id


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
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ControlError("body", f"is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ControlError("body", "must be a JSON object")
    return data


def number(data: Mapping[str, Any], name: str, *, default: float | None = None, maximum: float = math.inf) -> float:
    """A finite number between 0 and ``maximum`` (JSON number or numeric string)."""
    value = data.get(name, default)
    if value is None:
        raise ControlError(name, "is required")
    if isinstance(value, bool):
        raise ControlError(name, f"must be a number, not {json.dumps(value)}")
    try:
        result = float(value)
    except (TypeError, ValueError):
        raise ControlError(name, f"must be a number, not {json.dumps(value)}") from None
    if not math.isfinite(result) or not 0 <= result <= maximum:
        raise ControlError(name, f"must be a number from 0 to {maximum:g}, not {value}")
    return result


def integer(
    data: Mapping[str, Any], name: str, *, default: int | None = None, minimum: int = 0, maximum: int = 10**9
) -> int:
    """A whole number between ``minimum`` and ``maximum`` (JSON number or digit string)."""
    value = data.get(name, default)
    if value is None:
        raise ControlError(name, "is required")
    if isinstance(value, str) and value.strip().isascii() and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ControlError(name, f"must be a whole number, not {json.dumps(value)}")
    if not minimum <= value <= maximum:
        raise ControlError(name, f"must be from {minimum} to {maximum}, not {value}")
    return value


def text(
    data: Mapping[str, Any], name: str, *, default: str | None = None, choices: Collection[str] | None = None
) -> str:
    """A string (numbers are written as text); one of ``choices`` when given."""
    value = data.get(name, default)
    if value is None:
        raise ControlError(name, "is required" + (f": one of {'|'.join(choices)}" if choices else ""))
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ControlError(name, f"must be a string, not {json.dumps(value)}")
    value = str(value).strip()
    if choices is not None and value not in choices:
        raise ControlError(name, f"must be one of {'|'.join(choices)}, not {value!r}")
    return value


def orderid(value: Any, name: str = "orderid") -> int:
    """A gateway orderid (ASCII digits, at most SQLite's largest integer), from a path, a query or a body."""
    key = row_id(value.strip()) if isinstance(value, str) else value
    if isinstance(key, int) and not isinstance(key, bool) and 0 < key <= MAX_ROW_ID:
        return key
    raise ControlError(name, f"must be a gateway orderid (digits), not {json.dumps(value)}")
