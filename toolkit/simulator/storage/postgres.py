"""The simulator's state in PostgreSQL: one store for simulators on several machines (``--db postgresql://...``).

The same ``Store`` as SQLite's: the storage wing writes each statement once, in SQL both databases read, with
``?`` parameters (written ``%s`` for psycopg: ``_marked``); what differs is each store's own (the schema's words,
the next id, an upsert).  Through psycopg 3 and its connection pool.

- ``transaction()`` runs on one pooled connection for the thread (re-entrant), and first takes a
  transaction-level advisory lock: the same guarantee as SQLite's ``BEGIN IMMEDIATE`` (money decisions are
  made one at a time, whichever process or machine makes them), so concurrent captures, returns and voids of
  one order can never exceed what was authorized or charged.  Reads outside a transaction use any pooled
  connection.
- On the event loop (``without_waiting``: ``serving``), statements run on a connection the loop keeps, and a sale's
  write joins the loop's batch (``batch``: one transaction, one wait for the lock, for the sales that arrived
  together); a transaction there only tries the lock, and ``StoreBusy`` sends the work to a thread with nothing
  written.  Transactions run in pipeline mode: ``BEGIN`` and the lock, a ``SAVEPOINT``, go with the next statement's
  round trip; psycopg prepares the statements a connection runs often.
- Its connections (``pgconnections``) outlive a database's outage: a dead one is replaced before a request gets a
  500 for it, and a database that does not answer is ``StoreUnavailable`` (a 503 that says so).
- A schema version table (``gatekit_schema``) and forward migrations; ``reset()`` empties what the SQLite store's
  does (``RESET_TABLES``).
- Ids come from sequences that start where the SQLite store's do.
"""

from __future__ import annotations

import contextlib
import copy
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

from toolkit.simulator.storage import schema
from toolkit.simulator.storage.base import Params, Row, SharedState, StoreBusy, StoreError, stored_values
from toolkit.simulator.storage.pgconnections import CONNECT_TIMEOUT, POOL_WAIT, Connections
from toolkit.simulator.storage.schema import FIRST_IDS, RESET_TABLES, SCHEMA_VERSION

if TYPE_CHECKING:
    from toolkit.simulator.storage.batch import Batcher

T = TypeVar("T")

POOL_SIZE = 8  # connections for the threads (gateway threads that read, the scheduler, the journal), per process
LOCK_KEY = 0x6761746B  # "gatk": the advisory lock every write transaction takes
TRY_LOCK = "SELECT pg_try_advisory_xact_lock(%s) AS locked"
SCHEMA = ";\n".join(schema.postgres_ddl())  # (``schema``: the one schema, in PostgreSQL's words)


def is_postgres(db: str) -> bool:
    return db.startswith(("postgresql://", "postgres://"))


@lru_cache(maxsize=1024)
def _marked(sql: str) -> str:
    """A statement with ``?`` parameters as psycopg takes it: ``%s`` for each, a literal ``%`` doubled (the storage
    wing's statements hold no ``?`` but their parameters: ``tests/test_layout.py`` checks it)."""
    return sql.replace("%", "%%").replace("?", "%s")


def _text(value: Any) -> Any:
    """PostgreSQL's text holds no NUL character (SQLite's does): one in a merchant's field is kept as U+FFFD."""
    return value.replace("\x00", "\ufffd") if isinstance(value, str) and "\x00" in value else value


def _insert(table: str, values: Mapping[str, Any], returning: str = "") -> tuple[str, tuple[Any, ...]]:
    values = stored_values(values)
    statement = f"INSERT INTO {table} ({', '.join(values)}) VALUES ({', '.join('?' * len(values))}){returning}"
    return statement, tuple(values.values())


def _update(
    table: str, key: str, key_value: Any, values: Mapping[str, Any], returning: str = ""
) -> tuple[str, tuple[Any, ...]]:
    values = stored_values(values)
    sets = ", ".join(f"{name}=?" for name in values)
    return f"UPDATE {table} SET {sets} WHERE {key}=?{returning}", (*values.values(), key_value)


def _params(params: Params) -> Params:
    if isinstance(params, Mapping):
        return {name: _text(value) for name, value in params.items()}
    return tuple(_text(value) for value in params)


