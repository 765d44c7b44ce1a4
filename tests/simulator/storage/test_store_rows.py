"""``Store.insert_row`` hands back the row as SQLite stored it, whether it builds it or reads it back."""

from __future__ import annotations

from typing import Any

import pytest

from toolkit.simulator.storage.sqlite import SqliteStore

BASE: dict[str, Any] = {
    "login": "gatekit-demo",
    "endpoint_id": "1001",
    "client_orderid": "inv-1",
    "kind": "sale",
    "status": "approved",
    "stage": "sale_approved",
    "plan_status": "none",
    "created_at": 1795432000.25,
    "updated_at": 1795432000.25,
}


@pytest.mark.parametrize(
    "extra",
    [
        {},  # every other column from its default
        {"amount_minor": 1042, "currency": "EUR", "group_id": None},  # stored as given: the row is built
        {"amount_minor": "1042"},  # a text in an INTEGER column: SQLite converts it, the row is read back
        {"amount_minor": 10.0},  # a float in an INTEGER column: converted to 10
        {"amount_minor": float("nan")},  # NaN is stored as NULL
    ],
)
def test_the_row_handed_back_is_the_row_stored(extra: dict[str, Any]) -> None:
    store = SqliteStore()
    for _ in range(2):  # the second insert of a shape takes the cached plan
        row = store.insert_row("transactions", {**BASE, **extra})
        stored = store.one("SELECT * FROM transactions WHERE id=?", (row["id"],))
        assert stored is not None
        assert list(row) == list(stored)  # same columns, in the table's order
        assert {name: (type(value), value) for name, value in row.items()} == {
            name: (type(value), value) for name, value in stored.items()
        }
