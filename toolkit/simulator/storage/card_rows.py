"""The rows of stored cards and subscriptions (``card_refs``, ``recurring``): what ``rules.cards`` asks of the store.

A stored card is BIN, last four, type, expiry and holder: never the whole number, never a CVV2.
"""

from __future__ import annotations

from typing import Any

from toolkit.simulator.storage.base import Row, Store


def ref_of(store: Store, source_tx: int) -> int | None:
    """The card reference already made of transaction ``source_tx``."""
    row = store.one("SELECT cardrefid FROM card_refs WHERE source_tx=?", (source_tx,))
    return int(row["cardrefid"]) if row else None


def add_ref(store: Store, values: dict[str, Any]) -> int:
    """A new card reference (login, source_tx, bin, last4, card_type, exp_month, exp_year, holder, created_at)."""
    return store.insert("card_refs", values)


def ref(store: Store, cardrefid: int, login: str) -> Row | None:
    """The merchant's card reference (another merchant's is none)."""
    return store.one("SELECT * FROM card_refs WHERE cardrefid=? AND login=?", (cardrefid, login))


def add_subscription(store: Store, values: dict[str, Any]) -> int:
    return store.insert("recurring", values)


def due_subscriptions(store: Store, now: float) -> list[Row]:
    return store.all("SELECT * FROM recurring WHERE state='active' AND next_at<=?", (now,))


def update_subscription(store: Store, subscription_id: int, values: dict[str, Any]) -> int:
    return store.update("recurring", "id", subscription_id, values)


def next_subscription_due(store: Store) -> float | None:
    row = store.one("SELECT MIN(next_at) AS t FROM recurring WHERE state='active'")
    return row["t"] if row else None
