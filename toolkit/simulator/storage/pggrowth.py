"""A new PostgreSQL database's tables analyzed as they grow, so the plans of prepared statements fit them.

psycopg prepares a statement a connection has run five times, and PostgreSQL keeps the plan of a prepared statement
until the statistics of its tables change.  On a new database, autovacuum first analyzes a table a minute or more
after it grew (its naptime), so plans made while ``transactions`` was nearly empty, sequential scans, were kept
while it grew: the scheduler's ``next_due`` read every row of it, 1-4 ms a call, 20 times a second, for the first
minute of a team simulator on a fresh database (a CI run's).

So a table is analyzed when the database's rows in it (every process's, every host's) reach each of ``GROWTH`` while
its statistics are of a smaller table (autovacuum keeps up after that): PostgreSQL then plans the prepared
statements again, from statistics that fit.  A process looks at a table's size (``Size``: the rows its last
``ANALYZE`` counted, and the live rows the database's statistics count now) every ``LOOK_EVERY`` rows it inserts
there, or more rarely when the next step is far; the look and the ``ANALYZE`` run in a thread of their own, on a
pooled connection: no request waits for them.  Once a table has passed the last step, it is not looked at again.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable
from typing import NamedTuple

log = logging.getLogger("gatekit.simulator")

GROWTH = (1_000, 10_000, 100_000)  # rows in a table (all processes') when it is analyzed
LOOK_EVERY = 100  # rows a process inserts into a table between two looks at its size, at least
# (a look when the next step is far comes after a quarter of the rows still missing: with several processes
# inserting, the step is passed by about that much at most)
LOOK_AHEAD = 4


class Size(NamedTuple):
    """A table's size as the database knows it."""

    analyzed: float  # rows its last ANALYZE counted (``pg_class.reltuples``; -1: never analyzed)
    live: float  # live rows the statistics count (``pg_stat_user_tables.n_live_tup``: a second or so behind)


class Growth:
    """Counts the rows a process inserts per table, looks at the table's ``size(table)`` now and then, and runs
    ``analyze(table)`` when it has passed a step of ``GROWTH`` since it was last analyzed."""

    def __init__(self, size: Callable[[str], Size], analyze: Callable[[str], object]) -> None:
        self._size, self._analyze = size, analyze
        self._rows: Counter[str] = Counter()  # rows this process inserted, per table
        self._look_at: dict[str, int] = {}  # the count at which this process next looks at the table
        self._looking: set[str] = set()
        self._grown: set[str] = set()  # tables past the last step: never looked at again
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def inserted(self, table: str, rows: int = 1) -> None:
        """``rows`` more rows in ``table``: its size looked at now (in a thread) if it is time to."""
        with self._lock:
            self._rows[table] = own = self._rows[table] + rows
            if own < self._look_at.get(table, LOOK_EVERY) or table in self._looking or table in self._grown:
                return
            self._looking.add(table)
            thread = threading.Thread(target=self._run, args=(table, own), name="gatekit-analyze", daemon=True)
            self._threads = [each for each in self._threads if each.is_alive()] + [thread]
        thread.start()

    def _run(self, table: str, own: int) -> None:
        look_at = own + LOOK_EVERY
        try:
            size = self._size(table)
            live = max(size.live, own)  # (this process's rows: at least these, whatever the statistics lag)
            if any(size.analyzed < step <= live for step in GROWTH):
                self._analyze(table)
                size = Size(live, live)
            after = [step for step in GROWTH if step > max(size.analyzed, live)]
            if not after:
                with self._lock:
                    self._grown.add(table)
            else:
                look_at = own + max(LOOK_EVERY, int(after[0] - live) // LOOK_AHEAD)
        except Exception as exc:  # (a database that does not answer, a stop: looked at again later, or autovacuum)
            log.debug("the size of %s was not looked at, or it was not analyzed: %s", table, exc)
        finally:
            with self._lock:
                self._look_at[table] = look_at
                self._looking.discard(table)

    def settled(self, timeout: float | None = None) -> None:
        """Wait for the looks and analyses started so far (tests; a stop does not wait)."""
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)
