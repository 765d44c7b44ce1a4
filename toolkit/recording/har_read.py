"""A HAR archive of ``toolkit.recording`` read back into the records it was written from.

``records(archive)`` gives what ``toolkit.recording.har`` wrote: an ``Exchange`` per merchant exchange, a
``Visit`` per request of the payer's browser, a ``Received`` per callback or redirect, in the archive's order;
masked as the live records are (a test CVV2 the recording kept goes back among ``outcome_values``).  What HAR
does not keep stays empty: a signature trace, a visit's redirects, the monotonic clock of an arrival.  A
recording made before visits kept ``_to``, ``_shows`` and ``_orderid`` reads where a visit went from its step.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from toolkit.callbacks.records import CALLBACK, REDIRECT, Received
from toolkit.exchange import Exchange, HeaderFields
from toolkit.masking import CVV_MASK
from toolkit.outcome_values import outcome_values
from toolkit.payer.visits import Party, Visit
from toolkit.recording.records import Record

Entry = Mapping[str, Any]


def records(archive: Mapping[str, Any]) -> list[Record]:
    """The records of every entry of ``archive`` (a HAR document read as JSON); entries of other kinds skipped."""
    found: list[Record] = []
    accepted: set[tuple[str, str, str, str]] = set()
    for item in archive["log"]["entries"]:
        kind = item.get("_kind", "exchange")
        if kind == "exchange":
            found.append(exchange_of(item))
        elif kind == "visit":
            found.append(visit_of(item))
        elif kind in (CALLBACK, REDIRECT):
            received = arrival_of(item, accepted)
            if received.answered == 200:
                accepted.add(received.dedupe_key)
            found.append(received)
    return found


def _pairs(item: Entry, where: str) -> list[tuple[str, str]]:
    request = item["request"]
    params = request.get("postData", {}).get("params") if where == "form" else request.get("queryString")
    return [(str(param["name"]), str(param["value"])) for param in params or ()]


def _fields(item: Entry) -> list[tuple[str, str]]:
    """What the entry sent: its form (``postData``), else its query string."""
    return _pairs(item, "form") or _pairs(item, "query")


def _as_live(sent: list[tuple[str, str]]) -> tuple[tuple[tuple[str, str], ...], dict[str, str]]:
    """A recording's fields as a live record holds them: a test CVV2 masked again, and kept apart."""
    kept = outcome_values(sent)
    return tuple((name, CVV_MASK if name in kept else value) for name, value in sent), kept


def _at(item: Entry) -> datetime:
    return datetime.fromisoformat(str(item["startedDateTime"])).astimezone(UTC)


def _status(item: Entry) -> int | None:
    return int(item["response"]["status"]) or None  # (HAR writes 0 for no answer)


def _elapsed(item: Entry) -> float:
    return float(item.get("time", 0)) / 1000


def _headers(item: Entry, side: str) -> HeaderFields:
    return HeaderFields((str(header["name"]), str(header["value"])) for header in item[side].get("headers", ()))


def exchange_of(item: Entry) -> Exchange:
    sent, kept = _as_live(_fields(item))
    content = item["response"].get("content", {})
    left_out = int(content.get("_truncated", 0))
    return Exchange(
        str(item.get("_operation", "")) or str(item["request"]["url"]), str(item["request"]["method"]),
        str(item["request"]["url"]), _headers(item, "request"), sent, _status(item),
        _headers(item, "response"), str(content.get("text", "")), _elapsed(item), None,
        str(item.get("_error", "")) or None, _at(item), signed_with=str(item.get("_signed_with", "")),
        findings=tuple(map(str, item.get("_findings", ()))),
        body_size=int(content["size"]) if left_out else None, left_out=left_out,
        left_out_why=str(content.get("comment", "")).partition(": ")[2] if left_out else "",
        outcome_values=kept, request_body=_text_sent(item),
    )  # fmt: skip


def _text_sent(item: Entry) -> str:
    """A request body that is no form, as the recording keeps it (``postData.text``)."""
    post = item["request"].get("postData") or {}
    return "" if post.get("params") else str(post.get("text", ""))


def visit_of(item: Entry) -> Visit:
    step = str(item.get("_step", ""))
    sent, kept = _as_live(_pairs(item, "form"))
    url = str(item["request"]["url"])
    action = item.get("_action")
    return Visit(
        _at(item), str(item["request"]["method"]), url, _status(item), _elapsed(item), step,
        _party(item.get("_to"), step), shows=str(item.get("_shows", "")), orderid=str(item.get("_orderid", "")),
        fields=sent, final_url=str(item.get("_final_url", "")) or url,
        body=str(item["response"].get("content", {}).get("text", "")),
        action=dict(action) if isinstance(action, Mapping) else None, outcome_values=kept,
    )  # fmt: skip


def _party(to: object, step: str) -> Party:
    """Where a visit went: as recorded, else read from the step's words (``go back to the merchant``...)."""
    if to in ("gateway", "acs", "merchant"):
        return to
    words = step.lower()
    if "merchant" in words:
        return "merchant"
    if any(word in words for word in ("3-d secure", "challenge", "method", "acs")):
        return "acs"
    return "gateway"


def arrival_of(item: Entry, accepted: Collection[tuple[str, str, str, str]] = ()) -> Received:
    """A callback or redirect; ``duplicate`` when an earlier arrival of ``accepted`` (the dedupe keys answered
    200 before it) has its key, as the receiver said."""
    url = str(item["request"]["url"])
    received = Received(
        CALLBACK if item.get("_kind") == CALLBACK else REDIRECT, str(item["request"]["method"]), urlsplit(url).path,
        dict(_fields(item)), item.get("_control_ok"), 0.0, _at(item), answered=int(item["response"]["status"]),
        url=url,
    )  # fmt: skip
    return replace(received, duplicate=received.dedupe_key in accepted)
