"""A new PostgreSQL database's tables analyzed as they grow (``pggrowth``): the plans PostgreSQL keeps for prepared
statements are made again once a table has grown, not left as the sequential scans planned while it was empty
(the scheduler's ``next_due`` read every row of ``transactions`` 20 times a second until autovacuum came by)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.postgres import Cluster, postgres  # noqa: F401  (the fixture)
from tests.simulator.storage.test_store_rows import BASE
from toolkit.simulator.storage import order_rows
from toolkit.simulator.storage.pggrowth import GROWTH, LOOK_EVERY, Growth, Size
from toolkit.simulator.storage.postgres import PostgresStore


class Table:
    """A table as ``Growth`` sees it, with rows other processes insert too."""

    def __init__(self) -> None:
        self.live, self.analyzed, self.looks = 0, -1, 0
        self.analyses: list[int] = []

    def size(self, table: str) -> Size:
        self.looks += 1
        return Size(self.analyzed, self.live)

    def analyze(self, table: str) -> None:
        self.analyzed = self.live
        self.analyses.append(self.live)


def test_a_table_is_analyzed_once_at_each_step_of_its_growth():
    table = Table()
    growth = Growth(table.size, table.analyze)

    def insert(rows: int) -> None:
        table.live += rows
        growth.inserted("transactions", rows)
        growth.settled()

    insert(GROWTH[0] - 1)
    insert(LOOK_EVERY)  # the first step reached
    insert(GROWTH[1] - table.live - 1)  # not yet the next one
    assert table.analyses == [GROWTH[0] - 1 + LOOK_EVERY]
    insert(GROWTH[2])  # past two steps at once: one ANALYZE
    assert table.analyses == [GROWTH[0] - 1 + LOOK_EVERY, GROWTH[1] + GROWTH[2] - 1]
    looks = table.looks
    insert(GROWTH[2])  # past the last step: never looked at again
    assert table.looks == looks


def test_the_rows_other_processes_insert_count_and_a_far_step_is_looked_at_rarely():
    table = Table()
    growth = Growth(table.size, table.analyze)
    table.live = GROWTH[0] + 500  # (inserted by other processes: this one has inserted none)
    growth.inserted("transactions", LOOK_EVERY - 1)
    growth.settled()
    assert table.looks == 0  # (fewer rows than LOOK_EVERY: not looked at)
    growth.inserted("transactions")
    growth.settled()
    assert table.analyses == [GROWTH[0] + 500]
    for _ in range(10):  # 1,000 rows of this process's: the next step, 10,000, is far
        growth.inserted("transactions", LOOK_EVERY)
        growth.settled()
    assert table.looks == 1  # (the next look after a quarter of the rows still missing: 2,125 of this process's)
    growth.inserted("transactions", LOOK_EVERY + 2_125 - 1_100)
    growth.settled()
    assert table.looks == 2


def test_an_analyze_that_fails_is_left_to_autovacuum_or_the_next_look():
    looks = []

    def size(table: str) -> Size:
        looks.append(table)
        raise RuntimeError("the database does not answer")

    growth = Growth(size, lambda table: None)
    growth.inserted("transactions", GROWTH[0])
    growth.settled()  # (no exception out of the thread)
    growth.inserted("transactions", LOOK_EVERY)
    growth.settled()
    assert looks == ["transactions", "transactions"]


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


def test_the_rows_other_processes_inserted_count_towards_the_first_analyze(store: PostgresStore):
    """Another process (a connection of the test's) inserts 1,000 orders, then this store 100: the table is analyzed
    by this store, which has not inserted 1,000 itself (when each process counted its own rows only, two workers
    analyzed it first at about 2,000)."""
    import psycopg

    with psycopg.connect(store.path, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO transactions (id, orderid, login, endpoint_id, client_orderid, kind, status, stage,"
            " plan_status, created_at, updated_at) SELECT n, n, 'gatekit-demo', '1001', 'other-' || n, 'sale',"
            " 'approved', 'sale_approved', 'none', 1795432000.25, 1795432000.25 FROM generate_series(100001, 101000) n"
        )
        conn.execute("SELECT pg_stat_force_next_flush()")  # (the statistics sent when this connection is idle)
        deadline = time.monotonic() + 30
        while conn.execute(LIVE).fetchone()[0] < GROWTH[0]:  # type: ignore[index]
            assert time.monotonic() < deadline, "the statistics never counted the other process's rows"
            conn.execute("SELECT pg_stat_clear_snapshot()")
        assert conn.execute(ANALYZED).fetchone()[0] == -1  # type: ignore[index]
        rows = [{**BASE, "id": n, "orderid": n, "client_orderid": f"inv-{n}"} for n in range(1, LOOK_EVERY + 1)]
        store.insert_many("transactions", rows)
        store.growth.settled(timeout=30)
        assert conn.execute(ANALYZED).fetchone()[0] >= GROWTH[0]  # type: ignore[index]


LIVE = "SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'transactions'"
ANALYZED = "SELECT reltuples FROM pg_class WHERE relname = 'transactions'"
