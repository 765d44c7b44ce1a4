"""The simulator's storage wing: SQLite (``sqlite``: a file or memory) and PostgreSQL (``postgres``), group commit
(``batch``) and checkpoints; ``open_store`` chooses the store a ``--db`` names.  It imports neither the rules nor
the web wing."""

from __future__ import annotations

from pathlib import Path

from toolkit.simulator.storage.postgres import PostgresStore, is_postgres
from toolkit.simulator.storage.sqlite import Store


def open_store(db: str | Path = ":memory:") -> Store:
    """The store ``db`` names (the PostgreSQL one has the same interface: duck-typed, no subclass)."""
    if isinstance(db, str) and is_postgres(db):
        return PostgresStore(db)  # type: ignore[return-value]
    return Store(db)
