"""Group commit: the writes of the sales a simulator answers on its event loop, several in one transaction (a SQLite
file; PostgreSQL too, where the lock is ``pg_try_advisory_xact_lock`` on the loop's own connection and the watcher
waits for it on a connection of its own: ``PostgresStore.watch_writers``).

A sale decides its outcome before it writes (``Engine.draft_scheduled_tx``); what is left is the write: the order's
id, the ``client_orderid`` repeat check and the insert, inside the processes' write lock.  On a file that several
processes share (``--workers``, or two simulators on one ``--db``), each write transaction pays the lock, SQLite's
``BEGIN IMMEDIATE`` and ``COMMIT``, and the pages the other process changed since (SQLite drops its page cache
when another connection has written).  The loop's sales that arrive together are written together instead: one
transaction for all of them, with a savepoint each, so one refused sale (a repeat with another card) leaves the
others written.  Each sale is still one decision with the lock held: the repeat check of a later sale of the batch
sees the earlier ones.

How: while ``answer`` runs on the loop, ``collecting`` is the loop's thread; a write the rules hand to
``serving.write_soon`` then comes back as a ``serving.Later``, and ``serving.serve`` awaits ``Batcher.submit``.
The batch is written on the next turn of the loop (what arrived with it is in it).  When another process holds
the lock, a thread of the batcher (the lock's watcher) waits for it to be free and tells the loop, which asks
again then (serving meanwhile); after a few milliseconds the batch goes to a gateway thread, which waits for the
lock: nothing waits on the loop.  (The loop used to ask again on a timer, every 0.2 ms as written; but the loop's
selector waits in whole milliseconds, so a loop with nothing else to do slept a millisecond or more each time it
asked.)
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from anyio import CapacityLimiter

from toolkit.simulator import pools
from toolkit.simulator.storage.base import Insert, StoreBusy
from toolkit.simulator.storage.signalled import Signalled

MAX_BATCH = 64  # sales in one transaction (the lock is held for all of them)
# Another process holds the lock: the loop asks again when the watcher sees it free (it serves meanwhile, and what
# arrives joins the batch; the loop writes, as a thread holding the lock would compete with the loop for the GIL),
# for LOOP_RETRIES_FOR at most, then the batch waits for the lock in a thread (a long write of the other process).
LOOP_RETRIES_FOR = 0.005


class BatchedStore(Protocol):
    """What a batch needs of its store (``sqlite.SqliteStore``, a file; ``postgres.PostgresStore``)."""

    def transaction(self) -> AbstractContextManager[Any]: ...

    def savepoint(self) -> AbstractContextManager[None]: ...

    def without_waiting(self, patience: float = ...) -> AbstractContextManager[None]: ...

    def watch_writers(self) -> AbstractContextManager[Any]: ...

    def write_ahead(self, inserts: list[Insert | None]) -> AbstractContextManager[None]: ...

    def wait_for_writers(self, watching: Any) -> None: ...


@dataclass
class _Item:
    write: Callable[[], Any]
    future: asyncio.Future[Any]
    ahead: Insert | None = None  # the insert ``write`` makes first (``BatchedStore.write_ahead``)


@dataclass
class Batcher:
    """One per process and store: the loop's pending writes, written together on the loop's next turn."""

    store: BatchedStore
    collecting: int | None = None  # the thread whose handlers may defer (the loop's, while it answers)
    _items: list[_Item] = field(default_factory=list)
    _flush_at: asyncio.TimerHandle | None = None  # (the flush due, if any)
    _threads: set[asyncio.Future[None]] = field(default_factory=set)
    _busy_since: float | None = None  # (loop time of the first refusal of the lock, while it lasts)
    _watcher: _LockWatcher | None = None
    batches: int = 0  # transactions written so far
    writes: int = 0  # writes they held

    @property
    def writing_in_threads(self) -> int:
        """Batches that wait for another process's long write in a gateway thread."""
        return len(self._threads)

    @property
    def watcher(self) -> Signalled[Any] | None:
        """The thread that waits for the processes' write lock to be free, once a batch was refused it."""
        return self._watcher

    @contextmanager
    def collect(self) -> Iterator[None]:
        """While the loop's thread answers a request: a write may be deferred to the batch."""
        self.collecting = threading.get_ident()
        try:
            yield
        finally:
            self.collecting = None

    def collects_here(self) -> bool:
        return self.collecting is not None and self.collecting == threading.get_ident()

    async def submit(self, write: Callable[[], Any], limiter: CapacityLimiter, ahead: Insert | None = None) -> Any:
        """What ``write()`` returned once its batch has committed (or the exception it raised); ``ahead``: the
        ``insert_unless`` it makes first, which the store may make with the other writes' (``write_ahead``)."""
        item = _Item(write, asyncio.get_running_loop().create_future(), ahead)
        self._items.append(item)
        self._schedule(limiter)
        return await item.future

    def _schedule(self, limiter: CapacityLimiter, delay: float = 0.0) -> None:
        """A flush on the loop's next turn (or ``delay`` later), unless one is due already."""
        if self._flush_at is None:
            self._flush_at = asyncio.get_running_loop().call_later(delay, self._flush, limiter)

    def _lock_free(self, limiter: CapacityLimiter) -> None:
        """The watcher saw the lock free: a batch that waits for it is written now (not at its time limit)."""
        if self._busy_since is not None and self._flush_at is not None:
            self._flush_at.cancel()
            self._flush(limiter)

    def close(self) -> None:
        """Stop the lock's watcher (the simulator stops)."""
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None

    def _flush(self, limiter: CapacityLimiter) -> None:
        self._flush_at = None
        items, self._items = self._items[:MAX_BATCH], self._items[MAX_BATCH:]
        try:
            with self.store.without_waiting(patience=0):
                outcomes = self._write(items)
        except StoreBusy:  # nothing written
            self._lock_busy(items, limiter)
        except Exception as exc:  # (the commit failed: every write of the batch with it)
            self._busy_since = None
            _settle(items, [exc] * len(items))
        else:
            self._busy_since = None
            _settle(items, outcomes)
        if self._items:  # (more than a batch, or a batch put back: the rest on the next turn)
            self._schedule(limiter)

    def _lock_busy(self, items: list[_Item], limiter: CapacityLimiter) -> None:
        """Another process holds the lock: asked again in a moment (the loop serves meanwhile, and what comes
        joins the batch), for ``LOOP_RETRIES_FOR`` at most; then the batch waits for the lock in a thread."""
        now = asyncio.get_running_loop().time()
        if self._busy_since is None:
            self._busy_since = now
        if now - self._busy_since < LOOP_RETRIES_FOR:
            self._items[:0] = items  # (first in, first written)
            self._schedule(limiter, self._busy_since + LOOP_RETRIES_FOR - now)
            if self._watcher is None:
                self._watcher = _LockWatcher(self.store, asyncio.get_running_loop())
            self._watcher.watch(lambda: self._lock_free(limiter))
            return
        self._busy_since = None
        task = asyncio.ensure_future(self._write_in_thread(items, limiter))
        self._threads.add(task)  # (a reference until it is done)
        task.add_done_callback(self._threads.discard)

    async def _write_in_thread(self, items: list[_Item], limiter: CapacityLimiter) -> None:
        try:
            outcomes = await pools.run(limiter, self._write, items)
        except Exception as exc:
            outcomes = [exc] * len(items)
        _settle(items, outcomes)

    def _write(self, items: list[_Item]) -> list[Any]:
        """Every item's write in one transaction, each in a savepoint: its outcome, or the exception it raised
        (the leading new orders' inserts first, together, where the store can: ``write_ahead``)."""
        outcomes: list[Any] = []
        with self.store.transaction(), self.store.write_ahead([item.ahead for item in items]):
            for item in items:
                try:
                    with self.store.savepoint():
                        outcomes.append(item.write())
                except Exception as exc:  # (a refusal, or a bug: this write undone, the others kept)
                    outcomes.append(exc)
        self.batches, self.writes = self.batches + 1, self.writes + len(items)
        return outcomes


