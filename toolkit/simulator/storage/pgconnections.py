"""The PostgreSQL store's connections: a psycopg pool that outlives the database's outages (issue 34, #4).

- A connection found dead (the database restarted while it sat in the pool) is dropped and the work done on another
  one, when nothing was done on it: a statement outside a transaction, or a transaction's ``BEGIN``. No request
  gets a 500 for it.
- A database that does not answer within ``POOL_WAIT`` seconds (stopped, restarting) is ``StoreUnavailable``: a
  request gets a 503 that says so, and the simulator's log says it once. While it stays down, a request waits only
  ``DOWN_WAIT`` seconds, and the database is probed at most every ``PROBE_EVERY`` seconds: psycopg's pool tries to
  connect again with a pause that doubles (after a minute of outage, it may try again only a minute after the
  database is back), so once a probe connects, a new pool takes the old one's place.
- The pool draws its jitter (a new connection's lifetime, a reconnection's pause) from a generator of its own, not
  from the ``random`` module's shared one (``quiet_jitter``): a simulator running inside a merchant's process must
  not move the global random state under the merchant's seeded tests (hypothesis refuses a draw during which it
  moved: the fuzz tests on PostgreSQL failed so, once, when the pool opened a connection mid-draw).
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar

from toolkit.simulator.storage.base import StoreUnavailable

T = TypeVar("T")
log = logging.getLogger("gatekit.simulator")

CONNECT_TIMEOUT = 5  # seconds
POOL_WAIT = 10.0  # seconds a request waits for a connection (a database restarting) before StoreUnavailable
DOWN_WAIT = 0.5  # the same once a wait ran out, until a statement succeeds again (an outage: quick 503s)
TAKE_WAIT = 0.001  # seconds the event loop waits for a connection of its own (the pool's timeout 0 is no chance)
PROBE_EVERY = 1.0  # seconds between two direct connections that ask whether a database that was down is back
STOP_WAIT = 0.5  # seconds a statement waits for a connection once the simulator stops (``stopping``)
WAIT_SLICE = 0.25  # a wait for a pooled connection is made of waits this long: a stop cuts it short (``_pooled``)


_JITTER = random.Random()  # (the pool's own: see quiet_jitter)


def quiet_jitter() -> None:
    """psycopg_pool draws its jitter with ``from random import random`` in ``psycopg_pool.base``: point that name at
    a generator of our own (idempotent; the pool reads the name at each draw)."""
    import psycopg_pool.base

    psycopg_pool.base.random = _JITTER.random  # type: ignore[attr-defined]


@contextmanager
def ended(conn: Any, pipeline: Any) -> Iterator[None]:
    """The end of a transaction begun with ``BEGIN`` on ``conn`` in pipeline mode: ``COMMIT``, or ``ROLLBACK`` when
    the block raises, as statements of the pipeline.  (psycopg's ``Connection.transaction()`` in pipeline mode nests
    two pipelines of its own, whose ends cost a round trip each: a batch of one sale waited on the database 13 times,
    and spent 0.78 ms of CPU.)"""
    import psycopg

    try:
        yield
    except BaseException:
        with contextlib.suppress(psycopg.Error):  # (a failed statement: the pipeline goes on after a sync)
            pipeline.sync()
        with contextlib.suppress(psycopg.Error):  # (a dead connection: the pool discards it)
            conn.execute("ROLLBACK")
            pipeline.sync()
        raise
    conn.execute("COMMIT")
    pipeline.sync()  # (the commit's outcome: a failure raises here)


class Connections:
    """The pooled connections of one database URL."""

    def __init__(self, url: str, *, size: int) -> None:
        import psycopg
        from psycopg_pool import PoolTimeout

        self._url, self._size = url, size
        self._connect = psycopg.connect
        self._unanswered: tuple[type[Exception], ...] = (psycopg.OperationalError, PoolTimeout)
        self._down = False  # the last statement found the database not answering
        self._stopping = False  # the simulator stops: no statement waits for a restart (``stopping``)
        self._probing = threading.Lock()
        self._next_probe = 0.0
        self._taken: dict[int, Any] = {}  # (id of a connection kept out of its pool: that pool)
        self.pool = self._new_pool()

    def _new_pool(self) -> Any:
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        quiet_jitter()
        return ConnectionPool(self._url, min_size=1, max_size=self._size, open=True, timeout=POOL_WAIT,
                              kwargs={"row_factory": dict_row, "autocommit": True,
                                      "connect_timeout": CONNECT_TIMEOUT})  # fmt: skip

    def run(self, work: Callable[[Any], T]) -> T:
        """``work(connection)`` on a pooled connection; one found dead (nothing was done on it) is dropped and
        ``work`` runs on another."""
        for attempt in range(self._size + 1):
            with self._unavailable_as_503(), self._pooled() as conn:
                try:
                    done = work(conn)
                except self._unanswered:
                    if not (conn.broken and attempt < self._size):
                        raise
                    continue  # (the pool discards a broken connection when it gets it back)
                self._answered()
                return done
        raise AssertionError("unreachable: the last attempt returns or raises")

    @contextmanager
    def begun(self, lock: str | None) -> Iterator[tuple[Any, Any]]:
        """A pooled connection inside ``BEGIN`` ... ``COMMIT`` (rolled back on error), in pipeline mode, and the
        pipeline: ``BEGIN`` and the statement ``lock`` (the write lock, if any) go in one round trip.  One found dead
        then (nothing was done on it) is dropped and another one taken."""
        for attempt in range(self._size + 1):
            with self._unavailable_as_503(), self._pooled() as conn, \
                    conn.pipeline() as pipeline:  # fmt: skip
                try:
                    conn.execute("BEGIN")
                    if lock is not None:
                        conn.execute(lock)
                    pipeline.sync()
                except self._unanswered:
                    if conn.broken and attempt < self._size:
                        continue
                    raise
                self._answered()
                with ended(conn, pipeline):
                    yield conn, pipeline
                return

    @contextmanager
    def _pooled(self) -> Iterator[Any]:
        """A pooled connection (``pool.connection``), waited for ``_wait()`` seconds at most, in waits of
        ``WAIT_SLICE``: a thread that waits for a database that does not answer (the scheduler's) stops waiting
        within a slice of the simulator's stop, which then takes no longer than its own short waits."""
        from psycopg_pool import PoolTimeout

        wait, waited = self._wait(), 0.0
        with contextlib.ExitStack() as taken:
            while True:
                step = max(0.001, min(WAIT_SLICE, wait - waited))
                try:  # (the pool of now: a probe may have replaced it)
                    conn = taken.enter_context(self.pool.connection(timeout=step))
                    break
                except PoolTimeout:
                    waited += step
                    if self._stopping or waited >= wait:
                        raise PoolTimeout(f"couldn't get a connection after {waited:.2f} sec") from None
            yield conn

    def take_now(self) -> Any | None:
        """A pooled connection kept out of the pool (the event loop's: ``give_back`` returns it), if one is ready
        now; None while the database is known not to answer, or when none is free within ``TAKE_WAIT``."""
        if self._down:
            return None
        pool = self.pool
        try:
            conn = pool.getconn(timeout=TAKE_WAIT)
        except self._unanswered:
            return None
        self._taken[id(conn)] = pool
        return conn

    def give_back(self, conn: Any) -> None:
        """A connection of ``take_now`` back to its pool (a dead one is closed there; that of a pool replaced
        since too)."""
        self._taken.pop(id(conn), self.pool).putconn(conn)

    def unavailable(self) -> AbstractContextManager[None]:
        """The database not answering, in a block, is ``StoreUnavailable`` (said once per outage)."""
        return self._unavailable_as_503()

    def close(self) -> None:
        self.pool.close()

    # --- an outage ---------------------------------------------------------------------------------

    def _answered(self) -> None:
        if self._down:
            self._down = False
            log.warning("the database answers again")

    def stopping(self) -> None:
        """The simulator stops: what it writes last (its scheduler's lease given back, the journal's last lines)
        waits ``STOP_WAIT`` at most for a connection, and no probe is made.  A database that went down first (a
        stopped PostgreSQL, a host gone) made every step of a stop wait ``POOL_WAIT``: 10 s or more, then a failed
        shutdown."""
        self._stopping = True

    def _wait(self) -> float:
        """How long to wait for a pooled connection: ``POOL_WAIT`` (a restart is waited for), or ``DOWN_WAIT`` while
        the database is known not to answer, after a probe (``_probe``); ``STOP_WAIT`` once stopping."""
        if self._stopping:
            return STOP_WAIT
        if not self._down:
            return POOL_WAIT
        self._probe()
        return DOWN_WAIT

    def _probe(self) -> None:
        """At most every ``PROBE_EVERY`` seconds (one thread at a time), connect directly; once that works, a new
        pool takes the place of the one whose attempts have backed off (the old one is closed aside: connections
        in use go back to it and are closed)."""
        if not self._probing.acquire(blocking=False):
            return
        try:
            if time.monotonic() < self._next_probe:
                return
            self._next_probe = time.monotonic() + PROBE_EVERY
            try:
                self._connect(self._url, connect_timeout=1).close()
            except Exception:  # (psycopg's errors: still down)
                return
            old, self.pool = self.pool, self._new_pool()
            threading.Thread(target=old.close, name="gatekit-old-pool", daemon=True).start()
        finally:
            self._probing.release()

    @contextmanager
    def _unavailable_as_503(self) -> Iterator[None]:
        """The database not answering (the pool's wait ran out, or a connection lost) is ``StoreUnavailable``."""
        try:
            yield
        except self._unanswered as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            if not self._down:  # (said once per outage, on the simulator's log: gatekit simulate's stderr)
                self._down = True
                self._next_probe = time.monotonic() + PROBE_EVERY
                log.warning("the database does not answer (%s): requests get a 503 that says so until it does", first)
            raise StoreUnavailable(f"the simulator's database does not answer ({first})") from exc