class PostgresStore(SharedState):
    """The store in PostgreSQL (``postgresql://user@host:port/db``): several processes and machines share it."""

    shared = True
    in_memory = False

    def __init__(self, url: str, *, pool_size: int = POOL_SIZE) -> None:
        try:
            import psycopg
            import psycopg_pool  # noqa: F401  (pgconnections)
        except ImportError:
            raise StoreError("--db postgresql://... needs psycopg: pip install 'gatekit[postgres]'") from None
        self.path = url
        self._local = threading.local()
        try:  # one connection first: a database that cannot be reached is said at once, not after the pool's wait
            psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT).close()
        except psycopg.Error as exc:
            raise StoreError(without_password(str(exc).strip().splitlines()[0] if str(exc).strip() else
                                               type(exc).__name__)) from None  # fmt: skip
        self._connections = Connections(url, size=pool_size + 1)  # (one more: the event loop's, kept out of it)
        self._lock_key: int | None = LOCK_KEY
        self._lock_statement: str | None = f"SELECT pg_advisory_xact_lock({LOCK_KEY})"
        self._on_loop: int | None = None  # the thread (the event loop's) inside ``without_waiting``
        self._hurried: int | None = None  # the same, until its first write transaction begins
        self._loop_conn: Any = None  # the loop's connection (``_loop_connection``)
        self.batcher: Batcher | None = None  # the loop's batch of writes (``serving.batcher_of``)
        self._create()

    # --- schema ------------------------------------------------------------------------------------

    def _create(self) -> None:
        # (not in a pipeline: the schema is several statements in one)
        with self._connections.pool.connection(timeout=POOL_WAIT) as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))  # one process creates, others wait
            exists: Any = conn.execute("SELECT to_regclass('transactions') IS NOT NULL AS found").fetchone()
            conn.execute(SCHEMA)
            row: Any = conn.execute("SELECT version FROM gatekit_schema").fetchone()
            if row is None:
                conn.execute("INSERT INTO gatekit_schema (version) VALUES (%s)",
                             (SCHEMA_VERSION if not (exists and exists["found"]) else 1,))  # fmt: skip
                row = conn.execute("SELECT version FROM gatekit_schema").fetchone()
            version = int(row["version"]) if row else SCHEMA_VERSION
            for migration in schema.MIGRATIONS:
                if version < migration.version:
                    conn.execute(schema.postgres_migration(migration))
                    conn.execute("UPDATE gatekit_schema SET version=%s", (migration.version,))
                    version = migration.version
            if version > SCHEMA_VERSION:
                raise StoreError(f"{without_password(self.path)} was written by a newer gatekit (schema {version})")

    # --- transactions and statements ----------------------------------------------------------------

    @contextmanager
    def without_waiting(self, patience: float = 0.0) -> Iterator[None]:
        """Work on the event loop (``serving``, the loop's batch): its statements run on the loop's own connection
        (``_loop_connection``), and until its first write transaction, one that would wait for the write lock
        (another process holds it), or a connection that is not ready, raises ``StoreBusy`` with nothing written:
        the work is done again in a thread, which waits.  (``patience`` is SQLite's: here nothing is waited for.)"""
        me = threading.get_ident()
        self._on_loop, self._hurried = me, me
        try:
            yield
        finally:
            self._on_loop, self._hurried = None, None

    @contextmanager
    def transaction(self) -> Iterator[PostgresStore]:
        """One transaction on this thread's connection, holding the write lock; re-entrant in one thread."""
        if getattr(self._local, "conn", None) is not None:
            yield self
            return
        self._local.after = []
        try:
            with self._begun() as (conn, pipeline):
                self._local.conn, self._local.pipeline = conn, pipeline
                try:
                    yield self
                finally:
                    self._local.conn = self._local.pipeline = None
        except BaseException:
            self._local.after = []
            raise
        done, self._local.after = self._local.after, []
        for action in done:
            action()

    def _begun(self) -> AbstractContextManager[tuple[Any, Any]]:
        """A connection in ``BEGIN`` with the write lock held, and its pipeline: the loop's, or a pooled one."""
        if self._on_loop is not None and self._on_loop == threading.get_ident():
            return self._begun_on_loop()
        return self._connections.begun(self._lock_statement)

    @contextmanager
    def _begun_on_loop(self) -> Iterator[tuple[Any, Any]]:
        """The loop's transaction: ``BEGIN`` and a try of the write lock in one round trip; the lock held by
        another process (or the connection found dead then) is ``StoreBusy``, nothing written.  Once a write has
        begun, the rest of the work waits for the lock as anywhere (``without_waiting``).

        A lock refused ends its empty transaction with ``COMMIT``, not ``ROLLBACK``: psycopg forgets every statement
        it prepared on a connection when it sees a ``ROLLBACK`` (it cannot tell what was undone), and the loop, whose
        try often finds the lock held with two workers, ran its hot statements unprepared and sent ``DEALLOCATE ALL``
        again and again (177 ``ROLLBACK`` and 101 ``DEALLOCATE ALL`` for 2,766 sales, ``log_statement=all``)."""
        import psycopg

        conn = self._loop_connection()
        hurried = self._hurried is not None and self._lock_key is not None
        busy = False
        try:
            with self._connections.unavailable(), conn.pipeline() as pipeline, conn.transaction():
                if hurried:
                    try:
                        row = conn.execute(TRY_LOCK, (self._lock_key,)).fetchone()
                    except psycopg.OperationalError as exc:
                        raise StoreBusy("the loop's connection does not answer") from exc
                    busy = not row["locked"]
                elif self._lock_statement is not None:
                    conn.execute(self._lock_statement)
                if not busy:
                    self._hurried = None
                    yield conn, pipeline
        finally:
            if conn.broken:
                self._drop_loop_connection()
        if busy:  # (raised once the empty transaction has committed)
            raise StoreBusy("another process is writing")

    def _loop_connection(self) -> Any:
        """The connection the event loop's work uses, kept out of the pool; ``StoreBusy`` when none is ready (the
        database does not answer, or no connection is free now): the work goes to a thread."""
        conn = self._loop_conn
        if conn is not None and (conn.closed or conn.broken):
            self._drop_loop_connection()
            conn = None
        if conn is None:
            conn = self._loop_conn = self._connections.take_now()
            if conn is None:
                raise StoreBusy("no connection of the database is ready for the event loop")
        return conn

    def _drop_loop_connection(self) -> None:
        conn, self._loop_conn = self._loop_conn, None
        if conn is not None:
            self._connections.give_back(conn)

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """Inside this thread's transaction: what the block writes is undone if it raises, with the actions it
        left for after the commit; the rest of the transaction stays.

        ``SAVEPOINT`` goes with the block's first statement (the pipeline: no round trip of its own), and is not
        released: the next block's savepoint of the same name hides it (``ROLLBACK TO`` goes back to the latest),
        and the commit ends them all; a batch of ``batch.MAX_BATCH`` (64) blocks stays within what a database
        session keeps of its subtransactions without spilling them to disk."""
        conn, pipeline = getattr(self._local, "conn", None), getattr(self._local, "pipeline", None)
        if conn is None or pipeline is None:
            raise RuntimeError("a savepoint needs the transaction of this thread")
        pending = len(self._local.after)
        conn.execute("SAVEPOINT part")
        try:
            yield
        except BaseException:
            import psycopg

            with contextlib.suppress(psycopg.Error):  # (a failed statement: the pipeline goes on after a sync)
                pipeline.sync()
            conn.execute("ROLLBACK TO part")
            del self._local.after[pending:]
            raise

    def watch_writers(self) -> AbstractContextManager[Any]:
        """A connection of its own for ``wait_for_writers`` (the batch's lock watcher), None when none opens."""
        import psycopg

        try:
            return psycopg.connect(self.path, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
        except psycopg.Error:
            return nullcontext(None)

    def wait_for_writers(self, watching: Any) -> None:
        """Block until no process holds the write lock, keeping nothing (the lock is taken and let go in one
        statement, by the database)."""
        import psycopg

        if watching is None or self._lock_statement is None:
            return
        with contextlib.suppress(psycopg.Error):
            watching.execute(self._lock_statement)

    def _run(self, work: Callable[[Any], T]) -> T:
        """``work(connection)``: on this thread's transaction's connection, the loop's, else on a pooled one."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return work(conn)
        if self._on_loop is not None and self._on_loop == threading.get_ident():
            return self._run_on_loop(work)
        return self._connections.run(work)

    def _run_on_loop(self, work: Callable[[Any], T]) -> T:
        """A statement outside a transaction on the loop's connection; the connection found dead is ``StoreBusy``
        (the work goes to a thread, where a dead connection is replaced)."""
        import psycopg

        conn = self._loop_connection()
        try:
            return work(conn)
        except psycopg.OperationalError as exc:
            if not conn.broken:
                raise
            self._drop_loop_connection()
            raise StoreBusy("the loop's connection does not answer") from exc

    def after_commit(self, action: Callable[[], object]) -> None:
        """Run ``action`` once the current transaction has committed (never if it rolls back); at once outside one."""
        if getattr(self._local, "conn", None) is not None:
            self._local.after.append(action)
        else:
            action()

    def hold_if_free(self) -> bool:
        return False  # (the quick in-place path is for an in-memory store only)

    def release(self) -> None:
        return None

    def execute(self, sql: str, params: Params = ()) -> int:
        """Run a statement; the rows it affected."""
        return self._run(lambda conn: self._rowcount(conn.execute(_marked(sql), _params(params))))

    def _rowcount(self, cursor: Any) -> int:
        pipeline = getattr(self._local, "pipeline", None)
        if pipeline is not None:  # (in a pipeline, the count comes with the statement's result: wait for it)
            pipeline.sync()
        return int(cursor.rowcount)

    def count(self, sql: str, params: Params = ()) -> int:
        """Run a statement; the rows it affected (an insert that met a conflict and did nothing: 0)."""
        return self.execute(sql, params)

    def one(self, sql: str, params: Params = ()) -> Row | None:
        row: Row | None = self._run(lambda conn: conn.execute(_marked(sql), _params(params)).fetchone())
        return row

    def all(self, sql: str, params: Params = ()) -> list[Row]:
        rows: list[Row] = self._run(lambda conn: conn.execute(_marked(sql), _params(params)).fetchall())
        return rows

    def insert(self, table: str, values: Mapping[str, Any]) -> int:
        """Insert a row; its id (a table with one), else the rows inserted."""
        auto = schema.AUTO.get(table)
        if auto is None:
            return self.execute(*_insert(table, values))
        row = self.one(*_insert(table, values, f" RETURNING {auto}"))
        return int(row[auto]) if row else 0

    def insert_row(self, table: str, values: Mapping[str, Any]) -> Row:
        row = self.one(*_insert(table, values, " RETURNING *"))
        assert row is not None
        return row

    def update(self, table: str, key: str, key_value: Any, values: Mapping[str, Any]) -> int:
        return self.execute(*_update(table, key, key_value, values))

    def update_row(self, table: str, key: str, key_value: Any, values: Mapping[str, Any]) -> Row | None:
        return self.one(*_update(table, key, key_value, values, " RETURNING *"))

    def next_id(self, table: str) -> int:
        row = self.one(f"SELECT {self.next_id_expression(table)} AS id")
        assert row is not None
        return int(row["id"])

    def next_id_expression(self, table: str) -> str:
        """SQL: the id the next insert into ``table`` gets (its sequence's next value)."""
        return f"nextval('{schema.sequence(table)}')"

    # --- resets, meta, the clock offset and leases ---------------------------------------------------

    def reset(self) -> None:
        """Forget every transaction, card, subscription, journal line, callback, fault and merchant."""
        with self.transaction():
            self.execute(f"TRUNCATE {', '.join(RESET_TABLES)}")
            for table, first in FIRST_IDS.items():
                self.execute(f"ALTER SEQUENCE {table}_id_seq RESTART WITH {first}")

    def _upsert(self, table: str, key: str, values: Mapping[str, Any]) -> None:
        names = ", ".join(values)
        updates = ", ".join(f"{name}=EXCLUDED.{name}" for name in values if name != key)
        self.execute(f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(values))}) ON CONFLICT ({key}) "
                     f"DO UPDATE SET {updates}", tuple(values.values()))  # fmt: skip

    def without_lock(self) -> PostgresStore:
        """The same store (its connections) with transactions that take no write lock: for rows no money rule reads
        (the request journal), whose writes then do not queue behind the money decisions of every process."""
        view = copy.copy(self)
        view._local, view._lock_key, view._lock_statement, view.batcher = threading.local(), None, None, None
        view._on_loop = view._hurried = view._loop_conn = None
        return view

    def close(self) -> None:
        if self.batcher is not None:
            self.batcher.close()
        self._drop_loop_connection()
        self._connections.close()


def without_password(url: str) -> str:
    """A database URL as it may be shown: its password masked."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)
