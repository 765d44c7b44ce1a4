"""Connections: how long the simulator waits for a request, and how many connections it keeps.

uvicorn closes a keep-alive connection that stays idle after an answer (``timeout_keep_alive``),
but it waits for ever for the first request of a connection, for headers sent a byte at a time
(slowloris) and for a body that never ends.  ``GuardedH11Protocol`` gives every request
``request_timeout`` seconds, from the moment the connection is ready for it to its last body
byte; a connection that misses it is closed (with ``408 Request Timeout`` when part of a request
came).  Time spent answering (a long-poll, a delay fault) does not count.

Connections cost a file descriptor and some memory each, and a client can open thousands and send nothing.
So idle connections (waiting for a request, nothing of it received) are the first to go: when a client
address holds ``connections_per_client`` connections (``PER_ADDRESS`` by default), or the simulator
``max_connections()`` in all, a new connection closes the oldest idle one (of that address first).  When
none is idle, the new connection from an address at its cap is answered ``503`` and closed; others keep
being served.  uvicorn's own limit (503 to everyone once as many connections are open, idle ones
included) is set above ours.

    config = uvicorn_config(app, settings)   # what SimulatorServer and the benchmarks run
"""

from __future__ import annotations

import asyncio
import resource
from collections import Counter
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from toolkit.simulator.settings import SimulatorSettings

PER_ADDRESS = 1024  # connections one client address may hold
MAX_CONNECTIONS = 8192  # in all, at most (and at most the descriptors the process may open, less a reserve)
FD_RESERVE = 128  # descriptors kept for the store, logs and outgoing callbacks
# The listen queue, and so the most connections asyncio accepts in one go: a flood of new connections (a client
# opening thousands) is taken in batches this size, between which requests already in are answered (with
# uvicorn's 2048, one batch held the event loop for a tenth of a second).
ACCEPT_BATCH = 128
KEEP_ALIVE = 5  # seconds an idle keep-alive connection stays open (uvicorn's default)
LINGER = 1.0  # seconds a connection closed for being too slow is still read (and dropped) before it closes
_TIMEOUT_TEXT = b"the request did not arrive in time (request_timeout): connection closed\n"
_BUSY_TEXT = b"too many connections from this address, none of them idle: try again later\n"
_BUSY_ANSWER = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
    b"retry-after: 1\r\ncontent-length: %d\r\n\r\n%s" % (len(_BUSY_TEXT), _BUSY_TEXT)
)
_TIMEOUT_ANSWER = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(_TIMEOUT_TEXT), _TIMEOUT_TEXT)
)


