"""Connections: how long the simulator waits for a request, and how many connections it keeps.

uvicorn closes a keep-alive connection that stays idle after an answer (``timeout_keep_alive``),
but it waits for ever for the first request of a connection, for headers sent a byte at a time
(slowloris) and for a body that never ends.  ``GuardedH11Protocol`` gives every request
``request_timeout`` seconds, from the moment the connection is ready for it to its last body
byte; a connection that misses it is closed (with ``408 Request Timeout`` when part of a request
came).  Time spent answering (a long-poll, a delay fault) does not count.  Beyond
``MAX_CONNECTIONS`` uvicorn answers 503.

    config = uvicorn_config(app, settings)   # what SimulatorServer and the benchmarks run
"""

from __future__ import annotations

import asyncio
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from toolkit.simulator.settings import SimulatorSettings

MAX_CONNECTIONS = 1024
KEEP_ALIVE = 5  # seconds an idle keep-alive connection stays open (uvicorn's default)
LINGER = 1.0  # seconds a connection closed for being too slow is still read (and dropped) before it closes
_TIMEOUT_TEXT = b"the request did not arrive in time (request_timeout): connection closed\n"
_TIMEOUT_ANSWER = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(_TIMEOUT_TEXT), _TIMEOUT_TEXT)
)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline for receiving each request."""

    request_timeout = 10.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._due: float | None = None  # when the awaited request must be whole (None: not awaiting one)
        self._timer: asyncio.TimerHandle | None = None
        self._partial = False
        self._lingering = False  # closed for the client after a 408: what it still sends is read and dropped
        super().connection_made(transport)
        self._follow()

    def data_received(self, data: bytes) -> None:
        if self._lingering:
            return
        self._partial = True
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        self._due = None  # a new request, a new deadline
        self._partial = False
        super().on_response_complete()
        self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
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
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER, self.transport.close)


def protocol_class(request_timeout: float) -> type[GuardedH11Protocol]:
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"request_timeout": request_timeout})


def uvicorn_config(app: Any, settings: SimulatorSettings, *, log_level: str = "warning") -> uvicorn.Config:
    """The server settings of a simulator: guarded connections, a connection limit, no access log, no WebSockets."""
    return uvicorn.Config(
        app,
        http=protocol_class(settings.request_timeout),
        ws="none",  # no WebSocket routes: an upgrade is plain HTTP (and no wsproto/websockets import at start)
        log_level=log_level,
        lifespan="on",
        access_log=False,
        limit_concurrency=MAX_CONNECTIONS,
        timeout_keep_alive=KEEP_ALIVE,
    )
