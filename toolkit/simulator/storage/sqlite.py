"""The simulator's state in SQLite: a file (survives a restart) or memory (tests).

Money rules run inside ``transaction()``: ``BEGIN IMMEDIATE`` takes the write lock before the
remaining amount is read, so concurrent captures or returns on one order are serialised and
can never exceed what was authorized or charged.

No card data is stored: a card is kept as BIN, last four, type, expiry and holder, and the free-text
columns a merchant fills (``FREE_TEXT``: client_orderid, email, addresses, messages) are written through
``stored_text``, which masks a card number or a CVV typed into them (``client_orderid`` is then looked up
by its masked form too: ``Call.client_orderid``).
"""

from __future__ import annotations

import fcntl
import operator
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.simulator.storage import schema
from toolkit.simulator.storage.base import (
    Row,
    SharedState,
    StoreBusy,
    StoreError,
    stored_values,
)
from toolkit.simulator.storage.checkpoints import KEEP_BYTES, Checkpointer
from toolkit.simulator.storage.schema import FIRST_IDS, RESET_TABLES, SCHEMA_VERSION

if TYPE_CHECKING:
    from toolkit.simulator.storage.batch import Batcher

SCHEMA = ";\n".join(schema.sqlite_ddl())  # (``schema``: the one schema, in SQLite's words)


_NAME = operator.itemgetter(0)  # a column's name in ``cursor.description``


def _dict_row(cursor: sqlite3.Cursor, values: tuple[Any, ...]) -> Row:
    """Rows as dicts, built once (``dict(sqlite3.Row)`` looks every column up by name: slow on wide rows)."""
    return dict(zip(map(_NAME, cursor.description), values, strict=True))


class _Columns:
    """A table's column types (``INTEGER``, ``TEXT``, ``REAL``), defaults in column order, INTEGER PRIMARY KEY."""

    __slots__ = ("defaults", "key", "types")

    def __init__(self, types: dict[str, str], defaults: dict[str, Any], key: str | None) -> None:
        self.types, self.defaults, self.key = types, defaults, key


_KEPT_IN = {str: "TEXT", int: "INTEGER", float: "REAL"}  # the column type that stores a Python type unchanged


_InsertPlan = tuple[str | None, tuple[str, ...], _Columns]
MAX_INSERT_PLANS = 256  # (table, names, value types) seen; the engine uses a handful


# How long a write on the event loop waits for another process's write lock before it gives up (``StoreBusy``):
# other processes hold it for a fraction of a millisecond per request; a checkpoint or a long batch holds it longer,
# and the request then goes to a thread rather than stall the loop
LOOP_PATIENCE = 0.002


