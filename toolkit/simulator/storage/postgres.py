"""The simulator's state in PostgreSQL: one store for simulators on several machines (``--db postgresql://...``).

The same interface as the SQLite ``Store`` (the engine writes its SQL once, in SQLite's words): each statement
is translated once and cached (``?`` and ``:name`` parameters, ``INSERT OR IGNORE``, SQLite's next-id
expression), through psycopg 3 and its connection pool.

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
from toolkit.simulator.storage.base import Row, SharedState, StoreError, stored_values
from toolkit.simulator.storage.pgconnections import CONNECT_TIMEOUT, Connections
from toolkit.simulator.storage.schema import FIRST_IDS, RESET_TABLES, SCHEMA_VERSION

T = TypeVar("T")

POOL_SIZE = 8
LOCK_KEY = 0x6761746B  # "gatk": the advisory lock every write transaction takes
SCHEMA = ";\n".join(schema.postgres_ddl())  # (``schema``: the one schema, in PostgreSQL's words)
_WITH_ID = {"transactions": "id", "card_refs": "cardrefid", "recurring": "id", "journal": "id", "callbacks": "id",
            "callback_attempts": "id", "faults": "id"}  # fmt: skip
_NEXT_ID = re.compile(
    r"\(SELECT MAX\(COALESCE\(\(SELECT seq FROM sqlite_sequence WHERE name='(\w+)'\), 0\), COALESCE\(MAX\(id\), 0\)\)"
    r" \+ 1 FROM \w+\)"
)
_PARAMS = re.compile(r"'[^']*'|\?|(?<!:):([A-Za-z_]\w*)|%")
_INSERT_INTO = re.compile(r"^\s*INSERT\s+(?:OR\s+IGNORE\s+)?INTO\s+(\w+)", re.IGNORECASE)


def is_postgres(db: str) -> bool:
    return db.startswith(("postgresql://", "postgres://"))


@lru_cache(maxsize=1024)
def translate(sql: str, want_id: bool = False) -> str:
    """A statement in SQLite's words, as PostgreSQL takes it (``want_id``: an INSERT returns its row's id)."""
    ignore = re.match(r"^\s*INSERT\s+OR\s+IGNORE\s+INTO", sql, re.IGNORECASE) is not None
    sql = re.sub(r"^\s*INSERT\s+OR\s+IGNORE\s+INTO", "INSERT INTO", sql, flags=re.IGNORECASE)
    sql = _NEXT_ID.sub(lambda m: f"nextval('{m.group(1)}_id_seq')", sql)

    def param(match: re.Match[str]) -> str:
        text = match.group(0)
        if text.startswith("'"):
            return text.replace("%", "%%")
        if text == "?":
            return "%s"
        if text == "%":
            return "%%"
        return f"%({match.group(1)})s"

    sql = _PARAMS.sub(param, sql)
    if ignore:
        sql += " ON CONFLICT DO NOTHING"
    table = _INSERT_INTO.match(sql)
    if want_id and table is not None and table.group(1) in _WITH_ID and "RETURNING" not in sql.upper():
        sql += f" RETURNING {_WITH_ID[table.group(1)]}"
    return sql


def _text(value: Any) -> Any:
    """PostgreSQL's text holds no NUL character (SQLite's does): one in a merchant's field is kept as U+FFFD."""
    return value.replace("\x00", "\ufffd") if isinstance(value, str) and "\x00" in value else value


def _params(params: Mapping[str, Any] | tuple[Any, ...]) -> Mapping[str, Any] | tuple[Any, ...]:
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

    def execute(self, sql: str, params: Mapping[str, Any] | tuple[Any, ...] = ()) -> int:
        """Run a statement; returns the new row's id (an INSERT into a table with one) or the rows affected."""
        insert = _INSERT_INTO.match(sql) is not None

        def run(conn: Any) -> int:
            cursor = conn.execute(translate(sql, insert), _params(params))
            if insert and cursor.description:
                row = cursor.fetchone()
                return int(next(iter(row.values()))) if row else 0
            return int(cursor.rowcount)

        return self._run(run)

    def count(self, sql: str, params: Mapping[str, Any] | tuple[Any, ...] = ()) -> int:
        """Run a statement; the rows it affected (an ``INSERT OR IGNORE`` that ignored: 0)."""
        return self._run(lambda conn: int(conn.execute(translate(sql), _params(params)).rowcount))

    def one(self, sql: str, params: Mapping[str, Any] | tuple[Any, ...] = ()) -> Row | None:
        row: Row | None = self._run(lambda conn: conn.execute(translate(sql), _params(params)).fetchone())
        return row

    def all(self, sql: str, params: Mapping[str, Any] | tuple[Any, ...] = ()) -> list[Row]:
        rows: list[Row] = self._run(lambda conn: conn.execute(translate(sql), _params(params)).fetchall())
        return rows

    def returning(self, sql: str, params: Mapping[str, Any] | tuple[Any, ...] = ()) -> Row | None:
        rows = self.all(sql, params)
        return rows[0] if rows else None

    def insert(self, table: str, values: Mapping[str, Any]) -> int:
        values = stored_values(values)
        names = ", ".join(values)
        marks = ", ".join(f":{name}" for name in values)
        return self.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", dict(values))

    def insert_row(self, table: str, values: Mapping[str, Any]) -> Row:
        values = stored_values(values)
        names = ", ".join(values)
        marks = ", ".join(f":{name}" for name in values)
        row = self.returning(f"INSERT INTO {table} ({names}) VALUES ({marks}) RETURNING *", dict(values))
        assert row is not None
        return row

    def update(self, table: str, key: str, key_value: Any, values: Mapping[str, Any]) -> int:
        values = stored_values(values)
        sets = ", ".join(f"{name}=:{name}" for name in values)
        return self.count(f"UPDATE {table} SET {sets} WHERE {key}=:_key", {**values, "_key": key_value})

    def update_row(self, table: str, key: str, key_value: Any, values: Mapping[str, Any]) -> Row | None:
        values = stored_values(values)
        sets = ", ".join(f"{name}=:{name}" for name in values)
        return self.returning(f"UPDATE {table} SET {sets} WHERE {key}=:_key RETURNING *", {**values, "_key": key_value})

    def next_id(self, table: str) -> int:
        row = self.one(f"SELECT nextval('{table}_id_seq') AS id")
        assert row is not None
        return int(row["id"])

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
