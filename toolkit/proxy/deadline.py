"""``Deadline``: when an exchange with the gateway must be over; ``Watchdog``: what holds a socket to it.

A socket's timeout bounds one read.  ``http.client`` reads a status line, the header fields and a body in many
reads, so a gateway that sends a byte a second would hold an exchange as long as it likes, whatever the
timeout.  The watchdog (one thread for the whole proxy) shuts a watched socket down when its deadline passes:
the read waiting on it returns at once, and the exchange ends as a timeout (``Watch.fired``).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import socket
import threading
import time


class Deadline:
    """``seconds`` from now, on the monotonic clock."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    @property
    def expired(self) -> bool:
        return time.monotonic() >= self.at


class Watch:
    """One socket watched until ``cancel()``; ``fired``: shut down by the watchdog (its deadline passed, or the
    proxy stopped: ``stopped``)."""

    def __init__(self, sock: socket.socket, at: float, watchdog: Watchdog) -> None:
        self.sock, self.at, self._watchdog = sock, at, watchdog
        self.fired = self.stopped = self.cancelled = False

    def cancel(self) -> None:
        """Not watched any longer: once this returns, the socket is never shut down by the watchdog."""
        self._watchdog.cancel(self)

    def fire(self) -> None:
        self.fired = True
        with contextlib.suppress(OSError):  # (the socket's own method: an SSLSocket's would drop its TLS state)
            socket.socket.shutdown(self.sock, socket.SHUT_RDWR)


class Watchdog:
    """Shuts each watched socket down at its deadline: ``watch(sock, deadline)``, then ``cancel()`` the watch."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Watch]] = []
        self._order = itertools.count()
        self._changed = threading.Condition()
        self._closed = False
        self._active = 0
        self._thread = threading.Thread(target=self._run, name="gatekit-proxy-watchdog", daemon=True)

    def watch(self, sock: socket.socket, deadline: Deadline) -> Watch:
        watch = Watch(sock, deadline.at, self)
        with self._changed:
            if self._closed:
                watch.stopped = True
                watch.fire()
                return watch
            if not self._thread.is_alive():
                self._thread.start()
            heapq.heappush(self._heap, (deadline.at, next(self._order), watch))
            self._active += 1
            self._changed.notify()
        return watch

    def cancel(self, watch: Watch) -> None:
        with self._changed:
            if watch.cancelled or watch.fired:
                return
            watch.cancelled = True
            self._active -= 1
            if len(self._heap) > 64 and len(self._heap) > 2 * self._active:  # (cancelled watches are left behind)
                self._heap = [item for item in self._heap if not item[2].cancelled]
                heapq.heapify(self._heap)

    def close(self) -> None:
        """Shut every watched socket down now (the proxy stops), and end the thread."""
        with self._changed:
            self._closed = True
            for _, _, watch in self._heap:
                if not watch.cancelled:
                    watch.stopped = True
                    watch.fire()
            self._heap.clear()
            self._changed.notify()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        with self._changed:
            while not self._closed:
                while self._heap and self._heap[0][2].cancelled:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._changed.wait()
                elif (wait := self._heap[0][0] - time.monotonic()) > 0:
                    self._changed.wait(wait)
                else:
                    heapq.heappop(self._heap)[2].fire()
                    self._active -= 1


__all__ = ["Deadline", "Watch", "Watchdog"]