class SqliteStore(SharedState):
    """The store in SQLite (a file, or memory): one connection shared by the app's threads, guarded by a lock."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        self.path = str(path)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.row_factory = _dict_row
        self._lock = threading.RLock()
        self._after_commit: list[Callable[[], object]] = []
        self._tables: dict[str, _Columns] = {}
        self._insert_plans: dict[tuple[str, tuple[str, ...], tuple[type, ...]], _InsertPlan] = {}
        # Processes that share a file take turns to write through a lock file beside it (``flock``): a waiting
        # writer wakes the moment the lock is free, where SQLite's own busy handler sleeps 1 to 100 ms between tries
        self._writers: int | None = None
        # A file's reads outside a transaction go through a second connection (WAL: readers never wait for a
        # writer), so a thread that reads never queues behind one that waits for another process's write lock;
        # the thread inside a transaction (``_writer``) reads through the writing connection, its own writes included
        self._reader: sqlite3.Connection | None = None
        self._read_lock = threading.Lock()
        self._writer: int | None = None
        self._hurried: int | None = None  # the thread (the event loop's) whose first write may not wait
        self._patience = LOOP_PATIENCE  # how long that thread waits for a lock before StoreBusy
        # a file's checkpoints, in a thread of their own (started once the file is ready; None in memory)
        self.checkpointer: Checkpointer | None = None
        self.batcher: Batcher | None = None  # the loop's batch of writes (a file's: ``serving.batcher_of``)
        if self.path != ":memory:":
            self._writers = self.open_writers_lock()
            self._db.execute("PRAGMA journal_mode=WAL")
            # pages read through a memory map: after another process's commit a connection reads its pages again,
            # and mapped pages cost no copy
            self._db.execute("PRAGMA mmap_size=268435456")
            # no checkpoint inside a COMMIT (the log copied into the file while the others wait for the lock):
            # ``Checkpointer`` does them in a thread, outside every write
            self._db.execute("PRAGMA wal_autocheckpoint=0")
            self._db.execute(f"PRAGMA journal_size_limit={KEEP_BYTES}")
            # In WAL mode NORMAL loses no commit when the simulator stops or crashes (only when the machine does),
            # and a commit waits for no disk flush
            self._db.execute("PRAGMA synchronous=NORMAL")
        self._check_version()
        self._migrate()
        self._db.executescript(SCHEMA)
        self._seed_sequences()
        if self.path != ":memory:":
            page_size = self._db.execute("PRAGMA page_size").fetchone()["page_size"]
            self.checkpointer = Checkpointer(self, page_size)
            self._reader = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._reader.row_factory = _dict_row
            self._reader.execute("PRAGMA mmap_size=268435456")
            self._reader.execute("PRAGMA query_only=ON")

    def _check_version(self) -> None:
        """A database file written by an earlier gatekit (one transaction per orderid) cannot be read."""
        columns = [row["name"] for row in self._db.execute("PRAGMA table_info(transactions)").fetchall()]
        if columns and "serial" not in columns:
            raise StoreError(
                f"{self.path} was written by an earlier gatekit (before orders held several transactions); "
                "delete it or give another --db"
            )

    def _migrate(self) -> None:
        """An earlier gatekit's file brought to ``SCHEMA_VERSION`` (a new file starts there)."""
        tables = {row["name"] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "transactions" not in tables:  # a new database: SCHEMA makes it at the latest version
            self._db.executescript(SCHEMA)
            self._db.execute("INSERT OR REPLACE INTO meta (name, value) VALUES ('schema_version', ?)",
                             (str(SCHEMA_VERSION),))  # fmt: skip
            return
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = self._db.execute("SELECT value FROM meta WHERE name='schema_version'").fetchone()
        version = int(row["value"]) if row else 1
        for migration in schema.MIGRATIONS:
            target = migration.version
            if version < target:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    self._db.execute(schema.sqlite_migration(migration))
                    self._db.execute("INSERT OR REPLACE INTO meta (name, value) VALUES ('schema_version', ?)",
                                     (str(target),))  # fmt: skip
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
                version = target

    @property
    def shared(self) -> bool:
        """A file other processes may use too (``--workers``, a second simulator on the same ``--db``)."""
        return not self.in_memory

    def _seed_sequences(self) -> None:
        with self.transaction():
            for table, first in FIRST_IDS.items():
                row = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name=?", (table,)).fetchone()
                if row is None:
                    self._db.execute("INSERT INTO sqlite_sequence(name, seq) VALUES (?, ?)", (table, first - 1))

    def _upsert(self, table: str, key: str, values: Mapping[str, Any]) -> None:
        names = ", ".join(values)
        self.execute(f"INSERT OR REPLACE INTO {table} ({names}) VALUES ({', '.join('?' * len(values))})",
                     tuple(values.values()))  # fmt: skip

    @contextmanager
    def without_waiting(self, patience: float = LOOP_PATIENCE) -> Iterator[None]:
        """Work on the event loop: until its first write, a write that would wait for a lock (another thread's,
        or another process's beyond ``patience``) raises ``StoreBusy`` with nothing written; once one write
        has begun, the rest of the work waits as anywhere.  (A batch of writes, whose hand-off to a thread costs
        little, does not wait at all: ``patience`` 0.)"""
        self._hurried, self._patience = threading.get_ident(), patience
        try:
            yield
        finally:
            self._hurried, self._patience = None, LOOP_PATIENCE

    def transaction(self) -> AbstractContextManager[SqliteStore]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on error); re-entrant in one thread: inside this thread's
        transaction the block joins it (a context that does nothing: a batch's writes nest two per sale)."""
        if self._writer == threading.get_ident():
            return nullcontext(self)
        return self._transaction()

    @contextmanager
    def _transaction(self) -> Iterator[SqliteStore]:
        hurried = self._hurried is not None and self._hurried == threading.get_ident()
        if not self._lock.acquire(timeout=self._patience if hurried else -1):
            raise StoreBusy("another thread of this process is writing")
        try:
            if self._db.in_transaction:
                yield self
                return
            if self._writers is not None:  # (another process may write: queue in the kernel, not in SQLite's sleeps)
                self._lock_file(hurried)
            if hurried:  # a write begins: what follows in this request waits as anywhere
                self._hurried = None
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._after_commit = []
                self._writer = threading.get_ident()
                try:
                    yield self
                except BaseException:
                    self._db.execute("ROLLBACK")
                    self._after_commit = []
                    raise
                self._db.execute("COMMIT")
                if self.checkpointer is not None:
                    self.checkpointer.committed()
            finally:
                self._writer = None
                if self._writers is not None:
                    fcntl.flock(self._writers, fcntl.LOCK_UN)
            done, self._after_commit = self._after_commit, []
        finally:
            self._lock.release()
        for action in done:
            action()

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """Inside this thread's transaction: what the block writes is undone if it raises, with the actions it
        left for after the commit; the rest of the transaction stays."""
        if self._writer != threading.get_ident():
            raise RuntimeError("a savepoint needs the transaction of this thread")
        pending = len(self._after_commit)
        self._db.execute("SAVEPOINT part")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK TO part")
            del self._after_commit[pending:]
            raise
        finally:
            self._db.execute("RELEASE part")

    def _lock_file(self, hurried: bool) -> None:
        """The processes' write lock (``flock`` on ``<db>.writers``); hurried: ``StoreBusy`` past the patience."""
        assert self._writers is not None
        if not hurried:
            fcntl.flock(self._writers, fcntl.LOCK_EX)
            return
        deadline = time.monotonic() + self._patience
        while True:
            try:
                fcntl.flock(self._writers, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StoreBusy("another process is writing") from None
                time.sleep(0)  # (the holder runs on the other core: ask again at once)

    def after_commit(self, action: Callable[[], object]) -> None:
        """Run ``action`` once the current transaction has committed (never if it rolls back); at once outside one."""
        if self._writer == threading.get_ident():  # (only the thread inside a transaction is its writer)
            self._after_commit.append(action)
            return
        action()

    def _statement(self) -> AbstractContextManager[Any]:
        """What one write statement holds: the store's lock, and for a file a transaction of its own (other
        processes' writes queue on the same file lock; on the event loop, ``StoreBusy`` rather than a wait)."""
        return self.transaction() if self._writers is not None else self._lock

    @property
    def in_memory(self) -> bool:
        return self.path == ":memory:"

    @contextmanager
    def holding_writers(self, descriptor: int) -> Iterator[None]:
        """The processes' write lock held for the block: no thread or process writes to the file meanwhile.

        ``descriptor``: the caller's own (``open_writers_lock``): ``flock`` belongs to an open file, and on the
        store's own descriptor a writer of this process would not be waited for."""
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(descriptor, fcntl.LOCK_UN)

    @contextmanager
    def watch_writers(self) -> Iterator[int]:
        """A descriptor of its own of the processes' write lock, for ``wait_for_writers`` (closed after)."""
        descriptor = self.open_writers_lock()
        try:
            yield descriptor
        finally:
            os.close(descriptor)

    def wait_for_writers(self, descriptor: int) -> None:
        """Block until no thread or process writes to the file (its write lock free), keeping nothing."""
        with self.holding_writers(descriptor):
            pass

    def open_writers_lock(self) -> int:
        """A new descriptor of the processes' write lock, ``<db>.writers`` (the caller closes it)."""
        return os.open(f"{self.path}.writers", os.O_RDWR | os.O_CREAT, 0o600)

    def hold_if_free(self) -> bool:
        """Take the store's lock when no other thread holds it (True), without waiting; ``release()`` gives it back."""
        return self._lock.acquire(blocking=False)

    def release(self) -> None:
        self._lock.release()

    def execute(self, sql: str, params: Mapping[str, Any] | tuple[Any, ...] = ()) -> int:
        """Run a statement; returns lastrowid (inserts) or rowcount."""
        with self._statement():
            cursor = self._db.execute(sql, params)
            return cursor.lastrowid if sql.lstrip().upper().startswith("INSERT") else cursor.rowcount  # type: ignore[return-value]

    def count(self, sql: str, params: Mapping[str, Any] | tuple[Any, ...] = ()) -> int:
        """Run a statement; the rows it affected (an ``INSERT OR IGNORE`` that ignored: 0)."""
        with self._statement():
            return self._db.execute(sql, params).rowcount

    def one(self, sql: str, params: Mapping[str, Any] | tuple[Any, ...] = ()) -> Row | None:
        if self._reader is not None and self._writer != threading.get_ident():
            with self._read_lock:
                cursor = self._reader.execute(sql, params)
                first: Row | None = cursor.fetchone()
                cursor.close()  # (the statement done: its read snapshot let go)
            return first
        with self._lock:
            row: Row | None = self._db.execute(sql, params).fetchone()
        return row

    def all(self, sql: str, params: Mapping[str, Any] | tuple[Any, ...] = ()) -> list[Row]:
        if self._reader is not None and self._writer != threading.get_ident():
            with self._read_lock:
                found: list[Row] = self._reader.execute(sql, params).fetchall()
            return found
        with self._lock:
            rows: list[Row] = self._db.execute(sql, params).fetchall()
            return rows

    def insert(self, table: str, values: Mapping[str, Any]) -> int:
        values = stored_values(values)
        names = ", ".join(values)
        marks = ", ".join(f":{name}" for name in values)
        return self.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", dict(values))

    def update(self, table: str, key: str, key_value: Any, values: Mapping[str, Any]) -> int:
        values = stored_values(values)
        sets = ", ".join(f"{name}=:{name}" for name in values)
        return self.execute(f"UPDATE {table} SET {sets} WHERE {key}=:_key", {**values, "_key": key_value})

    def returning(self, sql: str, params: Mapping[str, Any] | tuple[Any, ...] = ()) -> Row | None:
        """The first row of a statement with ``RETURNING *`` (an update or insert and its read in one statement)."""
        with self._statement():
            rows: list[Row] = self._db.execute(sql, params).fetchall()  # read to the end: the statement is done
        return rows[0] if rows else None

    def insert_row(self, table: str, values: Mapping[str, Any]) -> Row:
        """``insert``, returning the row as stored (with its defaults and id).

        When every value is stored as given (a str in a TEXT column, an int in an INTEGER one, a float in a
        REAL one, or NULL), the row is the table's defaults overlaid with the values and the new id: no
        ``RETURNING *`` (a wide row read back and turned into a dict costs more than the insert).  Any other
        value (one SQLite would convert) reads the row back as stored.
        """
        values = stored_values(values)
        key = (table, tuple(values), tuple(map(type, values.values())))
        plan = self._insert_plans.get(key)
        if plan is None:
            plan = self._insert_plan(table, values)
            if len(self._insert_plans) < MAX_INSERT_PLANS:
                self._insert_plans[key] = plan
        sql, floats, columns = plan
        if sql is not None and all(values[name] == values[name] for name in floats):  # a NaN is stored as NULL
            with self._statement():
                rowid = self._db.execute(sql, tuple(values.values())).lastrowid  # (by position: names cost more)
            row = dict(columns.defaults)
            row.update(values)
            if columns.key is not None and values.get(columns.key) is None:
                row[columns.key] = rowid
            return row
        names = ", ".join(values)
        marks = ", ".join(f":{name}" for name in values)
        read = self.returning(f"INSERT INTO {table} ({names}) VALUES ({marks}) RETURNING *", dict(values))
        assert read is not None
        return read

    def _insert_plan(self, table: str, values: Mapping[str, Any]) -> _InsertPlan:
        """The plain INSERT (None when SQLite would convert a value: its type is not its column's) and the
        names of the float values."""
        columns = self._columns(table)
        stored_as_given = all(
            name in columns.types and (value is None or columns.types[name] == _KEPT_IN.get(type(value)))
            for name, value in values.items()
        )
        marks = ", ".join("?" * len(values))  # the values in the order of their names: the plan's key has both
        sql = f"INSERT INTO {table} ({', '.join(values)}) VALUES ({marks})" if stored_as_given else None
        floats = tuple(name for name, value in values.items() if type(value) is float)
        return sql, floats, columns

    def _columns(self, table: str) -> _Columns:
        """A table's columns: their types, defaults (evaluated once: every default in SCHEMA is a constant), key."""
        found = self._tables.get(table)
        if found is None:
            with self._lock:
                info = self._db.execute(f"PRAGMA table_info({table})").fetchall()
                defaults = {
                    column["name"]: None
                    if column["dflt_value"] is None
                    else self._db.execute(f"SELECT {column['dflt_value']} AS value").fetchone()["value"]
                    for column in info
                }
            types = {column["name"]: column["type"].upper() for column in info}
            keys = [column["name"] for column in info if column["pk"]]
            key = keys[0] if len(keys) == 1 and types[keys[0]] == "INTEGER" else None
            found = self._tables[table] = _Columns(types, defaults, key)
        return found

    def next_id(self, table: str) -> int:
        """The id the next insert into ``table`` (an AUTOINCREMENT key) gets; only meaningful inside a transaction."""
        row = self.one(f"SELECT {self.next_id_expression(table)} AS id")
        assert row is not None
        return int(row["id"])

    def next_id_expression(self, table: str) -> str:
        """SQL: the id the next insert into ``table`` (an AUTOINCREMENT key) gets (inside a transaction)."""
        known = f"(SELECT seq FROM sqlite_sequence WHERE name='{table}')"
        return f"(SELECT MAX(COALESCE({known}, 0), COALESCE(MAX(id), 0)) + 1 FROM {table})"

    def update_row(self, table: str, key: str, key_value: Any, values: Mapping[str, Any]) -> Row | None:
        """``update`` of one row by key, returning the row as it now is (None when there is none)."""
        values = stored_values(values)
        sets = ", ".join(f"{name}=:{name}" for name in values)
        return self.returning(f"UPDATE {table} SET {sets} WHERE {key}=:_key RETURNING *", {**values, "_key": key_value})

    def reset(self) -> None:
        """Forget every transaction, card, subscription, journal line, callback and fault."""
        with self.transaction():
            for table in RESET_TABLES:
                self._db.execute(f"DELETE FROM {table}")
            self._db.execute("DELETE FROM sqlite_sequence")
        self._seed_sequences()

    def close(self) -> None:
        if self.batcher is not None:
            self.batcher.close()
        if self.checkpointer is not None:
            self.checkpointer.close()
        with self._lock:
            if self._reader is not None:
                with self._read_lock:
                    self._reader.close()
            self._db.close()
            if self._writers is not None:
                os.close(self._writers)
                self._writers = None
