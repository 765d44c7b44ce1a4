"""The rows of the request journal (``journal``): what ``toolkit.simulator.journal`` asks of the store."""

from __future__ import annotations

from typing import Any

from toolkit.simulator.storage.base import Row, Store


def add(store: Store, rows: list[dict[str, Any]]) -> None:
    """Entries (masked already), in a few statements."""
    store.insert_many("journal", rows)


def prune_before(store: Store, at: float) -> int:
    """Entries older than ``at`` gone (a scan: no index on ``at``)."""
    return store.execute("DELETE FROM journal WHERE at < ?", (at,))


def keep_latest(store: Store, size: int) -> int:
    """All but the latest ``size`` entries gone (by their ids: cheap)."""
    return store.execute("DELETE FROM journal WHERE id <= (SELECT MAX(id) FROM journal) - ?", (size,))


def latest(store: Store, limit: int, login: str | None = None) -> list[Row]:
    """The latest ``limit`` entries (of one merchant's ``login``), newest first."""
    if login:
        return store.all("SELECT * FROM journal WHERE login=? ORDER BY id DESC LIMIT ?", (login, limit))
    return store.all("SELECT * FROM journal ORDER BY id DESC LIMIT ?", (limit,))


def clear(store: Store) -> int:
    return store.execute("DELETE FROM journal")
