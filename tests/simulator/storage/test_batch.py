"""Group commit (``toolkit.simulator.storage.batch``): the sales a SQLite-file simulator answers on its loop are written
together, one transaction for those that arrive together, each in its own savepoint.

What must hold: every write of a batch is done once and answered with its own outcome; a write that fails is
undone alone (with what it left for after the commit), the others are kept; the repeat check of a later sale of
the batch sees the earlier ones; a batch that would wait for the lock is written in a thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from anyio import CapacityLimiter

from tests.simulator.storage.test_store_on_loop import another_process_writing
from toolkit.client import GatewayClient
from toolkit.errors import ApiError
from toolkit.simulator import SimulatorServer
from toolkit.simulator.rules.errors import SimError
from toolkit.simulator.storage import Store, batch, serving
from toolkit.simulator.storage.batch import Batcher
from toolkit.simulator.storage.sqlite import SqliteStore
from toolkit.testdata import EXAMPLE_CARDS, sale_fields


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = SqliteStore(tmp_path / "batch.db")
    yield opened
    opened.close()


def _count_transactions(store: Store) -> list[int]:
    """Counts the outermost transactions the store begins (a nested one joins its caller's)."""
    begun = [0]
    transaction = store.transaction

    def counting() -> Any:
        if not store._db.in_transaction:
            begun[0] += 1
        return transaction()

    store.transaction = counting  # type: ignore[method-assign]
    return begun


def _insert(store: Store, name: str, then: Callable[[], None] | None = None) -> Callable[[], str]:
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


def test_writes_submitted_together_are_one_transaction_and_each_gets_its_outcome(store: Store):
    begun = _count_transactions(store)
    outcomes = asyncio.run(_together(Batcher(store), [_insert(store, f"k{n}") for n in range(5)]))
    assert outcomes == ["k0", "k1", "k2", "k3", "k4"]
    assert begun == [1]
    assert [row["name"] for row in store.all("SELECT name FROM meta WHERE name LIKE 'k%' ORDER BY name")] == outcomes


def test_a_failing_write_is_undone_alone_with_its_after_commit_actions(store: Store):
    ran: list[str] = []

    def refuse() -> None:
        store.after_commit(lambda: ran.append("refused"))
        raise SimError("client_orderid: another card")

    writes = [
        _insert(store, "a", lambda: store.after_commit(lambda: ran.append("a"))),
        _insert(store, "refused", refuse),
        _insert(store, "b"),
    ]
    outcomes = asyncio.run(_together(Batcher(store), writes))
    assert outcomes[0] == "a" and outcomes[2] == "b"
    assert isinstance(outcomes[1], SimError) and "another card" in str(outcomes[1])
    names = {row["name"] for row in store.all("SELECT name FROM meta")}
    assert {"a", "b"} <= names and "refused" not in names
    assert ran == ["a"]


def test_a_batch_asks_again_on_the_loop_while_another_process_writes(store: Store, tmp_path: Path, monkeypatch):
    # (the time limit is the next test's subject: on a loaded machine the 20 turns below took more than its 5 ms,
    # and the batch went to a thread as it should then; found once in 12 full runs at -n 3)
    monkeypatch.setattr(batch, "LOOP_RETRIES_FOR", 3600.0)

    async def scenario() -> tuple[list[Any], bool, int]:
        batcher = Batcher(store)
        with another_process_writing(tmp_path / "batch.db"):
            pending = asyncio.ensure_future(_together(batcher, [_insert(store, "soon")]))
            for _ in range(20):  # the loop turns while the batch waits
                await asyncio.sleep(0)
            waited, threads = not pending.done(), batcher.writing_in_threads
        try:
            return await pending, waited, threads
        finally:
            batcher.close()

    outcomes, waited, threads = asyncio.run(scenario())
    assert waited and threads == 0 and outcomes == ["soon"]
    assert store.one("SELECT name FROM meta WHERE name='soon'") is not None


def test_a_batch_that_waits_longer_for_the_lock_waits_in_a_thread(store: Store, tmp_path: Path):
    async def scenario() -> tuple[list[Any], int]:
        batcher = Batcher(store)
        with another_process_writing(tmp_path / "batch.db"):
            pending = asyncio.ensure_future(_together(batcher, [_insert(store, "late")]))
            deadline = asyncio.get_running_loop().time() + 10
            while not batcher.writing_in_threads:  # past LOOP_RETRIES_FOR, the batch goes to a thread
                assert asyncio.get_running_loop().time() < deadline, "the batch never went to a thread"
                await asyncio.sleep(0.0005)
            threads = batcher.writing_in_threads
            assert not pending.done()
        try:
            return await pending, threads
        finally:
            batcher.close()

    outcomes, threads = asyncio.run(scenario())
    assert threads == 1 and outcomes == ["late"]
    assert store.one("SELECT name FROM meta WHERE name='late'") is not None


def test_a_batch_is_written_on_the_loop_the_moment_the_lock_is_let_go(store: Store, tmp_path: Path, monkeypatch):
    monkeypatch.setattr(batch, "LOOP_RETRIES_FOR", 3600.0)  # (the loop would otherwise ask again on its own)

    async def scenario() -> tuple[list[Any], int]:
        batcher = Batcher(store)
        with another_process_writing(tmp_path / "batch.db"):
            pending = asyncio.ensure_future(_together(batcher, [_insert(store, "freed")]))
            deadline = asyncio.get_running_loop().time() + 10
            while batcher.watcher is None:  # refused once: the watcher waits for the lock
                assert asyncio.get_running_loop().time() < deadline, "the batch never found the lock taken"
                await asyncio.sleep(0)
            assert not pending.done()
        try:  # let go: the watcher tells the loop, which writes the batch itself
            return await asyncio.wait_for(pending, 10), batcher.writing_in_threads
        finally:
            batcher.close()

    outcomes, threads = asyncio.run(scenario())
    assert outcomes == ["freed"] and threads == 0
    assert store.one("SELECT name FROM meta WHERE name='freed'") is not None


def test_close_stops_the_watcher(store: Store, tmp_path: Path):
    async def scenario() -> Any:
        batcher = Batcher(store)
        with another_process_writing(tmp_path / "batch.db"):
            pending = asyncio.ensure_future(_together(batcher, [_insert(store, "x")]))
            while batcher.watcher is None:
                await asyncio.sleep(0)
            watcher = batcher.watcher
        await pending
        batcher.close()
        return watcher

    watcher = asyncio.run(scenario())
    assert not watcher.running


@pytest.fixture
def file_server(tmp_path: Path) -> Iterator[SimulatorServer]:
    with SimulatorServer(db=tmp_path / "sim.db") as running:
        yield running


def test_sales_sent_together_over_http_each_make_one_order(file_server: SimulatorServer):
    with GatewayClient(file_server.client_config()) as client, ThreadPoolExecutor(16) as pool:
        acks = list(pool.map(lambda _: client.sale(sale_fields()), range(48)))
    orderids = [ack.orderid for ack in acks]
    assert len(set(orderids)) == 48
    rows = file_server.store.all("SELECT COUNT(*) AS n FROM transactions WHERE kind='sale'")
    assert rows[0]["n"] == 48
    batcher = serving.batcher_of(file_server.store)  # the sales answered on the loop went through its batch
    assert batcher is not None and 1 <= batcher.writes <= 48 and batcher.batches <= batcher.writes


def test_repeats_of_one_client_orderid_sent_together_make_one_order(file_server: SimulatorServer):
    """The repeat check of a later sale of a batch sees the earlier ones: one order, the same request answered
    with it, another card refused naming it."""
    fields = sale_fields()
    other = {**fields, "credit_card_number": next(c for c in EXAMPLE_CARDS if c != fields["credit_card_number"])}
    bodies = [fields] * 6 + [other] * 6
    with GatewayClient(file_server.client_config()) as client, ThreadPoolExecutor(12) as pool:

        def send(body: dict[str, str]) -> object:
            try:
                return client.sale(body).orderid
            except ApiError as error:
                return error

        answers = list(pool.map(send, bodies))
    made = {answer for answer in answers if isinstance(answer, str)}
    refused = [answer for answer in answers if isinstance(answer, ApiError)]
    assert len(made) == 1
    orderid = made.pop()
    assert len(refused) == 6 and all(f"already names orderid {orderid}" in str(error) for error in refused)
    count = file_server.store.one(
        "SELECT COUNT(*) AS n FROM transactions WHERE client_orderid=? AND kind='sale'", (fields["client_orderid"],)
    )
    assert count is not None and count["n"] == 1
