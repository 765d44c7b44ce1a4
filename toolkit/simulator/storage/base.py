"""What the storage wing gives the rest of the simulator: the ``Store`` protocol both stores keep (SQLite:
``sqlite.SqliteStore``, PostgreSQL: ``postgres.PostgresStore``), their rows and errors, and how free text is kept.

Everything above storage names ``Store``, never a class: which database holds the state is ``open_store``'s
choice, made once (``toolkit.simulator.storage``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Protocol

from toolkit.masking import mask_value

Row = dict[str, Any]
Params = Mapping[str, Any] | tuple[Any, ...]
INSERT_CHUNK = 500  # rows per statement of ``insert_many`` (SQLite takes up to 32766 parameters in one)


# Columns a merchant's free text goes into: a card number or CVV typed there is masked before it is stored.
FREE_TEXT = frozenset({
    "client_orderid", "email", "redirect_url", "callback_url", "notify_url", "cardholder", "holder", "url",
    "params", "extra", "error_message", "plan_message", "path", "fields", "warnings", "error",
})  # fmt: skip


def stored_text(name: str, value: str) -> str:
    """``value`` as the store keeps it in column ``name``: masked (``toolkit.masking``), or as it is."""
    return mask_value(name, value)


def stored_values(values: Mapping[str, Any]) -> Mapping[str, Any]:
    """``values`` with their free-text columns as the store keeps them (the same mapping when nothing changes)."""
    changed = {}
    for name in FREE_TEXT.intersection(values):  # (a set operation in C: a row has a few free-text columns of many)
        value = values[name]
        if isinstance(value, str) and value and (kept := stored_text(name, value)) != value:
            changed[name] = kept
    return {**values, **changed} if changed else values


@dataclass(frozen=True)
class Insert:
    """A row to insert unless a query finds one already (``Store.insert_unless``): ``found`` selects one value (with
    ``params``), and each column of ``ids`` gets the table's next id."""

    table: str
    values: Mapping[str, Any]
    found: str
    params: tuple[Any, ...]
    ids: tuple[str, ...]


class StoreError(RuntimeError):
    """A database the simulator cannot use; the message says why and what to do."""


class StoreUnavailable(StoreError):
    """The database does not answer now (a shared PostgreSQL stopped or restarting): a request gets a 503 that says
    so, and the next one tries again."""


class StoreBusy(Exception):
    """A write on the event loop (``without_waiting``) would wait for a lock: nothing was written, and the request
    is answered again in a thread, which may wait."""


MAX_ROW_ID = 2**63 - 1  # SQLite's largest INTEGER


def row_id(text: str) -> int | None:
    """An identifier from a request as the store can look it up; None when it cannot exist.

    Only ASCII digits count (``str.isdigit`` also accepts ``²``, which ``int`` refuses), and
    nothing above SQLite's largest integer (binding one raises OverflowError).
    """
    if not (text.isascii() and text.isdigit()) or len(text) > 19:  # int() of 5000 digits raises ValueError
        return None
    value = int(text)
    return value if value <= MAX_ROW_ID else None


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def loads(text: str) -> Any:
    return json.loads(text) if text else {}


