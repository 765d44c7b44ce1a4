"""A scenario's recording read as steps: the merchant's calls, its waits (status polls of one order, one step),
what the payer did, and what arrived (callbacks, the payer's redirect).

Status polls are one ``Wait`` per order: how many polls a run made depends on its polling schedule and the
gateway's speed, what the wait ended on does not.  ``Trace`` also measures what ``compare`` times: how long each
answer took, and how long an order stayed ``processing`` (from the acknowledgement to the first final status
seen, by a poll or a callback).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from toolkit.recording.har import fields_of
from toolkit.wire import DecodeError, asks_for_json, decode_response

FINAL = ("approved", "declined", "filtered", "error")
# Answer fields that carry what the gateway assigned (ids, addresses): mapped between runs, compared by name only.
ASSIGNED = ("paynet-order-id", "serial-number", "card-ref-id", "redirect-url", "redirect-to", "three-ds-method-url",
            "recurring-payment-id", "end-point-id", "html", "unq-card-ref-id")  # fmt: skip


def _at(item: Mapping[str, Any]) -> datetime:
    return datetime.fromisoformat(item["startedDateTime"])


def answer_of(item: Mapping[str, Any]) -> dict[str, str]:
    """The decoded answer of a merchant's exchange (JSON or the legacy form), {} when there is none."""
    text = item["response"]["content"].get("text", "")
    if not text:
        return {}
    try:
        return decode_response(text)
    except DecodeError:
        return {}


@dataclass
class Call:
    """A merchant's request (not a status poll) and the gateway's answer."""

    operation: str
    fields: dict[str, str]
    http_status: int
    answer: dict[str, str]
    elapsed: float
    at: datetime
    group: bool = False  # addressed by endpoint group
    error: str = ""  # no answer: why
    asked_json: bool = True  # the request asked for JSON (the legacy form answers everything with HTTP 200)

    @property
    def label(self) -> str:
        return self.operation


@dataclass
class Wait:
    """Consecutive status polls of one order (or one request, ``by-request-sn``): what the wait ended on."""

    key: tuple[str, str, str]  # client_orderid, orderid, by-request-sn
    polls: list[tuple[datetime, dict[str, str], float, int]] = field(default_factory=list)  # (at, answer, s, HTTP)
    asked_json: bool = True  # the polls asked for JSON

    @property
    def label(self) -> str:
        return "status" + (" (by request)" if self.key[2] else "")

    @property
    def answer(self) -> dict[str, str]:
        return self.polls[-1][1]

    @property
    def http_status(self) -> int:
        return self.polls[-1][3]

    @property
    def operation(self) -> str:
        return "status"

    @property
    def statuses(self) -> list[str]:
        return [answer.get("status", "") for _, answer, _, _ in self.polls]

    @property
    def payer_steps(self) -> list[str]:
        """What the polls asked of the payer, in order: ``method`` (html with a frame), ``challenge`` (redirect-to)."""
        seen: list[str] = []
        for _, answer, _, _ in self.polls:
            step = "challenge" if answer.get("redirect-to") else "method" if answer.get("three-ds-method-url") else ""
            if step and (not seen or seen[-1] != step):
                seen.append(step)
        return seen


@dataclass
class PayerStep:
    """What the payer did (``_action`` of a recorded visit): pay, challenge, method, follow, open, return."""

    action: dict[str, Any]
    url: str
    at: datetime


@dataclass
class Arrival:
    """A callback, or the payer's redirect, as the merchant's back end received it."""

    kind: str
    params: dict[str, str]
    at: datetime


Step = Call | Wait | PayerStep | Arrival


