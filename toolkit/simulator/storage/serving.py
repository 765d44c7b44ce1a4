"""Where a request's work runs, chosen in one place: on the event loop, with the loop's batch, or in a thread.

- An in-memory store that no other thread holds: on the loop (the work is a fraction of a millisecond, less than
  the hop to a thread).
- A SQLite file: on the loop too, as long as its writes need not wait (``SqliteStore.without_waiting``: a write lock
  held by another thread, or by another process beyond a moment, sends the work to a thread before anything is
  written); a write the rules hand to ``write_soon`` then joins the loop's batch (``batch``: one transaction for
  the sales that arrived together), and the answer is made once the batch is written.
- PostgreSQL: on the loop as well, its statements on the loop's own connection (``PostgresStore.without_waiting``):
  a read costs one round trip to the database, less than the hop to a thread and back; a write joins the loop's
  batch, one transaction (and one wait for the write lock) for the sales that arrived together, written on the
  loop when the lock is free, else in a thread.  A connection that is not ready, or a write transaction that would
  wait for another process's lock, sends the work to a thread before anything is written.
- A large body, a busy store: in a thread of ``threads``.

The rules never know which: a handler's write goes through ``write_soon``, which does it now or returns a
``Later`` that this module finishes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from anyio import CapacityLimiter

from toolkit.simulator import pools
from toolkit.simulator.storage.base import Insert, Store, StoreBusy
from toolkit.simulator.storage.batch import Batcher
from toolkit.simulator.storage.postgres import PostgresStore
from toolkit.simulator.storage.sqlite import SqliteStore

T = TypeVar("T")


@dataclass(frozen=True)
class Later(Generic[T]):
    """A write left for the loop's batch: ``write()`` does it (inside the batch's transaction); ``then`` makes the
    answer from what it returned, or from the exception it raised."""

    write: Callable[[], Any]
    then: Callable[[Any], T] | None = None
    ahead: Insert | None = None  # the insert ``write`` makes first (``Store.write_ahead``)

    def answered_by(self, then: Callable[[Any], Any]) -> Later[Any]:
        return replace(self, then=then)

    def finish(self, outcome: Any) -> T:
        assert self.then is not None, "a Later is answered_by its request before it is served"
        return self.then(outcome)


def write_soon(store: Store, write: Callable[[], T], ahead: Callable[[], Insert | None] | None = None) -> T | Later[T]:
    """``write()`` now, or, when the loop collects a batch here, a ``Later`` that the batch does (``ahead()``: the
    ``insert_unless`` the write makes first, which the batch may make with the others': ``Store.write_ahead``;
    asked only then)."""
    batcher = batcher_of(store)
    if batcher is not None and batcher.collects_here():
        return Later(write, ahead=ahead() if ahead is not None else None)
    return write()


def batcher_of(store: Store) -> Batcher | None:
    """A SQLite file's or PostgreSQL's batch of the loop's writes (made with its first use); None in memory."""
    if not isinstance(store, (SqliteStore, PostgresStore)) or store.in_memory:
        return None
    if store.batcher is None:
        store.batcher = Batcher(store)
    return store.batcher


async def serve(store: Store, work: Callable[[], Any], *, small: bool, threads: CapacityLimiter) -> Any:
    """What ``work()`` answers, run where the store lets it run soonest (the module's docstring); ``small``: the
    request's body is small enough for the loop."""
    if small:
        if store.in_memory:
            if store.hold_if_free():
                try:
                    done = work()
                finally:
                    store.release()
                assert not isinstance(done, Later)  # (no batch: in memory, a write costs no commit)
                return done
        elif (batcher := batcher_of(store)) is not None:
            assert isinstance(store, (SqliteStore, PostgresStore))
            try:
                with store.without_waiting(), batcher.collect():
                    done = work()
            except StoreBusy:  # nothing written: answered again in a thread
                pass
            else:
                if not isinstance(done, Later):
                    return done
                try:
                    outcome = await batcher.submit(done.write, threads, done.ahead)
                except Exception as exc:  # (the write's refusal, or a failure: answered as any other)
                    outcome = exc
                return done.finish(outcome)
    done = await pools.run(threads, work)
    assert not isinstance(done, Later)  # (only the loop's thread collects writes)
    return done
