"""The bounded journal (issue 9, item 3): a ring in memory, SQLite with retention with ``--db``,
entries cut to size, and a byte budget for the memory ring."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from toolkit.client import GatewayClient
from toolkit.errors import ApiError
from toolkit.simulator import SimulatorServer
from toolkit.simulator.settings import default_settings


def test_the_memory_journal_keeps_the_last_entries_only(client_for):
    with SimulatorServer(default_settings(journal_size=20)) as small, client_for(small) as client:
        for _ in range(30):
            _status(client)
        lines = small.journal.entries(limit=1000)
    assert len(lines) == 20 and [line["id"] for line in lines] == list(range(11, 31))


def test_journal_entries_are_cut_to_size(server: SimulatorServer, post):
    answer = post("/api/v2/sale/1001", {"order_desc": "d" * 10_000, **{f"x{i}": "v" for i in range(150)}})
    line = next(e for e in server.journal.entries(limit=100) if e["serial"] == answer.json()["serial-number"])
    assert line["fields"]["order_desc"] == "d" * 256 + "... (10000 characters)"
    assert len(line["fields"]) == 101 and line["fields"]["..."] == "51 more fields not kept"
    assert len(json.dumps(line)) < 10_000


def test_the_memory_journal_has_a_byte_budget():
    from toolkit.simulator.journal import MemoryJournal, entry, sent

    journal = MemoryJournal(size=10_000, budget=100_000)
    fat = [(f"f{i}", "v" * 256) for i in range(100)]
    for _ in range(50):
        journal.record(
            entry(at=0, login="", operation="sale", path="/", http_status=400, body={}, sent=sent(fat), warnings=[])
        )
    assert journal.bytes <= 100_000 and 1 <= len(journal.entries(limit=100)) < 50


def test_the_sqlite_journal_keeps_its_size_and_retention(tmp_path: Path, client_for):
    settings = default_settings(journal_size=50, journal_retention=3600)
    with SimulatorServer(settings, db=tmp_path / "sim.db") as sim, client_for(sim) as client:
        for _ in range(260):
            _status(client)
        sim.journal.entries(limit=1)  # (a file's journal is written in batches: reading it writes the queue first)
        journal_store = sim.journal.store  # type: ignore[attr-defined]  (a file beside the --db: sim.db.requests)
        assert sim.store.one("SELECT COUNT(*) AS n FROM journal") == {"n": 0}
        assert Path(journal_store.path) == tmp_path / "sim.db.requests"
        kept = journal_store.one("SELECT COUNT(*) AS n FROM journal")
        assert kept is not None and 50 <= kept["n"] < 150
        sim.control().advance_clock(7200)
        _status(client)
        sim.journal.entries(limit=1)
        assert journal_store.one("SELECT COUNT(*) AS n FROM journal") == {"n": 1}


def _status(client: GatewayClient) -> None:
    with contextlib.suppress(ApiError):  # an unknown order: the refusal is journaled all the same
        client.status(client_orderid="inv-1")


@pytest.fixture
def client_for() -> Callable[[SimulatorServer], GatewayClient]:
    return lambda sim: GatewayClient(sim.client_config())


def test_a_file_journal_keeps_the_lines_written_just_before_the_simulator_stops(
    tmp_path: Path, client_for, monkeypatch: pytest.MonkeyPatch
):
    """The journal is written in batches by a thread: stopping writes what still waits (nothing is lost).  The
    thread waits a minute here, so only the stop can have written them."""
    from toolkit.simulator.journal import StoreJournal
    from toolkit.simulator.storage.sqlite import SqliteStore

    monkeypatch.setattr(StoreJournal, "FLUSH_EVERY", 60.0)
    with SimulatorServer(db=tmp_path / "sim.db") as sim, client_for(sim) as client:
        for _ in range(5):
            _status(client)
    store = SqliteStore(tmp_path / "sim.db.requests")  # (the journal of a SQLite file lives beside it)
    try:
        assert store.one("SELECT COUNT(*) AS n FROM journal") == {"n": 5}
    finally:
        store.close()


def test_reset_of_a_sqlite_file_empties_its_journal_too(tmp_path: Path, client_for):
    import subprocess
    import sys

    db = tmp_path / "sim.db"
    with SimulatorServer(db=db) as sim, client_for(sim) as client:
        _status(client)
    assert Path(f"{db}.requests").exists()
    done = subprocess.run([sys.executable, "-m", "toolkit.cli", "simulate", "--db", str(db), "--reset"],
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    with SimulatorServer(db=db) as sim:
        assert sim.journal.entries(limit=10) == []


def test_the_store_journal_writes_less_often_under_load(tmp_path: Path):
    """Lines that came fast (a simulator under load) make the next write wait ``BUSY_EVERY``, so that it holds many:
    a few transactions a second, not fifty; lines that come slowly are written within ``FLUSH_EVERY`` (a notebook
    reads its request's line at once)."""
    from toolkit.simulator.journal import StoreJournal
    from toolkit.simulator.storage.sqlite import SqliteStore

    store = SqliteStore(tmp_path / "journal.db")
    journal = StoreJournal(store, size=1000, retention=3600.0)
    try:
        assert journal.next_wait(100, 0.02) == StoreJournal.BUSY_EVERY  # 5,000 lines a second
        assert journal.next_wait(3, 0.5) == StoreJournal.FLUSH_EVERY  # a notebook's few requests
        assert journal.next_wait(0, 0.0) == StoreJournal.FLUSH_EVERY  # (nothing written: a failed write)
        assert StoreJournal.FLUSH_EVERY < StoreJournal.BUSY_EVERY
    finally:
        journal.close()
        store.close()


def test_the_store_journal_thread_paces_its_next_write_by_what_it_just_wrote(tmp_path: Path):
    """The journal's thread hands each write's number of lines to ``next_wait``: a burst of 1,000 lines (as a
    simulator under load queues them) makes its next write wait ``BUSY_EVERY``."""
    import threading

    from toolkit.simulator.journal import StoreJournal
    from toolkit.simulator.storage.sqlite import SqliteStore

    paced: list[tuple[int, float]] = []
    written = threading.Event()

    class Watched(StoreJournal):
        def next_wait(self, lines: int, seconds: float) -> float:
            wait = super().next_wait(lines, seconds)
            paced.append((lines, wait))
            written.set()
            return wait

    store = SqliteStore(tmp_path / "journal.db")
    journal = Watched(store, size=5000, retention=3600.0)
    try:
        line = {"at": 1795432000.0, "login": "gatekit-demo", "operation": "status", "path": "/paynet/api/v2/status",
                "http_status": 200, "response_type": "status-response", "serial": "s", "orderid": "1",
                "client_orderid": "inv-1", "fields": {}, "warnings": [], "error": ""}  # fmt: skip
        with journal._flushing:  # (the thread's write waits until all are queued, however slow this machine is)
            for _ in range(1000):
                journal.record(dict(line))
        assert written.wait(30), "the journal's thread wrote nothing"
        assert paced[0] == (1000, StoreJournal.BUSY_EVERY)
        assert store.one("SELECT COUNT(*) AS n FROM journal") == {"n": 1000}
    finally:
        journal.close()
        store.close()
