"""Arrows from a recording (a HAR 1.2 archive of ``toolkit.recording``): the merchant's exchanges, the payer's
visits, the callbacks and redirects received, as the live records draw them.

A recording is masked already; labels are masked once more, as every arrow's are.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from toolkit.diagram.model import Arrow, Lane, Tone, collapse, in_time_order, tone_of_status
from toolkit.diagram.records import answer_outcome, money_of
from toolkit.masking import mask_text
from toolkit.recording.har import fields_of
from toolkit.wire import DecodeError, decode_response

Entry = Mapping[str, Any]


def _answer(entry: Entry) -> dict[str, str]:
    text = entry["response"]["content"].get("text", "")
    try:
        return decode_response(text) if text else {}
    except DecodeError:
        return {}


def _at(entry: Entry) -> datetime:
    return datetime.fromisoformat(entry["startedDateTime"])


def _status(entry: Entry) -> int | None:
    status = int(entry["response"]["status"])
    return status or None  # (HAR writes 0 for no answer)


def _lane_of_step(step: str) -> Lane:
    """Where a payer's step went, from its words (``answer the 3-D Secure challenge``, ``go back to the merchant``)."""
    words = step.lower()
    if "merchant" in words:
        return "endpoint"
    if "3-d secure" in words or "challenge" in words or "method" in words or "acs" in words:
        return "acs"
    return "gateway"


def _exchange(entry: Entry) -> Arrow:
    sent = fields_of(entry)
    operation = str(entry.get("_operation", "")) or entry["request"]["url"]
    answer = _answer(entry)
    outcome, tone = answer_outcome(_status(entry), answer, str(entry.get("_error", "")))
    orderid = sent.get("orderid") or answer.get("paynet-order-id", "")
    elapsed = float(entry.get("time", 0)) / 1000
    label = mask_text(operation + money_of(operation, sent))
    return Arrow("merchant", "gateway", label, outcome, tone, _at(entry), elapsed, 1, orderid)


def _visit(entry: Entry) -> Arrow:
    status = _status(entry)
    step = str(entry.get("_step", "")) or "the payer's browser"
    tone: Tone = "bad" if status is None or status >= 400 else "plain"
    outcome = f"HTTP {status}" if status is not None else "no answer"
    action = entry.get("_action") or {}
    if action.get("action") == "challenge":
        outcome += " · the right password" if action.get("right", True) else " · a wrong password"
    elapsed = float(entry.get("time", 0)) / 1000
    return Arrow("payer", _lane_of_step(step), mask_text(step), outcome, tone, _at(entry), elapsed)


def _arrival(entry: Entry) -> Arrow:
    fields = fields_of(entry) or {q["name"]: q["value"] for q in entry["request"].get("queryString", [])}
    status, answered = fields.get("status", ""), entry["response"]["status"]
    control = {True: "control ✓", False: "control ✗"}.get(entry.get("_control_ok"), "control not checked")  # type: ignore[arg-type]
    tone: Tone = "bad" if answered != 200 or entry.get("_control_ok") is False else tone_of_status(status)
    outcome = f"answered {answered} · {control}"
    if entry.get("_kind") == "callback":
        label = f"callback {fields.get('type', '')} {status or '-'}".replace("  ", " ")
        return Arrow(
            "gateway", "endpoint", mask_text(label), outcome, tone, _at(entry), None, 1, fields.get("orderid", "")
        )
    return Arrow("payer", "endpoint", "back to the merchant (redirect)", f"{status or '?'} · {outcome}", tone,
                 _at(entry), None, 1, fields.get("orderid", ""))  # fmt: skip


def arrows_from_har(archive: Mapping[str, Any]) -> list[Arrow]:
    """Every entry of a recording as an arrow, in time order, repeated polls collapsed."""
    arrows = []
    for entry in archive["log"]["entries"]:
        kind = entry.get("_kind", "exchange")
        if kind == "exchange":
            arrows.append(_exchange(entry))
        elif kind == "visit":
            arrows.append(_visit(entry))
        elif kind in ("callback", "redirect"):
            arrows.append(_arrival(entry))
    return collapse(in_time_order(arrows))
