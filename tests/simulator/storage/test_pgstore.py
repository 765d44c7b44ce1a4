"""The simulator's store in PostgreSQL (``--db postgresql://...``): the statements both stores read, the schema
versioned and migrated forward, the gateway's whole API answered from it, and ``--reset``."""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal

from tests.postgres import Cluster, postgres  # noqa: F401  (the fixture)
from toolkit.client import GatewayClient
from toolkit.models import Status
from toolkit.simulator import SimulatorServer
from toolkit.simulator.storage.postgres import SCHEMA_VERSION, PostgresStore
from toolkit.simulator.storage.schema import FIRST_IDS
from toolkit.simulator.storage.sqlite import SqliteStore
from toolkit.testdata import preauth_fields, sale_fields


def test_both_stores_take_the_one_wording_of_a_statement(postgres: Cluster) -> None:  # noqa: F811
    """The storage wing's statements are written once: ``?`` parameters, ``ON CONFLICT DO NOTHING``, each store's
    next id; a literal ``%`` stays one on PostgreSQL."""
    for store in (SqliteStore(), PostgresStore(postgres.new_database())):
        try:
            with store.transaction():
                statement = "INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT DO NOTHING"
                assert (store.count(statement, ("k", "1")), store.count(statement, ("k", "2"))) == (1, 0)
                assert store.one("SELECT value FROM meta WHERE name=? AND value LIKE '1%'", ("k",)) == {"value": "1"}
                first = store.one(f"SELECT {store.next_id_expression('transactions')} AS id")
            assert first is not None and first["id"] == FIRST_IDS["transactions"]
        finally:
            store.close()


def test_the_simulator_answers_from_postgresql_and_keeps_its_ids(postgres: Cluster):  # noqa: F811
    url = postgres.new_database()
    with SimulatorServer(db=url) as server, GatewayClient(server.client_config()) as client, \
            server.control() as control:  # fmt: skip
        order = client.preauth(preauth_fields(amount=Decimal("30.00")))
        assert int(order.orderid) == 8056020  # the sequences start where the SQLite store's ids do
        assert client.wait_for_final_status(order).status is Status.APPROVED
        capture = client.capture({"client_orderid": order.client_orderid, "orderid": order.orderid},
                                 amount=Decimal("10.00"), currency="EUR")  # fmt: skip
        assert client.wait_for_final_status(capture).amount == Decimal("10.00")
        control.advance_clock(3600)
        assert control.health()["now"] > 0
        sale = client.sale(sale_fields())
        assert client.wait_for_final_status(sale).status is Status.APPROVED
    with SimulatorServer(db=url) as again, GatewayClient(again.client_config()) as client:  # a restart keeps it
        status = client.status({"client_orderid": order.client_orderid, "orderid": order.orderid})
        assert status.orderid == order.orderid


def test_an_earlier_schema_is_migrated_forward(postgres: Cluster):  # noqa: F811
    import psycopg

    url = postgres.new_database()
    PostgresStore(url).close()
    with psycopg.connect(url, autocommit=True) as conn:  # as gatekit's first PostgreSQL schema left it
        conn.execute("ALTER TABLE callbacks DROP COLUMN claim")
        conn.execute("UPDATE gatekit_schema SET version=1")
    store = PostgresStore(url)
    try:
        assert store.one("SELECT version FROM gatekit_schema") == {"version": SCHEMA_VERSION}
        assert store.all("SELECT claim FROM callbacks") == []
    finally:
        store.close()


def test_reset_empties_the_shared_store(postgres: Cluster):  # noqa: F811
    url = postgres.new_database()
    with SimulatorServer(db=url) as server, GatewayClient(server.client_config()) as client:
        client.sale(sale_fields())
    done = subprocess.run([sys.executable, "-m", "toolkit.cli", "simulate", "--db", url, "--reset"],
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0 and "emptied" in done.stdout, done.stdout + done.stderr
    store = PostgresStore(url)
    try:
        assert store.one("SELECT COUNT(*) AS n FROM transactions") == {"n": 0}
        assert store.next_id("transactions") == 8056020
    finally:
        store.close()


def test_a_database_that_cannot_be_reached_is_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "toolkit.cli", "simulate", "--port", "0",
                           "--db", "postgresql://nobody:secret@127.0.0.1:1/none"],
                          capture_output=True, text=True, timeout=90, check=False)  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("gatekit simulate: database postgresql://nobody:***@127.0.0.1:1/none")
    assert "secret" not in done.stderr and "Traceback" not in done.stderr


def test_the_pool_leaves_the_global_random_state_alone(postgres: Cluster):  # noqa: F811
    """psycopg_pool's jitter (each new connection's lifetime) comes from a generator of its own: opening a store and
    growing its pool does not move the ``random`` module's state (a merchant's seeded tests, hypothesis's draws)."""
    import random
    import threading

    before = random.getstate()
    store = PostgresStore(postgres.new_database())
    try:
        slow = lambda: store.one("SELECT pg_sleep(0.2) AS slept")  # noqa: E731
        threads = [threading.Thread(target=slow) for _ in range(6)]  # (six at once: the pool grows)
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    finally:
        store.close()
    assert random.getstate() == before
