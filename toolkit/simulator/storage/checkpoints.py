"""A SQLite file's checkpoints, in a thread of their own: the log copied back into the database outside every write.

In WAL mode a commit appends pages to ``<db>-wal``; a checkpoint copies them into the database file and syncs it
to disk.  SQLite's own (``wal_autocheckpoint``) runs inside the ``COMMIT`` that crosses the limit: that commit took
10 to 40 ms (writing 16 MB and an ``fsync``) where others take a fraction of a millisecond, on the event loop or
holding the processes' write lock (``Store.transaction``), so every request of every worker waited for it.

Here the store's connections never checkpoint (``wal_autocheckpoint=0``).  ``Checkpointer`` counts commits; every
``CHECK_EVERY`` it looks at the log's size, and past ``LIMIT_PAGES`` pages it checkpoints on a connection of its own,
in two steps:

1. PASSIVE checkpoints with no lock held: the bulk of the log copied and synced while writers go on appending,
   then what they appended meanwhile, until a pass copies no more than ``FEW_PAGES``;
2. the processes' write lock (``<db>.writers``, as ``Store.transaction`` takes it) held while a last PASSIVE
   checkpoint copies what came during the last pass: no writer is inside a transaction then, so the checkpoint
   completes and the next writer to begin starts the log again from its beginning.
   Without this step the log grew without end under steady load (700 MB in 30 s of two workers' sales): a
   writer starts the log again only if the checkpoint was complete when it began, and with two processes
   taking turns one of them is nearly always inside a transaction that began before.

The writers' connections keep ``journal_size_limit`` (``KEEP_BYTES``): the first commit of a log started again
truncates the file to it, so the file's size tells how much log there is.  Several processes on one file each run
a checkpointer: when two try at once, the second copies nothing (SQLite answers it busy).  What is left when the
last connection closes is checkpointed by SQLite then, as before.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, closing, contextmanager
from typing import Protocol

from toolkit.simulator.storage.signalled import Signalled

LIMIT_PAGES = 4000  # the log's size that calls for a checkpoint (SQLite's default is 1000; 4000 pages is 16 MB)
CHECK_EVERY = 32  # commits between two looks at the log's size (a look is one ``stat``)
# Passes without the lock (at most), until one copies no more than FEW_PAGES: the pass under the lock copies what
# came during the last one, and syncs it.  Under two workers' sales (30 s), the lock was held 0.01-21 ms (median
# 7.8) after a single pass, 26 times; 0.01-13 ms (median 2.3) this way, 48 times
UNLOCKED_PASSES = 4
FEW_PAGES = 64
KEEP_BYTES = 4 * 1024 * 1024  # a log started again is truncated to this size (its file is reused up to there)

log = logging.getLogger("gatekit.simulator")  # (the simulator's logger: `gatekit simulate` shows it on stderr)


class WritersLock(Protocol):
    """What the checkpointer needs of its store (``Store``: a protocol, as the store imports this module)."""

    path: str

    def open_writers_lock(self) -> int: ...

    def holding_writers(self, descriptor: int) -> AbstractContextManager[None]: ...


class Checkpointer(Signalled[tuple[sqlite3.Connection, int]]):
    """One per ``Store`` of a file: ``committed()`` after each commit; ``close()`` before the store closes."""

    def __init__(self, store: WritersLock, page_size: int, *, limit_pages: int = LIMIT_PAGES) -> None:
        """``store``: of a file (its log is ``<path>-wal``); the checkpointer holds the processes' write lock through
        it (``Store.holding_writers``)."""
        super().__init__("gatekit-checkpoint", close_timeout=10)
        self.path = store.path
        self._store = store
        self.limit_bytes = limit_pages * page_size
        self.checkpoints = 0  # checkpoints run (for tests and curious readers)
        self.locked = 0  # of which finished with the write lock held (all, once the lock was free)
        self._commits = 0
        self.start()

    def committed(self) -> None:
        """A commit was made (called by the thread that made it, under the store's lock: the count is exact)."""
        self._commits += 1
        if self._commits % CHECK_EVERY == 0:
            self.signal()

    @contextmanager
    def opened(self) -> Iterator[tuple[sqlite3.Connection, int]]:
        """A connection of its own, and a descriptor of its own of the processes' write lock (see
        ``Store.holding_writers``)."""
        with closing(sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)) as db:
            writers = self._store.open_writers_lock()
            try:
                yield db, writers
            finally:
                os.close(writers)

    def work(self, held: tuple[sqlite3.Connection, int]) -> None:
        try:
            self._check(*held)
        except Exception:  # a checkpoint that failed leaves the log longer: the next one copies it
            log.exception("checkpoint of %s failed", self.path)

    def _check(self, db: sqlite3.Connection, writers: int) -> None:
        """``writers``: this checkpointer's own descriptor of the processes' write lock."""
        try:
            size = os.stat(f"{self.path}-wal").st_size
        except FileNotFoundError:
            return
        if size < self.limit_bytes:
            return
        done = 0
        for _ in range(UNLOCKED_PASSES):  # each copies what writers appended during the one before
            # (fetchall: the statement runs to its end; one left open keeps a snapshot, and the log from starting
            # again)
            ((busy, _, copied),) = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            if busy or copied < 0:  # another process's checkpoint runs (it finishes the work), or no log
                return
            if copied - done <= FEW_PAGES:
                break
            done = copied
        self.checkpoints += 1
        with self._store.holding_writers(writers):
            db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            self.locked += 1