def max_connections() -> int:
    """``MAX_CONNECTIONS``, or fewer when the process may open fewer descriptors (``ulimit -n``)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(64, min(MAX_CONNECTIONS, soft - FD_RESERVE))


class Registry:
    """The connections of one server: how many each client address holds, and the idle ones in the order they
    became idle (per address and in all), so that the oldest idle one is found at once."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.idle: dict[str, dict[GuardedH11Protocol, None]] = {}  # address -> its idle connections, oldest first
        self.all_idle: dict[GuardedH11Protocol, None] = {}  # every idle connection, oldest first
        self.total = 0

    def idle_now(self, connection: GuardedH11Protocol) -> None:
        book = self.idle.setdefault(connection.address, {})
        book.pop(connection, None)
        book[connection] = None
        self.all_idle.pop(connection, None)
        self.all_idle[connection] = None

    def busy_now(self, connection: GuardedH11Protocol) -> None:
        book = self.idle.get(connection.address)
        if book is not None:
            book.pop(connection, None)
            if not book:
                del self.idle[connection.address]
        self.all_idle.pop(connection, None)

    def oldest_idle(self, address: str | None, besides: GuardedH11Protocol) -> GuardedH11Protocol | None:
        """The oldest idle connection of ``address`` (None: of any address), other than ``besides``."""
        book = self.all_idle if address is None else self.idle.get(address, {})
        return next((c for c in book if c is not besides), None)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline for receiving each request, and idle connections evicted."""

    request_timeout = 10.0
    per_address = PER_ADDRESS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._due: float | None = None  # when the awaited request must be whole (None: not awaiting one)
        self._timer: asyncio.TimerHandle | None = None
        self._partial = False
        self._lingering = False  # closed for the client after a 408: what it still sends is read and dropped
        self._counted = False  # counted against its client address (until released)
        super().connection_made(transport)
        self.address = self.client[0] if self.client else ""
        registry = self._registry()
        registry.counts[self.address] += 1
        registry.total += 1
        self._counted = True
        registry.idle_now(self)
        if not self._make_room(registry):
            transport.write(_BUSY_ANSWER)
            self._lingering = True
            self._release()
            transport.close()
            return
        self._follow()

    def _registry(self) -> Registry:
        """The server's ``Registry`` (kept on uvicorn's server state: one per server)."""
        registry: Registry | None = getattr(self.server_state, "gatekit_registry", None)
        if registry is None:
            registry = Registry()
            self.server_state.gatekit_registry = registry  # type: ignore[attr-defined]
        return registry

    @property
    def idle(self) -> bool:
        """Waiting for a request with nothing of it received (what is evicted first)."""
        cycle = self.cycle
        return not self._partial and (cycle is None or cycle.response_complete) and not self.transport.is_closing()

    def _make_room(self, registry: Registry) -> bool:
        """Close the oldest idle connections while this address or the server is at its cap; False when this
        address is at its cap with none of its other connections idle (the new one is then refused)."""
        while registry.counts[self.address] > self.per_address:
            oldest = registry.oldest_idle(self.address, self)
            if oldest is None:
                return False
            oldest._evict()
        while registry.total > max_connections():
            oldest = registry.oldest_idle(None, self)
            if oldest is None:
                break  # (every other connection is busy: uvicorn's own limit answers 503 beyond it)
            oldest._evict()
        return True

    def _evict(self) -> None:
        self._release()  # (counted out now: its connection_lost comes after this batch of accepts)
        self.transport.close()

    def _release(self) -> None:
        """This connection no longer counts against its address (closed, or about to be)."""
        if not self._counted:
            return
        self._counted = False
        registry = self._registry()
        registry.busy_now(self)
        registry.total -= 1
        registry.counts[self.address] -= 1
        if registry.counts[self.address] <= 0:
            del registry.counts[self.address]

    def data_received(self, data: bytes) -> None:
        if self._lingering:
            return
        if not self._partial and self._counted:
            self._registry().busy_now(self)
        self._partial = True
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        self._due = None  # a new request, a new deadline
        self._partial = False
        if self._counted and not self.transport.is_closing():
            self._registry().idle_now(self)
        super().on_response_complete()
        self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        self._release()
        self._due = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        super().connection_lost(exc)

    def _follow(self) -> None:
        """The clock runs while a request is awaited or arriving; it stops once the request is whole.

        Setting or clearing ``_due`` is all a request costs: one timer per connection checks it when it
        fires and sets itself again for a deadline that moved (no timer made and cancelled per request).
        """
        cycle = self.cycle
        waiting = cycle is None or cycle.response_complete or cycle.more_body
        if waiting and self._due is None and not self.transport.is_closing():
            self._due = self.loop.time() + self.request_timeout
            if self._timer is None:
                self._timer = self.loop.call_at(self._due, self._check)
        elif not waiting:
            self._due = None

    def _check(self) -> None:
        self._timer = None
        if self._due is None:
            return  # not awaiting a request: the next one sets the timer again
        if self.loop.time() < self._due:
            self._timer = self.loop.call_at(self._due, self._check)
            return
        self._too_slow()

    def _too_slow(self) -> None:
        self._due = None
        if self.transport.is_closing():
            return
        cycle = self.cycle
        answered = self._partial and (cycle is None or cycle.response_complete or not cycle.response_started)
        if answered:
            self.transport.write(_TIMEOUT_ANSWER)
        if cycle is not None and not cycle.response_complete:
            cycle.disconnected = True
            cycle.message_event.set()
        if answered:
            self._linger()
        else:  # an idle connection: nothing to lose, and no second held for it
            self.transport.close()

    def _linger(self) -> None:
        """Close after the 408 without losing it: a socket closed with unread bytes sends a reset, and a client
        still sending (a byte at a time) would get that reset instead of the answer.  So the end of the stream
        is sent after the answer, what comes is read and dropped, and the connection closes ``LINGER`` later."""
        self._lingering = True
        self.transport.resume_reading()  # (uvicorn may have paused reading: then nothing would be read and dropped)
        try:
            if self.transport.can_write_eof():
                self.transport.write_eof()
        except OSError:  # the client is gone already: nothing to linger for
            self.transport.close()
            return
        self.loop.call_later(LINGER, self.transport.close)


def protocol_class(request_timeout: float, per_address: int = PER_ADDRESS) -> type[GuardedH11Protocol]:
    attributes = {"request_timeout": request_timeout, "per_address": per_address}
    return type("GuardedH11Protocol", (GuardedH11Protocol,), attributes)


GRACEFUL_STOP = 3  # seconds


def uvicorn_config(app: Any, settings: SimulatorSettings, *, log_level: str = "warning") -> uvicorn.Config:
    """The server settings of a simulator: guarded connections, a connection limit, no access log, no WebSockets."""
    return uvicorn.Config(
        app,
        http=protocol_class(settings.request_timeout, settings.connections_per_client),
        ws="none",  # no WebSocket routes: an upgrade is plain HTTP (and no wsproto/websockets import at start)
        log_level=log_level,
        lifespan="on",
        access_log=False,
        limit_concurrency=max_connections() + PER_ADDRESS,  # (ours closes idle ones first; this, busy ones)
        timeout_keep_alive=KEEP_ALIVE,
        backlog=ACCEPT_BATCH,
        # a simulator that stops waits this long for answers still on their way (a delay or timeout fault holds
        # one for minutes), then cancels them
        timeout_graceful_shutdown=GRACEFUL_STOP,
    )
