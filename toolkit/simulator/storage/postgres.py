"""The simulator's state in PostgreSQL: one store for simulators on several machines (``--db postgresql://...``).

The same ``Store`` as SQLite's: the storage wing writes each statement once, in SQL both databases read, with
``?`` parameters (numbered for PostgreSQL: ``_numbered``); what differs is each store's own (the schema's words,
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
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

from toolkit.simulator.storage import schema
from toolkit.simulator.storage.base import Insert, Params, Row, SharedState, StoreBusy, StoreError, stored_values
from toolkit.simulator.storage.pgconnections import CONNECT_TIMEOUT, POOL_WAIT, Connections, ended
from toolkit.simulator.storage.pggrowth import Growth, Size
from toolkit.simulator.storage.schema import FIRST_IDS, RESET_TABLES, SCHEMA_VERSION

if TYPE_CHECKING:
    from toolkit.simulator.storage.batch import Batcher

T = TypeVar("T")

POOL_SIZE = 8  # connections for the threads (gateway threads that read, the scheduler, the journal), per process
LOCK_KEY = 0x6761746B  # "gatk": the advisory lock every write transaction takes
TRY_LOCK = "SELECT pg_try_advisory_xact_lock(%s) AS locked"
# a table's rows at its last ANALYZE (-1: never) and its live rows now, for ``pggrowth``
TABLE_SIZE = (
    "SELECT c.reltuples AS analyzed, coalesce(s.n_live_tup, 0) AS live FROM pg_class c"
    " LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.oid = to_regclass(%s)"
)
SCHEMA = ";\n".join(schema.postgres_ddl())  # (``schema``: the one schema, in PostgreSQL's words)


def is_postgres(db: str) -> bool:
    return db.startswith(("postgresql://", "postgres://"))


@lru_cache(maxsize=1024)
def _numbered(sql: str) -> str:
    """A statement with ``?`` parameters as PostgreSQL takes them: ``$1``, ``$2``... (the storage wing's statements
    hold no ``?`` but their parameters: ``tests/test_layout.py`` checks it).  psycopg's ``RawCursor`` sends it as it
    is: its own cursors look for their ``%s`` in the text of every statement they run, and keep what they found
    for statements under 4 KiB only, which a batch's inserts made together (``write_ahead``) are not."""
    parts = sql.split("?")
    return "".join(f"{part}${n}" for n, part in enumerate(parts[:-1], 1)) + parts[-1]


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


_KEPT_AS = {schema.INTEGER: int, schema.REAL: float, schema.TEXT: str}  # the Python type a column's value reads as
_CAST = {schema.INTEGER: "BIGINT", schema.REAL: "DOUBLE PRECISION", schema.TEXT: "TEXT"}


def _default(column: schema.Column) -> Any:
    """A column's default as PostgreSQL reads it back (the schema's are literals: ``''``, ``0``, ``'none'``)."""
    if column.default is None:
        return None
    if column.default.startswith("'"):
        return column.default[1:-1].replace("''", "'")
    return _KEPT_AS[column.type](column.default)


@cache
def _columns(table: str) -> tuple[dict[str, Any], dict[str, str]]:
    """A table's columns: their defaults as read back, in the table's order; their types."""
    found = next(each for each in schema.TABLES if each.name == table)
    return {column.name: _default(column) for column in found.columns}, {c.name: c.type for c in found.columns}


def _built(table: str, values: Mapping[str, Any]) -> bool:
    """Whether the row PostgreSQL stores for ``values`` (``_params`` applied) is the table's defaults overlaid with
    them: every value None, or of its column's own type (an ``int`` in a ``BIGINT`` column, not a float: that
    would read back as 5.0), and no NaN (it reads back as a new object, equal to nothing)."""
    types = _columns(table)[1]
    for name, value in values.items():
        kind = types.get(name)
        if kind is None or (value is not None and type(value) is not _KEPT_AS[kind]):
            return False
        if type(value) is float and value != value:
            return False
    return True


def _kept(values: Mapping[str, Any]) -> Mapping[str, Any]:
    """A row's values as PostgreSQL keeps them (free text masked, no NUL)."""
    kept = _params(stored_values(values))
    assert isinstance(kept, Mapping)
    return kept


