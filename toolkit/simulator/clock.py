"""The simulator's clock: wall time plus an offset that the control API can advance.

OAuth timestamps are checked against ``wall()``: a client cannot know how far a test advanced the
business clock.  Advancing the clock is how tests reach a settlement cut-off, a recurring charge, a 3-D Secure
method timeout or the next callback retry without waiting.  Listeners (the scheduler) are told.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import threading
import time
from collections.abc import Callable
from typing import Protocol

from toolkit.simulator.storage import StoreUnavailable

# The clock stops short of the year 9999 by centuries: dates computed from it (settlement, recurring
# charges years ahead) stay within what datetime can write.
LATEST_TEXT = "9000-01-01"
LATEST = dt.datetime(9000, 1, 1, tzinfo=dt.UTC).timestamp()


class ClockLimit(ValueError):
    """An advance that would pass ``LATEST``."""


class SimClock:
    """Wall time plus an offset.  ``shared``: a store that several processes use (``--workers``, one ``--db``
    file or PostgreSQL for several simulators): the offset then lives in it (``meta.clock_offset``), so an
    advance through one process moves every process's clock.  Each process reads it at most every
    ``SHARED_READ`` seconds, and an advance returns only after that long: once the control call that moved
    the clock has answered, every process tells the new time.
    """

    SHARED_READ = 0.02  # seconds a process keeps the shared offset it read

    def __init__(self, source: Callable[[], float] = time.time, *, shared: SharedOffset | None = None) -> None:
        self._source = source
        self._offset = 0.0
        self._shared = shared
        self._read_at = -1.0  # (monotonic) when the shared offset was last read
        self._lock = threading.Lock()
        self._listeners: list[Callable[[], None]] = []

    def now(self) -> float:
        return self._source() + self.offset

    def wall(self) -> float:
        """Real time, without the advanced offset: what a client's clock reads (OAuth timestamps)."""
        return self._source()

    @property
    def offset(self) -> float:
        """The offset; a shared one read again when the last reading is older than ``SHARED_READ``, or the last
        one kept while the shared store does not answer (what needs the store says so itself)."""
        if self._shared is not None and time.monotonic() - self._read_at > self.SHARED_READ:
            with contextlib.suppress(StoreUnavailable):
                self._offset = self._shared.read_offset()
            self._read_at = time.monotonic()
        return self._offset

    def advance(self, seconds: float) -> float:
        """Move forward by ``seconds``; ``ClockLimit`` rather than past ``LATEST`` (dates stay computable)."""
        if seconds < 0:
            raise ValueError("the simulator's clock only moves forward")
        with self._lock:
            if self._shared is not None:
                self._offset = self._shared.add_offset(
                    seconds, lambda current: self._limit(self._source() + current, seconds)
                )
                self._read_at = time.monotonic()
            else:
                self._limit(self._source() + self._offset, seconds)
                self._offset += seconds
        self._others_see_it()
        for listener in list(self._listeners):
            listener()
        return self.now()

    def _limit(self, now: float, seconds: float) -> None:
        if now + seconds > LATEST:
            raise ClockLimit(
                f"{seconds:.0f} s would move the simulator's clock past {LATEST_TEXT} (its limit); "
                f"at most {max(0.0, LATEST - now):.0f} s are left (POST /_sim/reset starts again)"
            )

    def reset(self) -> None:
        """Back to wall time (offset 0): only for a reset that also forgets every stored time."""
        with self._lock:
            if self._shared is not None:
                self._shared.set_offset(0.0)
                self._read_at = time.monotonic()
            self._offset = 0.0
        self._others_see_it()
        for listener in list(self._listeners):
            listener()

    def _others_see_it(self) -> None:
        if self._shared is not None:  # the other processes' reads of the old offset grow stale meanwhile
            time.sleep(self.SHARED_READ)

    def on_change(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)


class SharedOffset(Protocol):
    """Where several processes keep the clock offset (``toolkit.simulator.storage.sqlite.Store``)."""

    def read_offset(self) -> float: ...

    def set_offset(self, offset: float) -> None: ...

    def add_offset(self, seconds: float, check: Callable[[float], None]) -> float:
        """Add ``seconds`` in one transaction (``check(offset)`` may refuse first, given the current offset);
        the new offset."""
        ...
