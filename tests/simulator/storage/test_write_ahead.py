"""A batch's new orders written ahead on PostgreSQL (``PostgresStore.write_ahead``, issue 39): the leading sales of a
batch are inserted in one statement, and each sale's write then takes its own row with no round trip.

What must hold is what holds without it: each write's order as it would have been made (the row handed back is the
row stored, its id and orderid the next id), a repeat check that sees the earlier sales of the batch, and nothing
kept of a write that failed: the row written ahead for it is undone whether it failed after taking it or before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from anyio import CapacityLimiter

from tests.postgres import Cluster, postgres  # noqa: F401  (the fixture)
from tests.simulator.storage.test_store_rows import BASE
from toolkit.simulator.storage import order_rows
from toolkit.simulator.storage.base import Insert
from toolkit.simulator.storage.batch import Batcher
from toolkit.simulator.storage.postgres import PostgresStore

KINDS = ("sale", "preauth")


@pytest.fixture
def store(postgres: Cluster) -> Iterator[PostgresStore]:  # noqa: F811
    opened = PostgresStore(postgres.new_database())
    yield opened
    opened.close()


@pytest.fixture
def together(store: PostgresStore, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of inserts in each insert statement (``_insert_together``: a write's own makes one)."""
    made: list[int] = []
    real = store._insert_together

    def counted(run: list[Any]) -> Any:
        made.append(len(run))
        return real(run)

    monkeypatch.setattr(store, "_insert_together", counted)
    return made


def _sale(client_orderid: str, **extra: Any) -> Insert:
    return order_rows.order_insert({**BASE, "client_orderid": client_orderid, **extra}, "gatekit-demo",
                                   client_orderid, KINDS)  # fmt: skip


def _write(store: PostgresStore, insert: Insert, then: Callable[[], None] | None = None) -> Callable[[], Any]:
    """A sale's write as the engine makes it: its insert (with the same values), then whatever follows."""

    def write() -> Any:
        with store.transaction():
            again = order_rows.order_insert(dict(insert.values), "gatekit-demo", insert.params[1], KINDS)
            repeated, row = store.insert_unless(again)
            if then is not None:
                then()
        return repeated if row is None else row

    return write


async def _batch(batcher: Batcher, writes: list[tuple[Callable[[], Any], Insert | None]]) -> list[Any]:
    limiter = CapacityLimiter(2)
    return await asyncio.gather(*(batcher.submit(w, limiter, ahead) for w, ahead in writes), return_exceptions=True)


def _stored(store: PostgresStore) -> dict[str, dict[str, Any]]:
    return {row["client_orderid"]: row for row in store.all("SELECT * FROM transactions ORDER BY id")}


def test_the_leading_sales_are_inserted_in_one_statement_and_each_takes_its_own_row(
    store: PostgresStore, together: list[int]
) -> None:
    inserts = [_sale(f"inv-{n}", amount_minor=100 + n, currency="EUR") for n in range(5)]
    batcher = Batcher(store)
    outcomes = asyncio.run(_batch(batcher, [(_write(store, insert), insert) for insert in inserts]))
    assert together == [5] and batcher.batches == 1  # (one statement for the five; no insert of their own)
    stored = _stored(store)
    assert list(stored) == [f"inv-{n}" for n in range(5)]
    for n, row in enumerate(outcomes):
        assert row == stored[f"inv-{n}"] and row["id"] == row["orderid"]  # the row handed back is the row stored
        assert [(type(v), v) for v in row.values()] == [(type(v), v) for v in stored[f"inv-{n}"].values()]
    assert [row["id"] for row in outcomes] == sorted(row["id"] for row in outcomes)  # in the order they came


def test_a_repeat_in_the_batch_is_left_to_its_write_and_finds_the_earlier_sale(
    store: PostgresStore, together: list[int]
) -> None:
    """The run written ahead ends before a sale whose key an earlier sale of the batch has: its write finds it."""
    inserts = [_sale("inv-a"), _sale("inv-b"), _sale("inv-a"), _sale("inv-c")]
    outcomes = asyncio.run(_batch(Batcher(store), [(_write(store, insert), insert) for insert in inserts]))
    assert together == [2, 1, 1]  # inv-a and inv-b ahead; the repeat and what follows make their own
    first = outcomes[0]
    assert isinstance(first, dict) and outcomes[2] == first["id"]  # the repeat check found the first inv-a
    assert sorted(_stored(store)) == ["inv-a", "inv-b", "inv-c"]


def test_an_order_that_exists_is_found_by_the_statement_and_nothing_is_written(store: PostgresStore) -> None:
    with store.transaction():
        repeated, before = store.insert_unless(_sale("inv-old"))
    assert repeated is None and before is not None
    inserts = [_sale("inv-new"), _sale("inv-old")]
    outcomes = asyncio.run(_batch(Batcher(store), [(_write(store, insert), insert) for insert in inserts]))
    assert outcomes[1] == before["id"]
    assert sorted(_stored(store)) == ["inv-new", "inv-old"]


def test_a_write_that_fails_keeps_nothing_whether_it_took_its_row_or_not(
    store: PostgresStore, together: list[int]
) -> None:
    """One write fails after taking its row, another before taking it: both rows are undone, the others kept."""

    def refuse() -> None:
        raise ValueError("refused after its insert")

    def fails_first() -> Any:
        raise ValueError("refused before its insert")

    inserts = [_sale(f"inv-{n}") for n in range(4)]
    writes = [
        (_write(store, inserts[0]), inserts[0]),
        (_write(store, inserts[1], then=refuse), inserts[1]),
        (fails_first, inserts[2]),
        (_write(store, inserts[3]), inserts[3]),
    ]
    outcomes = asyncio.run(_batch(Batcher(store), writes))
    assert together == [4]  # (all four written ahead)
    assert [type(outcome) for outcome in outcomes] == [dict, ValueError, ValueError, dict]
    assert sorted(_stored(store)) == ["inv-0", "inv-3"]


def test_a_write_that_inserts_other_values_than_it_said_gets_its_own_row(
    store: PostgresStore, together: list[int]
) -> None:
    said = [_sale("inv-0", amount_minor=50), _sale("inv-1", amount_minor=100)]  # (one shape: written together)
    written = [said[0], _sale("inv-1", amount_minor=200)]
    outcomes = asyncio.run(_batch(Batcher(store), [(_write(store, w), s) for w, s in zip(written, said, strict=True)]))
    assert together == [2, 1]  # the ahead of inv-1 undone, its own insert made
    stored = _stored(store)
    assert sorted(stored) == ["inv-0", "inv-1"] and stored["inv-1"]["amount_minor"] == 200
    assert outcomes[1] == stored["inv-1"]


def test_a_write_that_inserts_other_values_and_then_fails_keeps_nothing(store: PostgresStore) -> None:
    """The row written ahead for it is undone when its values differ; the write then fails: its own row is rolled
    back with its savepoint, and so is the undoing, so the row written ahead is undone again."""

    def refuse() -> None:
        raise ValueError("refused after its insert")

    said = [_sale("inv-0", amount_minor=50), _sale("inv-1", amount_minor=100)]
    written = _sale("inv-1", amount_minor=200)
    outcomes = asyncio.run(_batch(Batcher(store), [(_write(store, said[0]), said[0]),
                                                   (_write(store, written, then=refuse), said[1])]))  # fmt: skip
    assert [type(outcome) for outcome in outcomes] == [dict, ValueError]
    assert sorted(_stored(store)) == ["inv-0"]
