"""A scenario's recording read as steps: the merchant's calls, its waits (status polls of one order, one step),
what the payer did, and what arrived (callbacks, the payer's redirect).

Status polls are one ``Wait`` per order: how many polls a run made depends on its polling schedule and the
gateway's speed, what the wait ended on does not.  ``Trace`` also measures what ``compare`` times: how long each
answer took, and how long an order stayed ``processing`` (from the acknowledgement to the first final status
seen, by a poll or a callback).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from toolkit.drift.archive import Archive, Entry, archive_of
from toolkit.wire import DecodeError, decode_response

FINAL = ("approved", "declined", "filtered", "error")
# Answer fields that carry what the gateway assigned (ids, addresses): mapped between runs, compared by name only.
ASSIGNED = ("paynet-order-id", "serial-number", "card-ref-id", "redirect-url", "redirect-to", "three-ds-method-url",
            "recurring-payment-id", "end-point-id", "html", "unq-card-ref-id")  # fmt: skip


def answer_of(item: Mapping[str, Any]) -> dict[str, str]:
    """The decoded answer of an exchange gatekit recorded just now (a replay's: JSON or the legacy form), {} when
    there is none.  A recording read from disk has its answers decoded already (``Entry.answer``)."""
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
    entries: list[Entry] = field(default_factory=list, repr=False)

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
        finals = self._finals()
        for index, step in enumerate(self.steps):
            if not isinstance(step, Call) or step.http_status != 200 or step.operation == "status":
                continue
            orderid = step.answer.get("paynet-order-id", "")
            done = _first_after(finals.get(orderid, []), index, step.answer.get("serial-number", ""))
            if orderid and done is not None:
                yield step.operation, (done - step.at).total_seconds() - step.elapsed

    def _finals(self) -> dict[str, list[tuple[int, datetime, str]]]:
        """Per orderid, each step that saw it final: (the step's place, when, the serial a wait asked by), in
        order: one pass over the steps, however many orders a scenario has."""
        seen: dict[str, list[tuple[int, datetime, str]]] = defaultdict(list)
        for index, step in enumerate(self.steps):
            if isinstance(step, Wait):
                at = next((at for at, answer, _, _ in step.polls if answer.get("status") in FINAL), None)
                if at is not None:
                    seen[step.answer.get("paynet-order-id", "")].append((index, at, step.key[2]))
            elif isinstance(step, Arrival) and step.kind == "callback":
                seen[step.params.get("orderid", "")].append((index, step.at, ""))
        return seen


def _first_after(finals: list[tuple[int, datetime, str]], index: int, serial: str) -> datetime | None:
    """When the order was first seen final after the step ``index`` (a wait by another serial number aside)."""
    for _, at, by_serial in finals[bisect.bisect_right(finals, index, key=lambda final: final[0]) :]:
        if not by_serial or by_serial == serial:
            return at
    return None


def trace_of(archive: Archive | Mapping[str, Any], name: str = "") -> Trace:
    """The steps of a scenario's archive (``archive.read_archive``, or a HAR document: checked first)."""
    if not isinstance(archive, Archive):
        archive = archive_of(archive)
    steps: list[Step] = []
    for item in archive.entries:
        if item.kind == "exchange":
            _merchant(steps, item)
        elif item.kind == "visit" and item.action:
            steps.append(PayerStep(dict(item.action), item.url, item.started))
        elif item.kind in ("callback", "redirect"):
            steps.append(Arrival(item.kind, dict(item.fields), item.started))
    return Trace(name or archive.title, steps, archive.entries)


def _merchant(steps: list[Step], item: Entry) -> None:
    if item.operation == "status" and item.status:
        fields = item.fields
        key = (fields.get("client_orderid", ""), fields.get("orderid", ""), fields.get("by-request-sn", ""))
        # the last step of the merchant's (a callback may arrive between two polls of one wait)
        last = next((step for step in reversed(steps) if not isinstance(step, Arrival)), None)
        if not (isinstance(last, Wait) and last.key == key):
            last = Wait(key, asked_json=item.asked_json)
            steps.append(last)
        last.polls.append((item.started, item.answer, item.elapsed, item.status))
        return
    steps.append(
        Call(item.operation, dict(item.fields), item.status, item.answer, item.elapsed, item.started,
             "/group/" in item.url, item.error, item.asked_json)
    )  # fmt: skip
