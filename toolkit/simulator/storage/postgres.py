"""The simulator's state in PostgreSQL: one store for simulators on several machines (``--db postgresql://...``).

The same ``Store`` as SQLite's: the storage wing writes each statement once, in SQL both databases read, with
``?`` parameters (written ``%s`` for psycopg: ``_marked``); what differs is each store's own (the schema's words,
the next id, an upsert).  Through psycopg 3 and its connection pool.

- ``transaction()`` runs on one pooled connection for the thread (re-entrant), and first takes a
  transaction-level advisory lock: the same guarantee as SQLite's ``BEGIN IMMEDIATE`` (money decisions are
  made one at a time, whichever process or machine makes them), so concurrent captures, returns and voids of
  one order can never exceed what was authorized or charged.  Reads outside a transaction use any pooled
  connection.
- Its connections (``pgconnections``) outlive a database's outage: a dead one is replaced before a request gets a
  500 for it, and a database that does not answer is ``StoreUnavailable`` (a 503 that says so).
- A schema version table (``gatekit_schema``) and forward migrations; ``reset()`` empties what the SQLite store's
  does (``RESET_TABLES``).
- Ids come from sequences that start where the SQLite store's do.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, TypeVar

from toolkit.simulator.storage import schema
from toolkit.simulator.storage.base import Params, Row, SharedState, StoreError, stored_values
from toolkit.simulator.storage.pgconnections import CONNECT_TIMEOUT, Connections
from toolkit.simulator.storage.schema import FIRST_IDS, RESET_TABLES, SCHEMA_VERSION

T = TypeVar("T")

POOL_SIZE = 8
LOCK_KEY = 0x6761746B  # "gatk": the advisory lock every write transaction takes
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
        self._connections = Connections(url, size=pool_size)
        self._create()

    # --- schema ------------------------------------------------------------------------------------

    def _create(self) -> None:
        with self._connections.begun() as conn:
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
    def transaction(self) -> Iterator[PostgresStore]:
        """One transaction on this thread's connection, holding the write lock; re-entrant in one thread."""
        if getattr(self._local, "conn", None) is not None:
            yield self
            return
        self._local.after = []
        try:
            with self._connections.begun() as conn:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
                self._local.conn = conn
                try:
                    yield self
                finally:
                    self._local.conn = None
        except BaseException:
            self._local.after = []
            raise
        done, self._local.after = self._local.after, []
        for action in done:
            action()

    def _run(self, work: Callable[[Any], T]) -> T:
        """``work(connection)``: on this thread's transaction's connection, else on a pooled one."""
        conn = getattr(self._local, "conn", None)
        return work(conn) if conn is not None else self._connections.run(work)

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
        return self._run(lambda conn: int(conn.execute(_marked(sql), _params(params)).rowcount))

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

    def close(self) -> None:
        self._connections.close()


def without_password(url: str) -> str:
    """A database URL as it may be shown: its password masked."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)
