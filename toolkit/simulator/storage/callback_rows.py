"""The rows of the callbacks (``callbacks``, ``callback_attempts``): what ``toolkit.simulator.delivery`` asks of the
store, in SQL both databases read.

A row is ``pending`` (due at ``next_at``), ``sending`` (claimed by a process: ``claim`` is ``<process>:<token>``),
``delivered`` or ``failed``.
"""

from __future__ import annotations

from typing import Any

from toolkit.simulator.storage.base import Row, Store


def queue(store: Store, values: dict[str, Any]) -> int:
    """A new pending callback (orderid, login, url, params, next_at, created_at); its id."""
    return store.insert("callbacks", values)


def due(store: Store, now: float) -> list[Row]:
    return store.all("SELECT * FROM callbacks WHERE state='pending' AND next_at<=? ORDER BY next_at, id", (now,))


def claim(store: Store, callback_id: int, token: str) -> bool:
    """The pending row taken for sending by ``token`` (False when another claim came first)."""
    changed = store.execute(
        "UPDATE callbacks SET state='sending', claim=? WHERE id=? AND state='pending'", (token, callback_id)
    )
    return bool(changed)


def unclaim(store: Store, callback_id: int, token: str, *, due_at: float | None = None) -> int:
    """A row ``token`` claimed is pending again (at ``due_at`` when given); how many rows (0: not ours now)."""
    if due_at is None:
        return store.execute("UPDATE callbacks SET state='pending', claim='' WHERE id=? AND claim=?",
                             (callback_id, token))  # fmt: skip
    return store.execute(
        "UPDATE callbacks SET state='pending', next_at=?, claim='' WHERE id=? AND state='sending' AND claim=?",
        (due_at, callback_id, token),
    )


def take_over(store: Store, process: str) -> int:
    """Rows other processes left ``sending`` (they stopped, or died) are pending again; how many."""
    return store.execute(
        "UPDATE callbacks SET state='pending', claim='' WHERE state='sending' AND claim NOT LIKE ?", (f"{process}:%",)
    )


def next_due(store: Store) -> float | None:
    row = store.one("SELECT MIN(next_at) AS t FROM callbacks WHERE state='pending'")
    return row["t"] if row else None


def claimed(store: Store, callback_id: int) -> Row | None:
    """The row's ``state`` and ``claim``."""
    return store.one("SELECT state, claim FROM callbacks WHERE id=?", (callback_id,))


def callback(store: Store, callback_id: int) -> Row | None:
    return store.one("SELECT * FROM callbacks WHERE id=?", (callback_id,))


def add_attempt(store: Store, values: dict[str, Any]) -> int:
    """An attempt's record (callback_id, at, http_status, error, elapsed)."""
    return store.insert("callback_attempts", values)


def update(store: Store, callback_id: int, values: dict[str, Any]) -> int:
    return store.update("callbacks", "id", callback_id, values)


def with_attempts(store: Store, orderid: int | None = None) -> tuple[list[Row], list[Row]]:
    """The callbacks of one order (or of all), oldest first, and their attempts (two queries)."""
    where, args = ("WHERE c.orderid=?", (orderid,)) if orderid is not None else ("", ())
    rows = store.all(f"SELECT c.* FROM callbacks c {where} ORDER BY c.id", args)
    attempts = store.all(
        "SELECT a.callback_id, a.at, a.http_status, a.error, a.elapsed"
        f" FROM callback_attempts a JOIN callbacks c ON a.callback_id=c.id {where} ORDER BY a.id",
        args,
    )
    return rows, attempts


def attempt_count(store: Store, orderid: int) -> int:
    row = store.one(
        "SELECT COUNT(*) AS n FROM callback_attempts a JOIN callbacks c ON a.callback_id=c.id WHERE c.orderid=?",
        (orderid,),
    )
    return int(row["n"]) if row else 0


def waiting(store: Store) -> int:
    """Callbacks not yet delivered nor failed (pending or sending)."""
    row = store.one("SELECT COUNT(*) AS n FROM callbacks WHERE state IN ('pending', 'sending')")
    return int(row["n"]) if row else 0
