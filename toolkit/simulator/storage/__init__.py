"""The simulator's storage wing: SQLite (``sqlite``: a file or memory) and PostgreSQL (``postgres``), group commit
(``batch``) and checkpoints; ``open_store`` chooses the store a ``--db`` names.  It imports neither the rules nor
the web wing."""

from __future__ import annotations

from pathlib import Path

from toolkit.simulator.storage.base import (
    Row,
    Store,
    StoreBusy,
    StoreError,
    StoreUnavailable,
    dumps,
    loads,
    row_id,
    stored_text,
)
from toolkit.simulator.storage.postgres import PostgresStore, is_postgres
from toolkit.simulator.storage.sqlite import SqliteStore

__all__ = [
    "PostgresStore",
    "Row",
    "SqliteStore",
    "Store",
    "StoreBusy",
    "StoreError",
    "StoreUnavailable",
    "dumps",
    "journal_path",
    "journal_store",
    "loads",
    "open_store",
    "row_id",
    "stored_text",
]


def journal_path(db: str) -> str:
    """The file beside a SQLite ``--db`` that keeps its journal (``team.db`` -> ``team.db.requests``)."""
    return f"{db}.requests"


def journal_store(store: Store) -> tuple[Store, bool]:
    """Where the request journal of ``store`` is kept, and whether it is a store of its own (closed with the journal).

    A SQLite file's journal is a file beside it: in the same file it would commit every 20 ms into the file the
    money rules write, each commit taking the processes' write lock and making every other process read its pages
    again (15% of what two workers answer).  PostgreSQL keeps it in its own tables, written without the write lock
    of the money rules (``PostgresStore.without_lock``)."""
    if isinstance(store, SqliteStore):
        return SqliteStore(journal_path(store.path)), True
    if isinstance(store, PostgresStore):
        return store.without_lock(), False
    return store, False


def open_store(db: str | Path = ":memory:") -> Store:
    """The store ``db`` names: PostgreSQL for a ``postgresql://`` URL, else SQLite (a file, or memory)."""
    if isinstance(db, str) and is_postgres(db):
        return PostgresStore(db)
    return SqliteStore(db)
