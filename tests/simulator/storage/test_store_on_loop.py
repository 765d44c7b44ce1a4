"""Gateway work on the event loop with a SQLite file (``Store.without_waiting``): a write that would wait for a
lock goes to a thread with nothing written, so the loop never stalls behind another thread or another process.

The order of events is asserted, never a time: while the lock is held the control API answers and the sale is
not done; once the lock is let go, the sale is answered.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest
import requests

from toolkit.client import GatewayClient
from toolkit.simulator import SimulatorServer
from toolkit.simulator.journal import StoreJournal
from toolkit.simulator.storage import StoreBusy
from toolkit.simulator.storage.sqlite import SqliteStore
from toolkit.testdata import sale_fields


@pytest.fixture
def file_server(tmp_path: Path) -> Iterator[SimulatorServer]:
    with SimulatorServer(db=tmp_path / "sim.db") as running:
        yield running


@contextmanager
def another_process_writing(db: Path) -> Iterator[None]:
    """The processes' write lock, held as another simulator process holds it while it writes."""
    fd = os.open(f"{db}.writers", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _sale_while(server: SimulatorServer, held: AbstractContextManager[object]) -> None:
    with GatewayClient(server.client_config()) as client, ThreadPoolExecutor(1) as pool:
        with held:
            fields = sale_fields()
            sale = pool.submit(client.sale, fields)
            # the loop is free: the control API answers while the sale waits for the lock
            for _ in range(3):
                assert requests.get(server.root_url + "/_sim/clock", timeout=5).status_code == 200
            assert not sale.done()
        ack = sale.result(timeout=10)
        status = client.status({"client_orderid": fields["client_orderid"], "orderid": ack.orderid})
        assert status.status == "approved"


def test_a_sale_waits_in_a_thread_while_another_process_writes(file_server: SimulatorServer):
    _sale_while(file_server, another_process_writing(Path(file_server.store.path)))


def test_a_sale_waits_in_a_thread_while_another_thread_writes(file_server: SimulatorServer):
    _sale_while(file_server, file_server.store.transaction())


def test_the_first_write_on_the_loop_gives_up_with_nothing_written(tmp_path: Path):
    store = SqliteStore(tmp_path / "s.db")
    try:
        with another_process_writing(tmp_path / "s.db"), store.without_waiting():
            with pytest.raises(StoreBusy), store.transaction():
                store.execute("INSERT INTO meta (name, value) VALUES ('x', '1')")
            with pytest.raises(StoreBusy):  # a write of its own (no transaction) too
                store.execute("INSERT INTO meta (name, value) VALUES ('x', '1')")
        assert store.one("SELECT value FROM meta WHERE name='x'") is None
    finally:
        store.close()


def test_once_a_write_went_through_the_next_ones_wait(tmp_path: Path):
    """After its first write a request has changed the store: a later write waits rather than give up."""
    store = SqliteStore(tmp_path / "s.db")
    held, release = threading.Event(), threading.Event()

    def other_thread() -> None:
        with store.transaction():
            held.set()
            release.wait(10)

    try:
        with store.without_waiting():
            store.execute("INSERT INTO meta (name, value) VALUES ('first', '1')")
            worker = threading.Thread(target=other_thread)
            worker.start()
            held.wait(10)
            threading.Timer(0.2, release.set).start()  # (lets the other thread finish: the write below waits for it)
            store.execute("INSERT INTO meta (name, value) VALUES ('second', '2')")
            worker.join(10)
        assert store.one("SELECT value FROM meta WHERE name='second'") == {"value": "2"}
    finally:
        store.close()


def test_the_journal_writes_a_large_batch_in_chunks(tmp_path: Path, monkeypatch):
    from toolkit.simulator.journal import entry, sent
    from toolkit.simulator.storage import base as store_module

    monkeypatch.setattr(store_module, "INSERT_CHUNK", 7)
    store = SqliteStore(tmp_path / "s.db")
    journal = StoreJournal(store, size=1000, retention=3600)
    try:
        for i in range(23):
            journal.record(entry(at=1.0 + i, login="m", operation="status", path="/p", http_status=200,
                                 body={"type": "status-response", "serial-number": str(i)},
                                 sent=sent([("client_orderid", f"o{i}")]), warnings=[]))  # fmt: skip
        lines = journal.entries(limit=100)
        assert [line["serial"] for line in lines] == [str(i) for i in range(23)]
        assert lines[5]["fields"] == {"client_orderid": "o5"}
    finally:
        journal.close()
        store.close()