def _row(table: str, values: Mapping[str, Any], **ids: Any) -> Row:
    """The row PostgreSQL stores for ``values`` of which ``_built`` holds: the table's defaults overlaid with them,
    and the ids it was given."""
    row = dict(_columns(table)[0])
    row.update(values)
    row.update(ids)
    return row


def _stored(insert: Insert) -> Mapping[str, Any] | None:
    """The values of ``insert`` but its ids as PostgreSQL keeps them; None when the row it stores is not the table's
    defaults overlaid with them (``_built``): the insert is then made as the SQLite store makes it."""
    values = _kept({name: value for name, value in insert.values.items() if name not in insert.ids})
    return values if schema.AUTO.get(insert.table) in insert.ids and _built(insert.table, values) else None


def _key(insert: Insert) -> tuple[str, str, tuple[Any, ...]]:
    """What an insert's repeat check looks for: two inserts with different keys cannot find each other's row."""
    return insert.table, insert.found, insert.params


@lru_cache(maxsize=256)
def _insert_unless_sql(
    table: str, found: str, ids: tuple[str, ...], names: tuple[str, ...], rows: int, next_id: str
) -> str:
    """``rows`` inserts unless their own ``found`` selects a value, in one statement: each row's check and values
    in ``VALUES`` (with its number, ``n_``), the next ids for the rows found nothing for, the insert; what it
    selects: each row's ``n``, ``found`` and the id it was ``made`` with (NULL: nothing written)."""
    types = _columns(table)[1]
    one = "(" + ", ".join(["?::BIGINT", f"({found})", *(f"?::{_CAST[types[name]]}" for name in names)]) + ")"
    taken = ", ".join([*(["ids_.id_"] * len(ids)), *(f"new_.{name}" for name in names)])
    columns = ", ".join((*ids, *names))
    return (
        f"WITH new_ (n_, found_, {', '.join(names)}) AS (VALUES {', '.join([one] * rows)}), "
        f"ids_ AS MATERIALIZED (SELECT n_, {next_id} AS id_ FROM new_ WHERE found_ IS NULL ORDER BY n_), "
        f"made_ AS (INSERT INTO {table} ({columns}) SELECT {taken} FROM ids_ JOIN new_ USING (n_)) "
        "SELECT new_.n_ AS n, new_.found_ AS found, ids_.id_ AS made "
        "FROM new_ LEFT JOIN ids_ USING (n_) ORDER BY new_.n_"
    )


_Ahead = dict[tuple[str, str, tuple[Any, ...]], tuple[Insert, tuple[Any, Row | None]]]  # key: the insert, its result


def _leading(inserts: list[Insert | None]) -> list[tuple[Insert, Mapping[str, Any]]]:
    """The inserts ``write_ahead`` makes together: the leading ones (a write that makes none ends them) of one
    shape (table, check, columns), each stored as given (``_stored``), with keys no other of them has (the
    later of two would find the earlier's row: it is left to its write, in turn)."""
    run: list[tuple[Insert, Mapping[str, Any]]] = []
    keys: set[tuple[str, str, tuple[Any, ...]]] = set()
    shape: tuple[Any, ...] | None = None
    for insert in inserts:
        values = _stored(insert) if insert is not None else None
        if insert is None or values is None or _key(insert) in keys:
            break
        here = _shape(insert, values)
        if shape is not None and here != shape:
            break
        shape = here
        keys.add(_key(insert))
        run.append((insert, values))
    return run


