"""Serving until Ctrl-C or SIGTERM: a ``Stop`` that a signal handler sets without taking a lock.

``gatekit simulate``, ``proxy``, ``listen`` and the workers' supervisor serve until they are told to stop. Two
things make that harder than it looks:

- Python runs a signal's handler in the main thread, between two bytecodes, wherever that thread is. A handler
  that takes a lock deadlocks when the main thread already holds it: ``threading.Event.set()`` in a handler
  while the main thread was inside ``Event.wait()`` (which holds the Event's lock around its checks) left
  ``gatekit simulate`` serving after SIGTERM, about once in ten stops (issue 34, #3). The handler here sets a
  flag and writes a byte to a pipe: no lock.
- The kernel hands a process's signal to any of its threads. The C-level handler then writes the signal's
  number to the wakeup descriptor (``signal.set_wakeup_fd``), which is the same pipe: the main thread, blocked
  in ``select`` on it, wakes at once and runs the Python handler (no timed wait coming back to check).
"""

from __future__ import annotations

import os
import select
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stop:
    """A request to stop: ``set()`` from any thread or a signal handler; ``wait()`` until it is set.

    It holds no lock: ``set`` assigns a flag and writes a byte to a non-blocking pipe, ``wait`` sleeps in
    ``select`` on that pipe.
    """

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self._set = False

    def set(self) -> None:
        self._set = True
        self.wake()

    def wake(self) -> None:
        """A byte in the pipe: ``wait`` looks at the flag again (the pipe full or closed: a byte waits already)."""
        with suppress(OSError):
            os.write(self._write, b"!")

    def is_set(self) -> bool:
        return self._set

    @property
    def wakeup_fd(self) -> int:
        """The pipe's writing end, for ``signal.set_wakeup_fd``."""
        return self._write

    def wait(self, timeout: float | None = None) -> bool:
        """Until ``set()`` (True), or ``timeout`` seconds (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._set:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            ready, _, _ = select.select([self._read], [], [], left)
            if ready:
                self._drain()
        return True

    def _drain(self) -> None:
        try:
            while os.read(self._read, 512):
                pass
        except BlockingIOError:
            pass

    def close(self) -> None:
        for fd in (self._read, self._write):
            with suppress(OSError):
                os.close(fd)

    def __enter__(self) -> Stop:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def wait_until_stopped(stop: Stop) -> None:
    """Wait until ``stop`` is set: by ``stop_on_signals``' handler, or by another thread."""
    stop.wait()


@contextmanager
def stop_on_signals(stop: Stop) -> Iterator[None]:
    """Ctrl-C and SIGTERM set ``stop`` (even where SIGINT was ignored), the previous handlers come back after.

    Only the main thread can install handlers: elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()  # a flag and a byte in a pipe: no lock (the main thread may hold any lock right now)

    previous = {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}
    previous_fd = signal.set_wakeup_fd(stop.wakeup_fd, warn_on_full_buffer=False)
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous_fd)
        for signum, before in previous.items():
            signal.signal(signum, before)
