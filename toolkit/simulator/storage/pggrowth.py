"""A new PostgreSQL database's tables analyzed as they grow, so the plans of prepared statements fit them.

psycopg prepares a statement a connection has run five times, and PostgreSQL keeps the plan of a prepared statement
until the statistics of its tables change.  On a new database, autovacuum first analyzes a table a minute or more
after it grew (its naptime), so plans made while ``transactions`` was nearly empty, sequential scans, were kept
while it grew: the scheduler's ``next_due`` read every row of it, 1-4 ms a call, 20 times a second, for the first
minute of a team simulator on a fresh database (a CI run's).

So a process analyzes a table itself when the rows it has inserted there reach each of ``GROWTH`` (autovacuum keeps
up after that): PostgreSQL then plans the prepared statements again, from statistics that fit.  The ``ANALYZE``
runs in a thread of its own, on a pooled connection: no request waits for it.
"""

from __future__ import annotations

import bisect
import logging
import threading
from collections import Counter
from collections.abc import Callable

log = logging.getLogger("gatekit.simulator")

GROWTH = (1_000, 10_000, 100_000)  # rows a process has inserted into a table when it analyzes that table


class Growth:
    """Counts the rows a process inserts per table; ``analyze(table)`` in a thread at each step of ``GROWTH``."""

    def __init__(self, analyze: Callable[[str], object]) -> None:
        self._analyze = analyze
        self._rows: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def inserted(self, table: str, rows: int = 1) -> None:
        """``rows`` more rows in ``table``: analyzed now (in a thread) if that passed a step of ``GROWTH``."""
        with self._lock:
            before = self._rows[table]
            self._rows[table] = after = before + rows
            if bisect.bisect_right(GROWTH, before) == bisect.bisect_right(GROWTH, after):
                return
            thread = threading.Thread(target=self._run, args=(table,), name="gatekit-analyze", daemon=True)
            self._threads = [each for each in self._threads if each.is_alive()] + [thread]
        thread.start()

    def _run(self, table: str) -> None:
        try:
            self._analyze(table)
        except Exception as exc:  # (a database that does not answer, a stop: autovacuum will do it)
            log.debug("ANALYZE %s was not made: %s", table, exc)

    def settled(self, timeout: float | None = None) -> None:
        """Wait for the analyses started so far (tests; a stop does not wait)."""
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)