def _shape(insert: Insert, values: Mapping[str, Any]) -> tuple[Any, ...]:
    """What inserts made in one statement share: the table, the check, the ids and the columns."""
    return insert.table, insert.found, insert.ids, tuple(values)


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
        self._raw = psycopg.RawCursor  # (``_numbered``: each statement's cursor)
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
        self.growth = Growth(self._size, self._analyze)  # (tables analyzed as they grow: ``pggrowth``)
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
        self._local.after, self._local.claimed, self._local.ahead = [], [], None
        self._local.savepoint_due = False
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
            with self._connections.unavailable(), conn.pipeline() as pipeline:
                conn.execute("BEGIN")
                with ended(conn, pipeline):
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
        left for after the commit and the rows written ahead for it (``write_ahead``); the rest of the transaction
        stays.

        ``SAVEPOINT`` goes just before the block's first statement, with it (the pipeline: no round trip of its
        own), and a block that runs none (a sale whose insert was written ahead) sends none.  It is not released:
        the next block's savepoint of the same name hides it (``ROLLBACK TO`` goes back to the latest), and the
        commit ends them all; a batch of ``batch.MAX_BATCH`` (64) blocks stays within what a database session keeps
        of its subtransactions without spilling them to disk."""
        conn, pipeline = getattr(self._local, "conn", None), getattr(self._local, "pipeline", None)
        if conn is None or pipeline is None:
            raise RuntimeError("a savepoint needs the transaction of this thread")
        pending = len(self._local.after)
        claimed, self._local.claimed = self._local.claimed, []
        self._local.savepoint_due = True
        try:
            yield
        except BaseException:
            import psycopg

            issued, self._local.savepoint_due = not self._local.savepoint_due, False
            if issued:
                with contextlib.suppress(psycopg.Error):  # (a failed statement: the pipeline goes on after a sync)
                    pipeline.sync()
                conn.execute("ROLLBACK TO part")
            del self._local.after[pending:]
            undone, self._local.claimed = self._local.claimed, claimed
            self._delete(undone)
            raise
        self._local.savepoint_due = False
        self._local.claimed = claimed

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
            if self._local.savepoint_due:  # (``savepoint``: sent with the block's first statement)
                self._local.savepoint_due = False
                conn.execute("SAVEPOINT part")
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
        return self._run(lambda conn: self._rowcount(self._raw(conn).execute(_numbered(sql), _params(params))))

    def _rowcount(self, cursor: Any) -> int:
        pipeline = getattr(self._local, "pipeline", None)
        if pipeline is not None:  # (in a pipeline, the count comes with the statement's result: wait for it)
            pipeline.sync()
        return int(cursor.rowcount)

    def count(self, sql: str, params: Params = ()) -> int:
        """Run a statement; the rows it affected (an insert that met a conflict and did nothing: 0)."""
        return self.execute(sql, params)

    def one(self, sql: str, params: Params = ()) -> Row | None:
        row: Row | None = self._run(lambda conn: self._raw(conn).execute(_numbered(sql), _params(params)).fetchone())
        return row

    def all(self, sql: str, params: Params = ()) -> list[Row]:
        rows: list[Row] = self._run(lambda conn: self._raw(conn).execute(_numbered(sql), _params(params)).fetchall())
        return rows

    def _size(self, table: str) -> Size:
        """What the database knows of ``table``'s size (``pggrowth``), on a pooled connection."""
        row = self._connections.run(lambda conn: conn.execute(TABLE_SIZE, (table,)).fetchone())
        return Size(float(row["analyzed"]), float(row["live"])) if row else Size(-1.0, 0.0)

    def _analyze(self, table: str) -> None:
        """``ANALYZE table`` on a pooled connection (``pggrowth``)."""
        self._connections.run(lambda conn: conn.execute(f"ANALYZE {table}"))

    def insert_many(self, table: str, rows: list[dict[str, Any]]) -> None:
        super().insert_many(table, rows)
        self.growth.inserted(table, len(rows))

    def insert(self, table: str, values: Mapping[str, Any]) -> int:
        """Insert a row; its id (a table with one), else the rows inserted."""
        self.growth.inserted(table)
        auto = schema.AUTO.get(table)
        if auto is None:
            return self.execute(*_insert(table, values))
        row = self.one(*_insert(table, values, f" RETURNING {auto}"))
        return int(row[auto]) if row else 0

    def insert_row(self, table: str, values: Mapping[str, Any]) -> Row:
        """``insert``, returning the row as stored (with its defaults and id): built from the table's defaults and
        the values when PostgreSQL stores them as given (``_built``), as the SQLite store does; read back
        (``RETURNING *``) otherwise.  A wide row read back and turned into a dict costs the simulator more than the
        insert."""
        self.growth.inserted(table)
        values = _kept(values)
        if not _built(table, values):
            row = self.one(*_insert(table, values, " RETURNING *"))
            assert row is not None
            return row
        auto = schema.AUTO.get(table)
        if auto is not None and values.get(auto) is None:
            made = self.one(*_insert(table, values, f" RETURNING {auto}"))
            assert made is not None
            return _row(table, values, **{auto: made[auto]})
        self.execute(*_insert(table, values))
        return _row(table, values)

    def insert_unless(self, insert: Insert) -> tuple[Any, Row | None]:
        """``SharedState.insert_unless`` in one statement, one round trip (``_insert_unless_sql``), or none when
        ``write_ahead`` made it already."""
        ahead: _Ahead | None = getattr(self._local, "ahead", None)
        if ahead and (done := ahead.pop(_key(insert), None)) is not None:
            written, result = done
            if result[1] is not None:  # (undone if this write fails: rolled back to its savepoint, deleted again)
                self._local.claimed.append((insert.table, result[1]))
            if written.values == insert.values:
                return result
            self._delete([(written.table, result[1])] if result[1] is not None else [])  # (not the row it writes)
        values = _stored(insert)
        if values is None:
            return super().insert_unless(insert)
        return self._insert_together([(insert, values)])[0]

    def _insert_together(self, run: list[tuple[Insert, Mapping[str, Any]]]) -> list[tuple[Any, Row | None]]:
        """The inserts of ``run`` (one shape, keys of their own: ``_leading``) in one statement; each one's result."""
        first, names = run[0][0], tuple(run[0][1])
        sql = _insert_unless_sql(first.table, first.found, first.ids, names, len(run),
                                 self.next_id_expression(first.table))  # fmt: skip
        rows = self.all(sql, tuple(value for n, (insert, values) in enumerate(run)
                                   for value in (n, *insert.params, *values.values())))  # fmt: skip
        self.growth.inserted(first.table, sum(row["made"] is not None for row in rows))
        return [
            (row["found"], None) if row["made"] is None else (None, _row(first.table, values, **dict.fromkeys(
                insert.ids, row["made"])))
            for (insert, values), row in zip(run, rows, strict=True)
        ]  # fmt: skip

    @contextmanager
    def write_ahead(self, inserts: list[Insert | None]) -> Iterator[None]:
        """The leading inserts of a batch's writes (``_leading``: two at least) made together in one statement
        before the writes run: each write's ``insert_unless`` then takes its own result with no round trip.

        Each write still runs in turn, in its savepoint: one that fails has the row written ahead for it undone
        with what it wrote; a row no write took (its request failed before it got there) is undone before the
        commit.  A failure of the statement itself (its savepoint) leaves each write to make its own insert."""
        import psycopg

        run = _leading(inserts) if getattr(self._local, "conn", None) is not None else []
        ahead: _Ahead = {}
        if len(run) > 1:
            try:
                with self.savepoint():
                    results = self._insert_together(run)
                ahead = {_key(insert): (insert, result) for (insert, _), result in zip(run, results, strict=True)}
            except psycopg.Error:
                ahead = {}
        self._local.ahead = ahead
        try:
            yield
        finally:
            left, self._local.ahead = self._local.ahead, None
        self._delete([(insert.table, result[1]) for insert, result in (left or {}).values() if result[1] is not None])

    def _delete(self, rows: list[tuple[str, Row]]) -> None:
        """Rows written ahead that no write keeps (``write_ahead``), deleted by id."""
        for table, row in rows:
            auto = schema.AUTO[table]
            self.execute(f"DELETE FROM {table} WHERE {auto}=?", (row[auto],))

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

    def stopping(self) -> None:
        """The simulator stops: a statement waits a moment at most for a database that does not answer
        (``Connections.stopping``)."""
        self._connections.stopping()

    def close(self) -> None:
        if self.batcher is not None:
            self.batcher.close()
        self._drop_loop_connection()
        self._connections.close()


def without_password(url: str) -> str:
    """A database URL as it may be shown: its password masked."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)
