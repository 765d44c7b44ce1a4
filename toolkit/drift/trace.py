"""A scenario's recording read as steps: the merchant's calls, its waits (status polls of one order, one step),
what the payer did, and what arrived (callbacks, the payer's redirect).

Status polls are one ``Wait`` per order: how many polls a run made depends on its polling schedule and the
gateway's speed, what the wait ended on does not.  ``Trace`` also measures what ``compare`` times: how long each
answer took, and how long an order stayed ``processing`` (from the acknowledgement to the first final status
seen, by a poll or a callback: ``Span``, as finely as the polls saw it).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
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

    def processing_spans(self) -> Iterator[Span]:
        """How long each order (of a request answered 200, not a status) stayed processing, as its polls and
        callbacks saw it: one ``Span`` per order seen final (in linear time, however many orders a scenario has)."""
        seen = self._seen()
        payer = sorted(step.at for step in self.steps if isinstance(step, PayerStep))
        for index, step in enumerate(self.steps):
            if not isinstance(step, Call) or step.http_status != 200 or step.operation == "status":
                continue
            orderid = step.answer.get("paynet-order-id", "")
            if not orderid or orderid not in seen:
                continue
            answered = step.at + timedelta(seconds=step.elapsed)
            bounds = _bounds(seen[orderid], index, step.answer.get("serial-number", ""), answered)
            if bounds is not None:
                low, high, final = bounds
                acted = bisect.bisect_left(payer, answered)  # (the payer's first step since the answer: before final?)
                yield Span(step.operation, low, high, acted < len(payer) and payer[acted] <= final)

    def _seen(self) -> dict[str, list[Seen]]:
        """Per orderid, what each poll and callback saw of it, in the order of the steps: one pass over the steps,
        however many orders a scenario has."""
        seen: dict[str, list[Seen]] = defaultdict(list)
        for index, step in enumerate(self.steps):
            if isinstance(step, Wait):
                for at, answer, seconds, _ in step.polls:  # (a poll saw the order as it answered)
                    orderid = answer.get("paynet-order-id") or step.key[1]
                    moment = at + timedelta(seconds=seconds)
                    seen[orderid].append(Seen(index, moment, answer.get("status", ""), step.key[2]))
            elif isinstance(step, Arrival) and step.kind == "callback":
                seen[step.params.get("orderid", "")].append(Seen(index, step.at, step.params.get("status", "")))
        return seen


@dataclass(frozen=True)
class Seen:
    """An order's status as a poll (when it answered) or a callback (when it came) saw it."""

    index: int  # the step's place in the scenario
    at: datetime
    status: str
    by_serial: str = ""  # a poll by request serial number: it saw that request only


@dataclass(frozen=True)
class Span:
    """How long an order stayed ``processing``, as finely as the merchant saw it, in seconds from the moment its
    request was answered: more than ``low`` (the last poll that said processing), at most ``high`` (the first poll or
    callback that said it was final).  ``payer``: the payer acted meanwhile (a page, a challenge), whose time is in
    it."""

    operation: str
    low: float
    high: float
    payer: bool = False

    @property
    def resolution(self) -> float:
        """How finely the polls (and callbacks) measured it."""
        return self.high - self.low


def _bounds(seen: list[Seen], index: int, serial: str, answered: datetime) -> tuple[float, float, datetime] | None:
    """(low, high, when it was first seen final) of the order seen by ``seen`` after the step ``index`` (a poll by
    another serial number aside); None when nothing saw it final."""
    after = sorted((item.at, item.status) for item in seen if item.index > index and item.by_serial in ("", serial))
    final = next((at for at, status in after if status in FINAL), None)
    if final is None:
        return None
    processing = [at for at, status in after if status == "processing" and at < final]
    low = max(((processing[-1] - answered).total_seconds() if processing else 0.0), 0.0)
    return low, max((final - answered).total_seconds(), low), final


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