class _LockWatcher(Signalled[Any]):
    """A thread that waits for the store's write lock to be free, keeping nothing, and then calls back on the loop
    (the kernel wakes it the moment the lock is let go)."""

    def __init__(self, store: BatchedStore, loop: asyncio.AbstractEventLoop) -> None:
        # (close waits 5 s at most: a watch that waits for another process's long write ends with it)
        super().__init__("gatekit-lock-watcher", close_timeout=5)
        self._store, self._loop = store, loop
        self._then: Callable[[], None] | None = None
        self.start()

    def watch(self, then: Callable[[], None]) -> None:
        """``then()`` on the loop once the lock is free (one watch at a time: the latest ``then`` is called)."""
        self._then = then
        self.signal()

    def opened(self) -> AbstractContextManager[Any]:
        """What the store watches its write lock with: a descriptor of the lock file (``SqliteStore``), a connection
        (``PostgresStore``)."""
        return self._store.watch_writers()

    def work(self, held: Any) -> None:
        self._store.wait_for_writers(held)
        then = self._then
        if then is None or self.closed:
            return
        try:
            self._loop.call_soon_threadsafe(then)
        except RuntimeError:  # (the loop is closed: the simulator stopped)
            self.finish()


def _settle(items: list[_Item], outcomes: list[Any]) -> None:
    for item, outcome in zip(items, outcomes, strict=True):
        if item.future.done():  # (the request went away)
            continue
        if isinstance(outcome, BaseException):
            item.future.set_exception(outcome)
        else:
            item.future.set_result(outcome)
