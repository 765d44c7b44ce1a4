"""A SQLite file's checkpoints run in the checkpointer's thread, never inside a store's COMMIT.

Observed, not timed: the store's connection has SQLite's own checkpoints off; a log kept past the limit is copied
back by the thread (its count grows, and the log stops growing: a writer after a complete checkpoint starts it
again from its beginning); a checkpoint runs while another connection holds a write transaction open.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import time
from pathlib import Path

from toolkit.simulator.storage import Store, checkpoints
from toolkit.simulator.storage import sqlite as store_module
from toolkit.simulator.storage.checkpoints import Checkpointer
from toolkit.simulator.storage.sqlite import SqliteStore


def _wait_for(check, what: str, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


def _write(store: Store, commits: int, first: int = 0, size: int = 4096) -> None:
    for n in range(first, first + commits):
        with store.transaction():
            store.execute("INSERT INTO meta (name, value) VALUES (?, ?)", (f"filler-{os.getpid()}-{n}", "x" * size))


def test_a_file_store_never_checkpoints_inside_a_commit(tmp_path: Path):
    store = SqliteStore(tmp_path / "sim.db")
    try:
        assert store._db.execute("PRAGMA wal_autocheckpoint").fetchone()["wal_autocheckpoint"] == 0
        assert store.checkpointer is not None and store.checkpointer.limit_bytes == 4000 * 4096
    finally:
        store.close()
    assert SqliteStore().checkpointer is None  # (memory: no log, no thread)


def test_the_thread_copies_a_long_log_back_and_the_next_writer_starts_it_again(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(checkpoints, "CHECK_EVERY", 4)
    monkeypatch.setattr(store_module, "KEEP_BYTES", 16 * 4096)  # (a log started again: truncated to 16 pages)
    store = SqliteStore(tmp_path / "sim.db")
    store.checkpointer.close()  # (the store's own, with the default limit: replaced by a small one)
    wal = Path(f"{store.path}-wal")
    try:
        _write(store, 100)  # 400 pages and more, with no checkpointer running
        assert wal.stat().st_size > 300 * 4096
        checkpointer = store.checkpointer = Checkpointer(store, 4096, limit_pages=16)
        for _ in range(checkpoints.CHECK_EVERY):
            checkpointer.committed()
        _wait_for(lambda: checkpointer.checkpoints >= 1, "no checkpoint was run")
        # once a checkpoint has copied everything, the next commit starts the log again (the file truncated to
        # KEEP_BYTES); a checkpoint that began while the writes went on copies only part: then ask again
        deadline, written = time.monotonic() + 10, 100
        while wal.stat().st_size > 24 * 4096:
            assert time.monotonic() < deadline, "the log was never started again"
            done = checkpointer.checkpoints
            for _ in range(checkpoints.CHECK_EVERY):
                checkpointer.committed()
            _wait_for(lambda: checkpointer.checkpoints > done, "the checkpointer stopped")  # noqa: B023
            _write(store, 1, first=written)
            written += 1
        rows = store.one("SELECT COUNT(*) AS n FROM meta WHERE name LIKE 'filler-%'")
        assert rows is not None and rows["n"] == written
    finally:
        store.close()
    with sqlite3.connect(tmp_path / "sim.db") as again:  # everything is in the file once the store is closed
        assert again.execute("SELECT COUNT(*) FROM meta WHERE name LIKE 'filler-%'").fetchone()[0] == written


def test_a_checkpoint_does_not_wait_for_a_writer(tmp_path: Path):
    store = SqliteStore(tmp_path / "sim.db")
    _write(store, 20)
    other = sqlite3.connect(tmp_path / "sim.db", isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another process's write transaction, held open
        other.execute("INSERT INTO meta (name, value) VALUES ('held', 'open')")
        checkpointer = Checkpointer(store, 4096, limit_pages=1)
        for _ in range(checkpoints.CHECK_EVERY):
            checkpointer.committed()
        _wait_for(lambda: checkpointer.checkpoints == 1, "the checkpoint waited for the writer")
        checkpointer.close()
        other.execute("COMMIT")
    finally:
        other.close()
        store.close()


def test_a_checkpoint_ends_with_the_processes_write_lock_held(tmp_path: Path):
    store = SqliteStore(tmp_path / "sim.db")
    _write(store, 20)
    reader = sqlite3.connect(tmp_path / "sim.db", isolation_level=None)
    lock = os.open(f"{store.path}.writers", os.O_RDWR)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM meta").fetchone()  # a snapshot: the log after it cannot be copied yet
        _write(store, 20, first=20)
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process writing
        checkpointer = Checkpointer(store, 4096, limit_pages=1)
        for _ in range(checkpoints.CHECK_EVERY):
            checkpointer.committed()
        _wait_for(lambda: checkpointer.checkpoints == 1, "no checkpoint was run")
        assert checkpointer.locked == 0, "the second step did not wait for the processes' write lock"
        assert checkpointer.running
        fcntl.flock(lock, fcntl.LOCK_UN)
        _wait_for(lambda: checkpointer.locked == 1, "the second step never ran once the lock was free")
        checkpointer.close()
    finally:
        os.close(lock)
        reader.close()
        store.close()


def test_the_log_starts_again_after_a_writer_that_began_before_the_checkpoint(tmp_path: Path, monkeypatch):
    """Two workers take turns at the lock: one of them is nearly always inside a transaction that began before a
    checkpoint ended, and such a writer appends to the log rather than starting it again.  A checkpoint that ended
    without the lock, however complete, let the log grow without end (700 MB in 30 s of two workers' sales)."""
    monkeypatch.setattr(store_module, "KEEP_BYTES", 16 * 4096)
    store = SqliteStore(tmp_path / "sim.db")
    store.checkpointer.close()
    wal = Path(f"{store.path}-wal")
    _write(store, 100)  # 400 pages and more
    other = sqlite3.connect(tmp_path / "sim.db", isolation_level=None)  # another worker, writing
    lock = os.open(f"{store.path}.writers", os.O_RDWR)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO meta (name, value) VALUES ('other', 'began before the checkpoint')")
        checkpointer = store.checkpointer = Checkpointer(store, 4096, limit_pages=16)
        for _ in range(checkpoints.CHECK_EVERY):
            checkpointer.committed()
        _wait_for(lambda: checkpointer.checkpoints == 1, "no checkpoint was run")  # everything committed: copied
        other.execute("COMMIT")  # (appended: it began before)
        fcntl.flock(lock, fcntl.LOCK_UN)
        _wait_for(lambda: checkpointer.locked == 1, "the checkpoint was not finished under the lock")
        _write(store, 1, first=100)  # the next writer starts the log again (the file truncated to KEEP_BYTES)
        assert wal.stat().st_size <= 24 * 4096, f"the log was not started again: {wal.stat().st_size} bytes"
    finally:
        os.close(lock)
        other.close()
        store.close()


def test_close_stops_the_thread(tmp_path: Path):
    store = SqliteStore(tmp_path / "sim.db")
    checkpointer = store.checkpointer
    assert checkpointer is not None and checkpointer.running
    store.close()
    assert not checkpointer.running
