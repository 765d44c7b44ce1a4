"""``Store.insert_row`` and ``Store.insert_unless`` hand back the row as the database stored it, whether the store
builds it (the values stored as given, over the table's defaults) or reads it back; in SQLite and in PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.postgres import Cluster, postgres  # noqa: F401  (the fixture)
from toolkit.simulator.storage import order_rows
from toolkit.simulator.storage.base import Store
from toolkit.simulator.storage.postgres import PostgresStore
from toolkit.simulator.storage.schema import FIRST_IDS
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
SHAPES = [
    {},  # every other column from its default
    {"amount_minor": 1042, "currency": "EUR", "group_id": None, "decide_at": None},  # as given: the row is built
    {"amount_minor": "1042"},  # a text in an INTEGER column: the database converts it, the row is read back
    {"amount_minor": 10.0},  # a float in an INTEGER column: converted to 10
    {"card_bin": "411111", "cardholder": "JOHN\x00SMITH"},  # PostgreSQL's text keeps no NUL
]


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    if request.param == "sqlite":
        made: Store = SqliteStore()
    else:
        made = PostgresStore(request.getfixturevalue("postgres").new_database())
    try:
        yield made
    finally:
        made.close()


def _same(row: dict[str, Any], store: Store) -> None:
    stored = store.one("SELECT * FROM transactions WHERE id=?", (row["id"],))
    assert stored is not None
    assert list(row) == list(stored)  # same columns, in the table's order
    assert {name: (type(value), value) for name, value in row.items()} == {
        name: (type(value), value) for name, value in stored.items()
    }


@pytest.mark.parametrize("extra", SHAPES)
def test_the_row_handed_back_is_the_row_stored(store: Store, extra: dict[str, Any]) -> None:
    for _ in range(2):  # the second insert of a shape takes the cached plan
        with store.transaction():
            _same(store.insert_row("transactions", {**BASE, **extra}), store)


def test_sqlite_keeps_nan_as_null() -> None:
    store = SqliteStore()
    _same(store.insert_row("transactions", {**BASE, "amount_minor": float("nan")}), store)


def test_postgresql_reads_an_int_in_a_real_column_back_as_a_float(postgres: Cluster) -> None:  # noqa: F811
    """(SQLite's ``RETURNING *`` hands back the int as given, before the column's affinity makes it a float.)"""
    store = PostgresStore(postgres.new_database())
    try:
        with store.transaction():
            row = store.insert_row("transactions", {**BASE, "created_at": 1795432000})
            _same(row, store)
            assert type(row["created_at"]) is float
    finally:
        store.close()


@pytest.mark.parametrize("extra", SHAPES)
def test_a_new_order_is_written_in_one_step_unless_its_client_orderid_repeats(
    store: Store, extra: dict[str, Any]
) -> None:
    """``Store.insert_unless`` of ``order_rows.order_insert``: the row inserted with the next id as its id and
    orderid; a second order with the same client_orderid finds the first and writes nothing; another merchant's
    does not."""

    def order(login: str, row: dict[str, Any]) -> tuple[Any, Any]:
        return store.insert_unless(order_rows.order_insert(row, login, "inv-1", ("sale", "preauth")))

    with store.transaction():
        repeated, first = order("gatekit-demo", {**BASE, **extra})
        assert repeated is None and first is not None
        assert first["id"] == first["orderid"] == FIRST_IDS["transactions"]
        _same(first, store)
        assert order("gatekit-demo", {**BASE, **extra}) == (first["id"], None)
        other, second = order("other", {**BASE, "login": "other"})
        assert other is None and second is not None and second["id"] == second["orderid"] > first["id"]
        _same(second, store)
    count = store.one("SELECT COUNT(*) AS n FROM transactions")
    assert count is not None and count["n"] == 2
