"""The simulator's clock: wall time plus an offset that the control API can advance.

OAuth timestamps are checked against ``wall()``: a client cannot know how far a test advanced the
business clock.  Advancing the clock is how tests reach a settlement cut-off, a recurring charge, a 3-D Secure
method timeout or the next callback retry without waiting.  Listeners (the scheduler) are told.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable

# The clock stops short of the year 9999 by centuries: dates computed from it (settlement, recurring
# charges years ahead) stay within what datetime can write.
LATEST_TEXT = "9000-01-01"
LATEST = dt.datetime(9000, 1, 1, tzinfo=dt.UTC).timestamp()


class ClockLimit(ValueError):
    """An advance that would pass ``LATEST``."""


class SimClock:
    def __init__(self, source: Callable[[], float] = time.time) -> None:
        self._source = source
        self._offset = 0.0
        self._lock = threading.Lock()
        self._listeners: list[Callable[[], None]] = []

    def now(self) -> float:
        return self._source() + self._offset

    def wall(self) -> float:
        """Real time, without the advanced offset: what a client's clock reads (OAuth timestamps)."""
        return self._source()

    @property
    def offset(self) -> float:
        return self._offset

    def advance(self, seconds: float) -> float:
        """Move forward by ``seconds``; ``ClockLimit`` rather than past ``LATEST`` (dates stay computable)."""
        if seconds < 0:
            raise ValueError("the simulator's clock only moves forward")
        with self._lock:
            if self.now() + seconds > LATEST:
                raise ClockLimit(
                    f"{seconds:.0f} s would move the simulator's clock past {LATEST_TEXT} (its limit); "
                    f"at most {max(0.0, LATEST - self.now()):.0f} s are left (POST /_sim/reset starts again)"
                )
            self._offset += seconds
        for listener in list(self._listeners):
            listener()
        return self.now()

    def reset(self) -> None:
        """Back to wall time (offset 0): only for a reset that also forgets every stored time."""
        with self._lock:
            self._offset = 0.0
        for listener in list(self._listeners):
            listener()

    def on_change(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)
