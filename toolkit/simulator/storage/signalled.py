"""A daemon thread that does one job each time it is asked, until it is closed.

The checkpointer (``checkpoints.Checkpointer``: a look at the log's size every few commits) and the lock's watcher
(``batch._LockWatcher``: a wait for the processes' write lock) are such threads.  A subclass gives ``opened()``,
what the thread holds while it runs (a connection, a descriptor: opened in the thread, closed when it ends), and
``work(held)``, one run of the job; ``signal()`` asks for a run.  Asks that come while a run goes on make one more
run, not one each.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from typing import Generic, TypeVar

Held = TypeVar("Held")


class Signalled(Generic[Held]):
    def __init__(self, name: str, *, close_timeout: float) -> None:
        """``close_timeout``: how long ``close()`` waits for a run under way."""
        self._asked = threading.Event()
        self._closed = False
        self._close_timeout = close_timeout
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        """Start the thread (once the subclass has what ``opened`` and ``work`` need)."""
        self._thread.start()

    def signal(self) -> None:
        """Ask for a run of ``work``."""
        self._asked.set()

    def close(self, timeout: float | None = None) -> bool:
        """No more runs: the thread ends after the run under way, waited for ``timeout`` seconds at most (the
        ``close_timeout`` by default).  Whether it ended."""
        self._closed = True
        self._asked.set()
        return self.ended(self._close_timeout if timeout is None else timeout)

    def ended(self, timeout: float) -> bool:
        """Whether the thread has ended, waiting ``timeout`` seconds at most."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def finish(self) -> None:
        """From ``work``: this run is the last (the thread then ends)."""
        self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed

    def opened(self) -> AbstractContextManager[Held]:
        raise NotImplementedError

    def work(self, held: Held) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        with self.opened() as held:
            while True:
                self._asked.wait()
                self._asked.clear()
                if self._closed:
                    return
                self.work(held)
                if self._closed:
                    return
