"""Which store a ``--db`` names: ``postgresql://...`` (``toolkit.simulator.pgstore``), else SQLite (file or memory)."""

from __future__ import annotations

from pathlib import Path

from toolkit.simulator.pgstore import PostgresStore, is_postgres
from toolkit.simulator.store import Store


def open_store(db: str | Path = ":memory:") -> Store:
    """The store ``db`` names (the PostgreSQL one has the same interface: duck-typed, no subclass)."""
    if isinstance(db, str) and is_postgres(db):
        return PostgresStore(db)  # type: ignore[return-value]
    return Store(db)
