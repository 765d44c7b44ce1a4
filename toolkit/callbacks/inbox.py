"""The receiver's memory: arrivals in order, and waiting for one without polling.

One ``threading.Condition`` guards the list; a new arrival notifies every waiter, so a test
that waits for a callback wakes within milliseconds of it (behaviour section 3: "stop polling
as soon as a callback for the order has arrived").
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace

from toolkit.callbacks.records import Kind, Received

_SHOWN_IN_ERRORS = 10


class CallbackTimeout(TimeoutError):
    """Nothing matching arrived in time; ``received`` holds what did arrive."""

    def __init__(self, message: str, received: list[Received]) -> None:
        super().__init__(message)
        self.received = received


def criteria_text(orderid: str | None, client_orderid: str | None, status: str | None, type: str | None = None) -> str:
    """``orderid=1 status=approved``, or ``any order`` when nothing is given."""
    given = {"orderid": orderid, "client_orderid": client_orderid, "type": type, "status": status}
    return " ".join(f"{name}={value}" for name, value in given.items() if value is not None) or "any order"


def timeout_message(kind: Kind, criteria: str, timeout: float, count: int, received: list[Received]) -> str:
    """``no callback for orderid=1 within 2s; received so far (1): redirect orderid=1 ...``."""
    wanted = f"fewer than {count} {kind}s" if count > 1 else f"no {kind}"
    head = f"{wanted} for {criteria} within {timeout:g}s"
    if not received:
        return f"{head}; nothing was received"
    shown = "; ".join(r.summary() for r in received[-_SHOWN_IN_ERRORS:])
    more = f", last {_SHOWN_IN_ERRORS} shown" if len(received) > _SHOWN_IN_ERRORS else ""
    return f"{head}; received so far ({len(received)}{more}): {shown}"


class Inbox:
    """Every arrival, in order; de-duplication on (orderid, type, status) of accepted ones."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._records: list[Received] = []
        self._accepted: set[tuple[str, str, str, str]] = set()

    def add(self, draft: Received) -> Received:
        """Store an arrival, marked ``duplicate`` when its key was already answered 200; wake waiters."""
        with self._condition:
            record = replace(draft, duplicate=draft.dedupe_key in self._accepted)
            if record.answered == 200:
                self._accepted.add(record.dedupe_key)
            self._records.append(record)
            self._condition.notify_all()
        return record

    def select(
        self,
        kind: Kind | None = None,
        *,
        orderid: str | None = None,
        client_orderid: str | None = None,
        status: str | None = None,
        type: str | None = None,
    ) -> list[Received]:
        """The arrivals of ``kind`` (None: every kind) that match, oldest first."""
        with self._condition:
            of_kind = [r for r in self._records if kind is None or r.kind == kind]
        criteria = {"orderid": orderid, "client_orderid": client_orderid, "status": status, "type": type}
        return [r for r in of_kind if r.matches(**criteria)]

    def wait_for(
        self,
        kind: Kind,
        *,
        orderid: str | None = None,
        client_orderid: str | None = None,
        status: str | None = None,
        type: str | None = None,
        timeout: float = 10.0,
        count: int = 1,
    ) -> Received:
        """The ``count``-th matching arrival, waiting up to ``timeout``; CallbackTimeout names what came."""
        if count < 1:
            raise ValueError("count must be 1 or more")
        with self._condition:

            def matching() -> list[Received]:
                return self.select(kind, orderid=orderid, client_orderid=client_orderid, status=status, type=type)

            if self._condition.wait_for(lambda: len(matching()) >= count, max(timeout, 0.0)):
                return matching()[count - 1]
            received = list(self._records)
        criteria = criteria_text(orderid, client_orderid, status, type)
        raise CallbackTimeout(timeout_message(kind, criteria, timeout, count, received), received)

    def clear(self) -> None:
        """Forget every arrival and every de-duplication key."""
        with self._condition:
            self._records.clear()
            self._accepted.clear()

    def waker(self, kind: Kind, *, orderid: str | None = None, client_orderid: str | None = None) -> OrderWaker:
        return OrderWaker(self, kind, orderid=orderid, client_orderid=client_orderid)

    def wait_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``predicate()`` holds (checked at every arrival); its last value."""
        with self._condition:
            return self._condition.wait_for(predicate, max(timeout, 0.0))


class OrderWaker:
    """A ``toolkit.waiting.Waker``: ``wait`` is True as soon as a new arrival for the order is here.

    New: after the waker was made.  An order's later transactions (capture, reversal...) are called
    back under the same orderid, so an earlier callback of the order must not end the wait for them;
    one that came before the waker is seen by the wait's first poll anyway.
    """

    def __init__(self, inbox: Inbox, kind: Kind, *, orderid: str | None, client_orderid: str | None) -> None:
        if orderid is None and client_orderid is None:
            raise ValueError("a waker needs an orderid or a client_orderid")
        self._inbox = inbox
        self._kind: Kind = kind
        self.orderid = orderid
        self.client_orderid = client_orderid
        self._seen = len(self._arrivals())

    def _arrivals(self) -> list[Received]:
        return self._inbox.select(self._kind, orderid=self.orderid, client_orderid=self.client_orderid)

    def __repr__(self) -> str:
        return f"OrderWaker({self._kind}, orderid={self.orderid!r}, client_orderid={self.client_orderid!r})"

    def arrived(self) -> bool:
        """True when an arrival for the order came since the waker was made (does not wait)."""
        return len(self._arrivals()) > self._seen

    def wait(self, timeout: float) -> bool:
        """True as soon as a new arrival for the order is here (at once if it is), False at the timeout."""
        return self._inbox.wait_until(self.arrived, timeout)