@dataclass
class Trace:
    """One scenario's steps, in the order they happened."""

    name: str
    steps: list[Step]
    entries: list[dict[str, Any]] = field(default_factory=list, repr=False)

    @property
    def merchant_steps(self) -> list[Call | Wait]:
        return [step for step in self.steps if isinstance(step, (Call, Wait))]

    def arrivals(self, kind: str) -> list[Arrival]:
        """The callbacks (or redirects) of this scenario's orders: a late one of an earlier scenario's order,
        which the shared receiver took meanwhile, is not this scenario's."""
        orderids = {step.answer.get("paynet-order-id") for step in self.merchant_steps} - {None, ""}
        client_ids = tuple(
            {step.fields.get("client_orderid", "") for step in self.steps if isinstance(step, Call)} - {""}
        )
        return [
            step
            for step in self.steps
            if isinstance(step, Arrival)
            and step.kind == kind
            and (
                step.params.get("orderid") in orderids
                or step.params.get("client_orderid", "").startswith(client_ids or ("\0",))
            )
        ]

    def answer_times(self) -> Iterator[tuple[str, float]]:
        """(operation, seconds) of every answer, status polls included."""
        for step in self.steps:
            if isinstance(step, Call) and not step.error:
                yield step.operation, step.elapsed
            elif isinstance(step, Wait):
                yield from (("status", seconds) for _, _, seconds, _ in step.polls)

    def processing_times(self) -> Iterator[tuple[str, float]]:
        """(operation, seconds) from an order's acknowledgement to the first final status seen of it."""
        for index, step in enumerate(self.steps):
            if not isinstance(step, Call) or step.http_status != 200 or step.operation == "status":
                continue
            orderid = step.answer.get("paynet-order-id", "")
            done = self._final_seen(orderid, self.steps[index + 1 :], step.answer.get("serial-number", ""))
            if orderid and done is not None:
                yield step.operation, (done - step.at).total_seconds() - step.elapsed

    @staticmethod
    def _final_seen(orderid: str, later: list[Step], serial: str) -> datetime | None:
        for step in later:
            if isinstance(step, Wait) and step.answer.get("paynet-order-id") == orderid:
                if step.key[2] and step.key[2] != serial:
                    continue
                for at, answer, _seconds, _ in step.polls:
                    if answer.get("status") in FINAL:
                        return at
            if isinstance(step, Arrival) and step.kind == "callback" and step.params.get("orderid") == orderid:
                return step.at
        return None


def read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return data


def trace_of(archive: Mapping[str, Any], name: str = "") -> Trace:
    """The steps of a HAR archive (a scenario's recording)."""
    log = archive["log"]
    title = name or next((page.get("title", "") for page in log.get("pages", [])), "")
    entries = sorted(log["entries"], key=_at)
    steps: list[Step] = []
    for item in entries:
        kind = item.get("_kind", "exchange")
        if kind == "exchange":
            _merchant(steps, item)
        elif kind == "visit" and item.get("_action"):
            steps.append(PayerStep(dict(item["_action"]), item["request"]["url"], _at(item)))
        elif kind in ("callback", "redirect"):
            steps.append(Arrival(kind, fields_of(item), _at(item)))
    return Trace(title, steps, entries)


def _merchant(steps: list[Step], item: Mapping[str, Any]) -> None:
    operation = item.get("_operation", "")
    fields = fields_of(item)
    answer = answer_of(item)
    elapsed = float(item.get("time", 0)) / 1000
    status = int(item["response"]["status"])
    if operation == "status" and status:
        key = (fields.get("client_orderid", ""), fields.get("orderid", ""), fields.get("by-request-sn", ""))
        # the last step of the merchant's (a callback may arrive between two polls of one wait)
        last = next((step for step in reversed(steps) if not isinstance(step, Arrival)), None)
        if not (isinstance(last, Wait) and last.key == key):
            last = Wait(key, asked_json=_asked_json(item))
            steps.append(last)
        last.polls.append((_at(item), answer, elapsed, status))
        return
    url = item["request"]["url"]
    steps.append(
        Call(operation, fields, status, answer, elapsed, _at(item), "/group/" in url, str(item.get("_error", "")),
             _asked_json(item))
    )  # fmt: skip


def _asked_json(item: Mapping[str, Any]) -> bool:
    accept = next((h["value"] for h in item["request"].get("headers", []) if h["name"].lower() == "accept"), "")
    return asks_for_json(accept)
