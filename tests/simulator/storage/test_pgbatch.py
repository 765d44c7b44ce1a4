"""Group commit on PostgreSQL (``batch.Batcher`` with ``postgres.PostgresStore``, issue 39): the sales a simulator
answers on its loop are written together, one transaction (and one wait for the write lock) for those that arrive
together, each in its own savepoint, on the loop's own connection.

What must hold, as on a SQLite file: every write of a batch is done once and answered with its own outcome; a write
that fails (a refusal, or a statement the database refuses) is undone alone, the others kept; on the loop, a write
transaction that would wait for another process's lock writes nothing and says ``StoreBusy``; the batch is written
once the lock is let go; the repeat check of a later sale of a batch sees the earlier ones.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import pytest
from anyio import CapacityLimiter

from tests.postgres import Cluster, postgres  # noqa: F401  (the fixture)
from toolkit.client import GatewayClient
from toolkit.errors import ApiError
from toolkit.simulator import SimulatorServer
from toolkit.simulator.rules.errors import SimError
from toolkit.simulator.storage import StoreBusy, serving
from toolkit.simulator.storage.batch import Batcher
from toolkit.simulator.storage.postgres import LOCK_KEY, PostgresStore
from toolkit.testdata import EXAMPLE_CARDS, sale_fields


@pytest.fixture
def store(postgres: Cluster) -> Iterator[PostgresStore]:  # noqa: F811
    opened = PostgresStore(postgres.new_database())
    yield opened
    opened.close()


@contextmanager
def another_process_writing(store: PostgresStore) -> Iterator[None]:
    """The write lock held by another session (as another worker's transaction holds it) for the block."""
    import psycopg

    with psycopg.connect(store.path, autocommit=True) as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        yield


def _insert(store: PostgresStore, name: str, then: Callable[[], None] | None = None) -> Callable[[], str]:
    def write() -> str:
        with store.transaction():
            store.execute("INSERT INTO meta (name, value) VALUES (?, ?)", (name, "1"))
            if then is not None:
                then()
        return name

    return write


async def _together(batcher: Batcher, writes: list[Callable[[], Any]]) -> list[Any]:
    limiter = CapacityLimiter(2)
    return await asyncio.gather(*(batcher.submit(write, limiter) for write in writes), return_exceptions=True)


def _names(store: PostgresStore) -> set[str]:
    return {row["name"] for row in store.all("SELECT name FROM meta")}


def test_writes_submitted_together_are_one_batch_and_each_gets_its_outcome(store: PostgresStore):
    batcher = Batcher(store)
    outcomes = asyncio.run(_together(batcher, [_insert(store, f"k{n}") for n in range(5)]))
    assert outcomes == ["k0", "k1", "k2", "k3", "k4"]
    assert (batcher.batches, batcher.writes) == (1, 5)
    assert {f"k{n}" for n in range(5)} <= _names(store)


def test_a_refused_write_and_a_refused_statement_are_undone_alone(store: PostgresStore):
    ran: list[str] = []

    def refuse() -> None:
        store.after_commit(lambda: ran.append("refused"))
        raise SimError("client_orderid: another card")

    writes = [
        _insert(store, "a", lambda: store.after_commit(lambda: ran.append("a"))),
        _insert(store, "refused", refuse),
        _insert(store, "a"),  # the database refuses it: a second row with the key "a"
        _insert(store, "b"),
    ]
    outcomes = asyncio.run(_together(Batcher(store), writes))
    assert outcomes[0] == "a" and outcomes[3] == "b"
    assert isinstance(outcomes[1], SimError) and "another card" in str(outcomes[1])
    assert "duplicate key" in str(outcomes[2])
    names = _names(store)
    assert {"a", "b"} <= names and "refused" not in names
    assert ran == ["a"]


def test_on_the_loop_a_write_that_would_wait_for_another_process_writes_nothing(store: PostgresStore):
    with another_process_writing(store), store.without_waiting(), pytest.raises(StoreBusy):
        _insert(store, "never")()
    assert "never" not in _names(store)
    with store.without_waiting():  # the lock let go: the loop writes, and reads, on its own connection
        assert _insert(store, "now")() == "now"
        assert store.one("SELECT name FROM meta WHERE name=?", ("now",)) == {"name": "now"}


def test_on_the_loop_a_refused_lock_keeps_the_statements_the_connection_prepared(store: PostgresStore):
    """psycopg forgets (``DEALLOCATE ALL``) what it prepared when it sees a ``ROLLBACK``: a refused lock commits its
    empty transaction instead, so the loop's hot statements stay prepared on the database."""

    def prepared() -> int:
        row = store.one("SELECT COUNT(*) AS n FROM pg_prepared_statements")
        assert row is not None
        return int(row["n"])

    with store.without_waiting():
        for n in range(8):  # (psycopg prepares a statement on its fifth run)
            _insert(store, f"p{n}")()
        before = prepared()
    assert before > 0
    with another_process_writing(store), store.without_waiting(), pytest.raises(StoreBusy):
        _insert(store, "never")()
    with store.without_waiting():
        assert prepared() >= before


def test_a_batch_refused_the_lock_is_written_once_it_is_let_go(store: PostgresStore):
    async def scenario() -> tuple[list[Any], bool]:
        batcher = Batcher(store)
        with another_process_writing(store):
            pending = asyncio.ensure_future(_together(batcher, [_insert(store, "freed")]))
            deadline = asyncio.get_running_loop().time() + 10
            while batcher.watcher is None:  # refused once: the watcher waits for the lock
                assert asyncio.get_running_loop().time() < deadline, "the batch never found the lock taken"
                await asyncio.sleep(0)
            waited = not pending.done()
        try:
            return await asyncio.wait_for(pending, 10), waited
        finally:
            batcher.close()

    outcomes, waited = asyncio.run(scenario())
    assert waited and outcomes == ["freed"]
    assert "freed" in _names(store)


@pytest.fixture
def pg_server(postgres: Cluster) -> Iterator[SimulatorServer]:  # noqa: F811
    with SimulatorServer(db=postgres.new_database()) as running:
        yield running


def test_sales_sent_together_over_http_each_make_one_order_through_the_batch(pg_server: SimulatorServer):
    with GatewayClient(pg_server.client_config()) as client, ThreadPoolExecutor(16) as pool:
        acks = list(pool.map(lambda _: client.sale(sale_fields()), range(48)))
    assert len({ack.orderid for ack in acks}) == 48
    rows = pg_server.store.all("SELECT COUNT(*) AS n FROM transactions WHERE kind='sale'")
    assert rows[0]["n"] == 48
    batcher = serving.batcher_of(pg_server.store)
    assert batcher is not None and 1 <= batcher.writes <= 48 and batcher.batches <= batcher.writes


def test_repeats_of_one_client_orderid_sent_together_make_one_order(pg_server: SimulatorServer):
    fields = sale_fields()
    other = {**fields, "credit_card_number": next(c for c in EXAMPLE_CARDS if c != fields["credit_card_number"])}
    with GatewayClient(pg_server.client_config()) as client, ThreadPoolExecutor(12) as pool:

        def send(body: dict[str, str]) -> object:
            try:
                return client.sale(body).orderid
            except ApiError as error:
                return error

        answers = list(pool.map(send, [fields] * 6 + [other] * 6))
    made = {answer for answer in answers if isinstance(answer, str)}
    refused = [answer for answer in answers if isinstance(answer, ApiError)]
    assert len(made) == 1
    orderid = made.pop()
    assert len(refused) == 6 and all(f"already names orderid {orderid}" in str(error) for error in refused)
    count = pg_server.store.one(
        "SELECT COUNT(*) AS n FROM transactions WHERE client_orderid=? AND kind='sale'", (fields["client_orderid"],)
    )
    assert count == {"n": 1}