class SharedState:
    """What processes that share a store keep in it besides the orders: persistent values (``meta``), the clock
    offset and the leases.  The same for SQLite and PostgreSQL (``sqlite.SqliteStore``, ``postgres.PostgresStore``):
    only ``_upsert`` is written in each one's words."""

    def one(self, sql: str, params: Mapping[str, Any] | tuple[Any, ...] = ()) -> Row | None:
        raise NotImplementedError

    def execute(self, sql: str, params: Mapping[str, Any] | tuple[Any, ...] = ()) -> int:
        raise NotImplementedError

    def transaction(self) -> AbstractContextManager[Any]:
        raise NotImplementedError

    def _upsert(self, table: str, key: str, values: Mapping[str, Any]) -> None:
        """Insert the row, or replace the one with the same ``key``."""
        raise NotImplementedError

    def insert_row(self, table: str, values: Mapping[str, Any]) -> Row:
        raise NotImplementedError

    def next_id_expression(self, table: str) -> str:
        raise NotImplementedError

    def insert_unless(self, insert: Insert) -> tuple[Any, Row | None]:
        """In one write (call inside a transaction): ``(what insert.found selects, None)`` when it selects a value,
        nothing written; else ``(None, the row inserted)``, each column of ``insert.ids`` set to the table's next
        id.  Here two statements (SQLite's run in the process); a store may make it one (``PostgresStore``: one
        round trip to the database)."""
        row = self.one(f"SELECT ({insert.found}) AS found, {self.next_id_expression(insert.table)} AS next_id",
                       insert.params)  # fmt: skip
        assert row is not None
        if row["found"] is not None:
            return row["found"], None
        return None, self.insert_row(insert.table, {**insert.values, **dict.fromkeys(insert.ids, int(row["next_id"]))})

    def write_ahead(self, inserts: list[Insert | None]) -> AbstractContextManager[None]:
        """Inside a transaction, before writes that will each call ``insert_unless`` with one of ``inserts`` in
        turn (None: a write that will not): a store may do the leading ones together, each write then taking
        its result without a statement (``PostgresStore``).  Here nothing: SQLite's statements cost no round
        trip."""
        return nullcontext()

    def insert_many(self, table: str, rows: list[dict[str, Any]]) -> None:
        """Rows with the same names, masked already (the journal's entries), in a few multi-row statements: one
        call into the database per ``INSERT_CHUNK`` rows, where each call lets other threads take the GIL (a
        writer that holds the processes' write lock waits to get it back)."""
        if not rows:
            return
        names = tuple(rows[0])
        one = "(" + ", ".join("?" * len(names)) + ")"
        for start in range(0, len(rows), INSERT_CHUNK):
            chunk = rows[start : start + INSERT_CHUNK]
            params = tuple(row[name] for row in chunk for name in names)
            self.execute(f"INSERT INTO {table} ({', '.join(names)}) VALUES {', '.join([one] * len(chunk))}", params)

    def meta(self, name: str, default: Callable[[], str]) -> str:
        """A persistent value (the ACS signing secret), created on first use."""
        with self.transaction():
            row = self.one("SELECT value FROM meta WHERE name=?", (name,))
            if row is not None:
                return str(row["value"])
            value = default()
            self.execute("INSERT INTO meta (name, value) VALUES (?, ?)", (name, value))
            return value

    def read_offset(self) -> float:
        row = self.one("SELECT value FROM meta WHERE name='clock_offset'")
        return float(row["value"]) if row else 0.0

    def set_offset(self, offset: float) -> None:
        self._upsert("meta", "name", {"name": "clock_offset", "value": repr(offset)})

    def add_offset(self, seconds: float, check: Callable[[float], None]) -> float:
        """Add ``seconds`` in one transaction (``check(offset)`` may refuse first, given the current offset)."""
        with self.transaction():
            current = self.read_offset()
            check(current)
            self.set_offset(current + seconds)
            return current + seconds

    def hold_lease(self, name: str, holder: str, now: float, ttl: float, *, replacing: str = "") -> bool:
        """Take or renew lease ``name`` for ``holder`` until ``now + ttl`` unless another holder's is still valid
        (``replacing``: a holder known to be gone, whose lease counts as run out)."""
        with self.transaction():
            row = self.one("SELECT holder, until FROM leases WHERE name=?", (name,))
            if row is not None and row["holder"] not in (holder, replacing) and row["until"] > now:
                return False
            self._upsert("leases", "name", {"name": name, "holder": holder, "until": now + ttl})
            return True

    def lease_holder(self, name: str) -> Row | None:
        return self.one("SELECT holder, until FROM leases WHERE name=?", (name,))

    def drop_lease(self, name: str, holder: str) -> None:
        self.execute("DELETE FROM leases WHERE name=? AND holder=?", (name, holder))

    def stopping(self) -> None:
        """The simulator stops: its last writes do not wait for a database that does not answer (a shared
        database's store shortens its waits; a file's has none to shorten)."""
        return None

    def forget_processes(self) -> None:
        """The leases and the clock offset forgotten too (``gatekit simulate --reset``: as if no process had run)."""
        with self.transaction():
            self.execute("DELETE FROM leases")
            self.execute("DELETE FROM meta WHERE name='clock_offset'")


class Store(Protocol):
    """A simulator's state: one database that every process of a team simulator may share (``shared``).

    Money decisions run inside ``transaction()``, which holds the write lock of every process that shares the
    store: concurrent captures, returns and voids of one order are made one at a time.  Free-text columns are
    kept masked (``stored_text``)."""

    path: str

    @property
    def shared(self) -> bool: ...

    @property
    def in_memory(self) -> bool: ...

    def transaction(self) -> AbstractContextManager[Any]: ...

    def after_commit(self, action: Callable[[], object]) -> None: ...

    def execute(self, sql: str, params: Params = ()) -> int: ...

    def count(self, sql: str, params: Params = ()) -> int: ...

    def one(self, sql: str, params: Params = ()) -> Row | None: ...

    def all(self, sql: str, params: Params = ()) -> list[Row]: ...

    def insert(self, table: str, values: Mapping[str, Any]) -> int: ...

    def insert_row(self, table: str, values: Mapping[str, Any]) -> Row: ...

    def insert_many(self, table: str, rows: list[dict[str, Any]]) -> None: ...

    def insert_unless(self, insert: Insert) -> tuple[Any, Row | None]: ...

    def write_ahead(self, inserts: list[Insert | None]) -> AbstractContextManager[None]: ...

    def update(self, table: str, key: str, key_value: Any, values: Mapping[str, Any]) -> int: ...

    def update_row(self, table: str, key: str, key_value: Any, values: Mapping[str, Any]) -> Row | None: ...

    def next_id(self, table: str) -> int: ...

    def next_id_expression(self, table: str) -> str: ...

    def meta(self, name: str, default: Callable[[], str]) -> str: ...

    def read_offset(self) -> float: ...

    def set_offset(self, offset: float) -> None: ...

    def add_offset(self, seconds: float, check: Callable[[float], None]) -> float: ...

    def hold_lease(self, name: str, holder: str, now: float, ttl: float, *, replacing: str = "") -> bool: ...

    def lease_holder(self, name: str) -> Row | None: ...

    def drop_lease(self, name: str, holder: str) -> None: ...

    def forget_processes(self) -> None: ...

    def stopping(self) -> None: ...

    def hold_if_free(self) -> bool: ...

    def release(self) -> None: ...

    def reset(self) -> None: ...

    def close(self) -> None: ...
