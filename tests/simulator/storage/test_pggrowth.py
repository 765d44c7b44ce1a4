"""A new PostgreSQL database's tables analyzed as they grow (``pggrowth``): the plans PostgreSQL keeps for prepared
statements are made again once a table has grown, not left as the sequential scans planned while it was empty
(the scheduler's ``next_due`` read every row of ``transactions`` 20 times a second until autovacuum came by)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.postgres import Cluster, postgres  # noqa: F401  (the fixture)
from tests.simulator.storage.test_store_rows import BASE
from toolkit.simulator.storage import order_rows
from toolkit.simulator.storage.pggrowth import GROWTH, Growth
from toolkit.simulator.storage.postgres import PostgresStore


def test_a_table_is_analyzed_once_at_each_step_of_its_growth():
    analyzed: list[str] = []
    done = threading.Event()

    def analyze(table: str) -> None:
        analyzed.append(table)
        done.set()

    growth = Growth(analyze)
    growth.inserted("transactions", GROWTH[0] - 1)
    growth.inserted("journal", 5)
    growth.settled()
    assert analyzed == []
    growth.inserted("transactions")  # the first step reached
    assert done.wait(10)
    growth.inserted("transactions", GROWTH[1] - GROWTH[0] - 1)  # not yet the next one
    growth.inserted("transactions", GROWTH[2])  # past two steps at once: one ANALYZE
    growth.settled()
    assert analyzed == ["transactions", "transactions"]


def test_an_analyze_that_fails_is_left_to_autovacuum():
    def analyze(table: str) -> None:
        raise RuntimeError("the database does not answer")

    growth = Growth(analyze)
    growth.inserted("transactions", GROWTH[0])
    growth.settled()  # (no exception out of the thread, nothing to wait for)


@pytest.fixture
def store(postgres: Cluster) -> Iterator[PostgresStore]:  # noqa: F811
    opened = PostgresStore(postgres.new_database())
    yield opened
    opened.close()


def _plan(conn: Any) -> str:
    return "\n".join(row[0] for row in conn.execute("EXPLAIN EXECUTE due").fetchall())


def test_a_plan_prepared_on_the_empty_table_is_made_again_once_it_has_grown(store: PostgresStore):
    """``next_due`` prepared on the empty table scans it; after the store has inserted ``GROWTH[0]`` orders (one
    statement, as the journal's lines are), the same prepared statement uses the indexes."""
    import psycopg

    with psycopg.connect(store.path, autocommit=True) as conn:
        conn.execute(f"PREPARE due AS {order_rows.NEXT_DUE}")
        assert "Seq Scan on transactions" in _plan(conn)  # (planned for a table with no rows)
        rows = [{**BASE, "id": n, "orderid": n, "client_orderid": f"inv-{n}", "settle_at": 1795432000.0 + n}
                for n in range(1, GROWTH[0] + 1)]  # fmt: skip
        store.insert_many("transactions", rows)
        store.growth.settled(timeout=30)
        plan = _plan(conn)
    assert "Seq Scan" not in plan, plan
    assert "tx_settle" in plan, plan
