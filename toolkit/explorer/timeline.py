"""The timeline of orders: every request, status poll, callback, payer redirect and payer step, in order.

A ``Timeline`` is an observer of the client (``Exchange``) and of the callback receiver
(``Received``); the explorer and the notebooks add the payer's steps with ``note``.  Everything it
holds is already masked (exchanges and arrivals are masked at birth).  ``for_order`` selects what
concerns one order of the merchant: its ``client_orderid``, or any of the gateway's ``orderid``
values it touched (follow-ups share the parent's ``client_orderid``).
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from toolkit.callbacks import Received
from toolkit.display.views import decoded_answer
from toolkit.exchange import Exchange

EventKind = Literal["request", "poll", "callback", "redirect", "payer"]
Listener = Callable[["Event"], None]


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Event:
    """One thing that happened to an order; ``detail`` is masked."""

    at: datetime
    kind: EventKind
    summary: str
    operation: str = ""
    orderids: frozenset[str] = frozenset()
    client_orderid: str = ""
    detail: Mapping[str, str] = field(default_factory=dict)

    def concerns(self, orderid: str = "", client_orderid: str = "") -> bool:
        """True when the event names this order (by the gateway's or the merchant's id)."""
        return bool(orderid and orderid in self.orderids) or bool(
            client_orderid and client_orderid == self.client_orderid
        )

    @property
    def time(self) -> str:
        """``14:03:07.125`` (UTC)."""
        return self.at.strftime("%H:%M:%S.") + f"{self.at.microsecond // 1000:03d}"


def exchange_ids(exchange: Exchange) -> tuple[frozenset[str], str]:
    """The gateway's orderid values an exchange names (sent or answered) and the merchant's client_orderid."""
    sent = dict(exchange.request_fields)
    answer = decoded_answer(exchange)
    orderids = frozenset(filter(None, (sent.get("orderid", ""), answer.get("paynet-order-id", ""))))
    client_orderid = sent.get("client_orderid") or sent.get("client-order-id") or answer.get("merchant-order-id", "")
    return orderids, client_orderid


def exchange_event(exchange: Exchange, at: datetime) -> Event:
    """A request (or a status poll) as an event, summarised from its masked record."""
    sent = dict(exchange.request_fields)
    answer = decoded_answer(exchange)
    orderids, client_orderid = exchange_ids(exchange)
    if exchange.status_code is None:
        said = f"no answer ({exchange.error})"
    elif exchange.operation == "status" and answer.get("status"):
        said = answer["status"] + (f": {answer['error-message']}" if answer.get("error-message") else "")
        said += " (the payer must act)" if answer.get("html") or answer.get("redirect-to") else ""
    elif answer.get("error-message"):
        said = f"HTTP {exchange.status_code} {answer.get('type', '')}: {answer['error-message']}"
    else:
        said = f"HTTP {exchange.status_code} {answer.get('type', '')}".rstrip()
        if answer.get("paynet-order-id"):
            said += f", orderid {answer['paynet-order-id']}"
    amount = f" {sent['amount']} {sent.get('currency', '')}".rstrip() if sent.get("amount") else ""
    kind: EventKind = "poll" if exchange.operation == "status" else "request"
    return Event(
        at=at,
        kind=kind,
        summary=f"{exchange.operation}{amount}: {said}",
        operation=exchange.operation,
        orderids=orderids,
        client_orderid=client_orderid,
        detail={"url": exchange.url, "elapsed": f"{exchange.elapsed * 1000:.0f} ms"},
    )


def arrival_event(received: Received) -> Event:
    """A server callback or a payer redirect, as the receiver recorded it (masked)."""
    control = {True: "control verified", False: "control does NOT verify", None: "control not checked"}
    extra = ", duplicate" if received.duplicate else ""
    answered = f", answered HTTP {received.answered}" if received.answered != 200 else ""
    what = "callback" if received.kind == "callback" else "payer redirect"
    return Event(
        at=received.received_wall,
        kind=received.kind,
        summary=f"{what}: status {received.status or '-'} ({control[received.control_ok]}{extra}{answered})",
        operation=received.type,
        orderids=frozenset(filter(None, (received.orderid,))),
        client_orderid=received.client_orderid,
        detail=dict(received.params),
    )


class Timeline:
    """Every event, oldest first; safe to feed from the receiver's threads."""

    def __init__(self, *, clock: Callable[[], datetime] = _utc_now) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._events: list[Event] = []
        self._listeners: list[Listener] = []

    def __len__(self) -> int:
        with self._lock:
            return len(self._events)

    def __repr__(self) -> str:
        return f"Timeline({len(self)} events)"

    def _add(self, event: Event) -> Event:
        with self._lock:  # in time order: a callback may be recorded before the answer that preceded it
            bisect.insort(self._events, event, key=lambda e: e.at)
            listeners = list(self._listeners)
        for listener in listeners:
            listener(event)
        return event

    def record_exchange(self, exchange: Exchange) -> None:
        """Observer for ``GatewayClient(observers=[...])``; the event is dated when the request left."""
        self._add(exchange_event(exchange, self._clock() - timedelta(seconds=exchange.elapsed)))

    def record_arrival(self, received: Received) -> None:
        """Observer for ``CallbackReceiver(observers=[...])``."""
        self._add(arrival_event(received))

    def note(
        self,
        summary: str,
        *,
        kind: EventKind = "payer",
        orderid: str = "",
        client_orderid: str = "",
        detail: Mapping[str, str] | None = None,
    ) -> Event:
        """Add what the payer (or the merchant) did outside the gateway's API."""
        ids = frozenset(filter(None, (orderid,)))
        return self._add(Event(self._clock(), kind, summary, "", ids, client_orderid, dict(detail or {})))

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener(event)`` for every new event (from whichever thread recorded it)."""
        with self._lock:
            self._listeners.append(listener)

    def unsubscribe(self, listener: Listener) -> None:
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def events(self, kinds: Iterable[EventKind] | None = None) -> list[Event]:
        wanted = set(kinds) if kinds is not None else None
        with self._lock:
            return [event for event in self._events if wanted is None or event.kind in wanted]

    def for_order(self, orderid: str = "", client_orderid: str = "") -> list[Event]:
        """The events of one merchant order (with its follow-ups), oldest first."""
        return [event for event in self.events() if event.concerns(orderid, client_orderid)]

    def clear(self) -> None:
        with self._lock:
            self._events.clear()
