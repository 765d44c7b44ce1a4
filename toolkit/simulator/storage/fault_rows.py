"""The rows of the fault plans (``faults``): what ``toolkit.simulator.faults`` asks of the store."""

from __future__ import annotations

from typing import Any

from toolkit.simulator.storage.base import Row, Store


def add(store: Store, values: dict[str, Any]) -> Row:
    """A new plan (target, kind, remaining, seconds, created_at), as stored."""
    return store.insert_row("faults", values)


def active(store: Store) -> list[Row]:
    """The plans not used up, oldest first."""
    return store.all("SELECT * FROM faults WHERE remaining>0 ORDER BY id")


def any_active(store: Store) -> bool:
    return store.one("SELECT 1 AS found FROM faults WHERE remaining>0 LIMIT 1") is not None


def count_active(store: Store) -> int:
    row = store.one("SELECT COUNT(*) AS n FROM faults WHERE remaining>0")
    return int(row["n"]) if row else 0


def oldest_for(store: Store, targets: tuple[str, ...]) -> Row | None:
    """The oldest plan not used up for any of ``targets``."""
    marks = ",".join("?" * len(targets))
    return store.one(f"SELECT * FROM faults WHERE remaining>0 AND target IN ({marks}) ORDER BY id LIMIT 1", targets)


def use_one(store: Store, plan: Row) -> None:
    """One call of ``plan`` used up (the plan gone with its last)."""
    if plan["remaining"] <= 1:
        store.execute("DELETE FROM faults WHERE id=?", (plan["id"],))
    else:
        store.execute("UPDATE faults SET remaining=remaining-1 WHERE id=?", (plan["id"],))


def clear(store: Store) -> int:
    """Every plan forgotten; how many there were."""
    return store.execute("DELETE FROM faults")
