"""``Signalled``: a thread that runs its job when asked, holds what it opened until it ends, and ends when closed
or when its job says it was the last run."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from toolkit.simulator.storage.signalled import Signalled


class Counting(Signalled[list[str]]):
    def __init__(self, last_after: int = 0) -> None:
        super().__init__("test-signalled", close_timeout=10)
        self.events: list[str] = []
        self.ran = threading.Semaphore(0)
        self.release = threading.Event()
        self.last_after = last_after
        self.start()

    @contextmanager
    def opened(self) -> Iterator[list[str]]:
        self.events.append("opened")
        yield self.events
        self.events.append("closed")

    def work(self, held: list[str]) -> None:
        held.append("run")
        self.ran.release()
        self.release.wait(10)
        if self.last_after and held.count("run") >= self.last_after:
            self.finish()


def test_asks_during_a_run_make_one_more_run_and_close_ends_the_thread():
    thread = Counting()
    thread.signal()
    assert thread.ran.acquire(timeout=10)  # the first run is under way (held until released)
    for _ in range(5):
        thread.signal()
    thread.release.set()
    assert thread.ran.acquire(timeout=10)  # one more run for the five asks
    assert not thread.ran.acquire(timeout=0.2)  # (and no third: nothing asked since)
    assert thread.close() and not thread.running
    assert thread.events == ["opened", "run", "run", "closed"]


def test_a_run_that_finishes_ends_the_thread_and_lets_go_of_what_it_held():
    thread = Counting(last_after=1)
    thread.release.set()
    thread.signal()
    assert thread.ended(10) and thread.closed
    assert thread.events == ["opened", "run", "closed"]
