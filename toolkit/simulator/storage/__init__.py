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
    "loads",
    "open_store",
    "row_id",
    "stored_text",
]


def open_store(db: str | Path = ":memory:") -> Store:
    """The store ``db`` names: PostgreSQL for a ``postgresql://`` URL, else SQLite (a file, or memory)."""
    if isinstance(db, str) and is_postgres(db):
        return PostgresStore(db)
    return SqliteStore(db)
