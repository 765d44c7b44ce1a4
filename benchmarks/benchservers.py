"""Servers for the simulator benchmarks (bench_server_cpu.py, bench_http.py): each in its own process, pinned.

    server = start("simulator", core=0)   # or "bare": a bare uvicorn app answering constant JSON
    server.cpu_seconds, server.rss_kb     # utime + stime and VmRSS of the server process (Linux /proc)
    server.stop()

``simulator`` runs ``SimulatorServer`` (the uvicorn configuration ``gatekit simulate`` runs: guarded
connections, the connection limit, no access log, no request log) with an in-memory store; ``bare``
runs a plain ASGI callable under ``uvicorn.Config`` defaults (the same loop and HTTP implementation).
``presigned(...)`` builds sale and status bodies signed beforehand, so the client does no signing work.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import queue
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from counters import ThreadCounters

from toolkit import demo, signing
from toolkit.operations import get_operation
from toolkit.simulator.storage.order_rows import LATEST_BY_CLIENT_ORDERID, LATEST_BY_ORDERID
from toolkit.testdata.outcomes import EXAMPLE_CARDS
from toolkit.wire import FORM_TYPE, MEDIA_TYPE, encode_form

SALE = {
    "order_desc": "Benchmark order",
    "amount": "10.42",
    "currency": "EUR",
    "email": "john.smith@example.com",
    "ipaddress": "203.0.113.7",
    "credit_card_number": EXAMPLE_CARDS[0],
    "card_printed_name": "JOHN SMITH",
    "expire_month": "12",
    "expire_year": "2099",
    "cvv2": "123",
    "address1": "1 Main Street",
    "city": "Springfield",
    "zip_code": "12345",
    "country": "US",
    "state": "IL",
    "phone": "5551234567",
}
CONSTANT = json.dumps({"type": "async-response", "serial-number": "0", "paynet-order-id": "1"}).encode()
HEADERS = {"Accept": MEDIA_TYPE, "Content-Type": FORM_TYPE}
API = "/paynet/api/v2"
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


async def bare_app(scope: Scope, receive: Receive, send: Send) -> None:
    """The floor: read the whole body, answer a constant JSON body.  No framework."""
    if scope["type"] != "http":
        return
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", MEDIA_TYPE.encode())]})
    await send({"type": "http.response.body", "body": CONSTANT})


def bare_config(lifespan: str) -> Any:
    """uvicorn's configuration of the bare app: h11, the HTTP/1.1 implementation the simulator serves with
    (``http="auto"`` would take httptools where it is installed, and a ratio to the bare app would then compare two
    parsers as well as gatekit's own work)."""
    import uvicorn

    return uvicorn.Config(bare_app, log_level="warning", access_log=False, lifespan=lifespan, http="h11")


def signed(operation: str, fields: dict[str, str]) -> dict[str, str]:
    control = signing.control_for(
        get_operation(operation), fields, endpoint_id=demo.ENDPOINT_ID, login=demo.LOGIN, control_key=demo.CONTROL_KEY
    )
    return {**fields, "control": control}


def presigned(run: str, count: int) -> tuple[list[bytes], list[bytes]]:
    """``count`` sale bodies (each a new client_orderid) and the status bodies that follow them (by client_orderid)."""
    sales, statuses = [], []
    for n in range(count):
        sale = {"client_orderid": f"{run}-{n}", **SALE}
        sales.append(encode_form(signed("sale", sale)).encode())
        statuses.append(
            encode_form(signed("status", {"login": demo.LOGIN, "client_orderid": sale["client_orderid"]})).encode()
        )
    return sales, statuses


# --- the server process ---------------------------------------------------------------------------


def _serve(kind: str, core: int | None, conn: Connection) -> None:
    if core is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
    if kind == "bare":
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # TCP_NODELAY, as the simulator
        sock.bind(("127.0.0.1", 0))
        sock.listen(1024)
        server = uvicorn.Server(bare_config(lifespan="off"))
        threading.Thread(target=lambda: (conn.recv(), setattr(server, "should_exit", True)), daemon=True).start()
        conn.send(sock.getsockname()[1])
        server.run(sockets=[sock])
        return
    from toolkit.simulator.server import SimulatorServer

    with SimulatorServer() as simulator:
        conn.send(simulator.port)
        while True:
            message = conn.recv()
            if message == "stop":
                break
            if isinstance(message, tuple) and message[0] == "seed":  # ("seed", count): orders stored directly
                conn.send(seed_orders(simulator, message[1]))
            if message == "plans":  # how the store finds an order for status (an index, never a scan)
                conn.send(status_plans(simulator))


STATUS_QUERIES = (LATEST_BY_CLIENT_ORDERID, LATEST_BY_ORDERID)  # status by client_orderid, by orderid


def status_plans(simulator: Any) -> list[str]:
    """SQLite's plan for the query of a status request (by client_orderid, by orderid): the latest transaction."""
    plans = []
    for sql in STATUS_QUERIES:
        rows = simulator.store.all("EXPLAIN QUERY PLAN " + sql, tuple("1" * sql.count("?")))
        plans.append(" / ".join(row["detail"] for row in rows))
    return plans


def seed_orders(simulator: Any, count: int) -> tuple[int, int]:
    """``count`` approved sales of the demo merchant written straight into the store (as a sale would write them)."""
    store, now = simulator.store, simulator.app.state.clock.now()
    first = store.one("SELECT seq FROM sqlite_sequence WHERE name='transactions'")["seq"] + 1
    rows = [
        (
            first + n,
            first + n,
            demo.LOGIN,
            demo.ENDPOINT_ID,
            f"seed-{first + n}",
            f"seed-{first + n}",
            "sale",
            "approved",
            "sale_approved",
            "approved",
            1042,
            "EUR",
            EXAMPLE_CARDS[0][:6],
            EXAMPLE_CARDS[0][-4:],
            "VISA",
            "12",
            "2099",
            "JOHN SMITH",
            "GATEKIT*DEMO",
            now,
            now,
        )
        for n in range(count)
    ]
    with store.transaction():
        store._db.executemany(
            "INSERT INTO transactions (id, orderid, login, endpoint_id, serial, client_orderid, kind, status, stage,"
            " plan_status, amount_minor, currency, card_bin, card_last4, card_type, card_exp_month, card_exp_year,"
            " cardholder, descriptor, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        store._db.executemany("INSERT INTO requests (serial, tx) VALUES (?, ?)", [(r[4], r[0]) for r in rows])
        store._db.execute("UPDATE sqlite_sequence SET seq=? WHERE name='transactions'", (first + count - 1,))
    return first, first + count - 1


@dataclass
class Server:
    kind: str
    process: multiprocessing.process.BaseProcess
    conn: Connection
    port: int
    counters: ThreadCounters | None = None

    @property
    def instructions(self) -> int | None:
        """User-space instructions of the server's threads since the first look (None where not counted)."""
        if self.counters is None:
            self.counters = ThreadCounters(self.process.pid)
        return self.counters.read()

    def _proc(self, name: str) -> str:
        with open(f"/proc/{self.process.pid}/{name}") as file:
            return file.read()

    @property
    def cpu_seconds(self) -> float:
        """CPU seconds of the server process (every thread): ``cpu_seconds_of``."""
        assert self.process.pid is not None
        return cpu_seconds_of(self.process.pid)

    @property
    def rss_kb(self) -> int:
        """VmRSS of the server process, in kB."""
        line = next(line for line in self._proc("status").splitlines() if line.startswith("VmRSS:"))
        return int(line.split()[1])

    def seed(self, count: int) -> tuple[int, int]:
        """Store ``count`` more approved sales directly (the simulator only): their first and last orderid.

        Each has client_orderid ``seed-<orderid>``.  Written in one ``executemany`` (about a second per
        100,000), as the sale handler would leave them; going through HTTP would take minutes."""
        self.conn.send(("seed", count))
        first, last = self.conn.recv()
        return int(first), int(last)

    def status_plans(self) -> list[str]:
        self.conn.send("plans")
        return list(self.conn.recv())

    def stop(self) -> None:
        if self.counters is not None:
            self.counters.close()
        self.conn.send("stop")
        self.process.join(timeout=30)
        if self.process.is_alive():
            self.process.kill()


def start(kind: str, core: int | None) -> Server:
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=_serve, args=(kind, core, child), name=f"bench-{kind}", daemon=True)
    process.start()
    if not parent.poll(60):
        raise RuntimeError(f"the {kind} server did not start")
    return Server(kind, process, parent, parent.recv())


def cores() -> tuple[int | None, int | None]:
    """(server core, load generator core); None where affinity cannot be set."""
    if not hasattr(os, "sched_getaffinity"):
        return None, None
    available = sorted(os.sched_getaffinity(0))
    return available[0], available[-1]


def cpu_seconds_of(pid: int) -> float:
    """CPU seconds of every thread of process ``pid`` so far: ``se.sum_exec_runtime`` (ms, to the nanosecond) of
    ``/proc/PID/task/*/sched``; utime + stime of ``/proc/PID/stat`` (10 ms ticks) where the kernel has no such file.
    Threads that have ended are not counted: for a process whose threads come and go (a start-up), read the stat
    ticks (``bench_startup_simulate.py``, ``bench_load_generator.py``)."""
    total, found = 0.0, False
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            text = (task / "sched").read_text()
        except OSError:  # a thread that just ended, or no sched file
            continue
        for line in text.splitlines():
            if line.startswith("se.sum_exec_runtime"):
                total, found = total + float(line.rsplit(":", 1)[1]) / 1000, True
                break
    if found:
        return total
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Simulate:
    """``gatekit simulate --port 0 FLAGS`` as a subprocess, as the README starts it (``taskset -c cores`` when
    given): its ``port``, and ``cpu_seconds`` of all its processes (the workers of ``--workers N``).  What it writes
    after its header (the line per request) goes to a temporary file, as a redirected stdout."""

    def __init__(self, *flags: str, cores: str | None = None) -> None:
        root = Path(__file__).resolve().parents[1]
        command = [str(root / ".venv" / "bin" / "gatekit"), "simulate", "--port", "0", *flags]
        if cores is not None and shutil.which("taskset"):
            command = ["taskset", "-c", cores, *command]
        self.log = tempfile.TemporaryFile(prefix="gatekit-simulate-", suffix=".log")  # noqa: SIM115
        self.errors = tempfile.TemporaryFile(prefix="gatekit-simulate-", suffix=".err")  # noqa: SIM115
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self.errors, text=True)
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, args=(lines,), daemon=True).start()
        header: list[str] = []
        while not header or not header[-1].startswith("stop: "):
            line = lines.get(timeout=60)
            if not line:
                self.errors.seek(0)
                said = self.errors.read().decode(errors="replace")
                raise SystemExit(f"gatekit simulate {' '.join(flags)} did not start: {header} {said}")
            header.append(line.rstrip("\n"))
        self.port = int(header[0].rsplit(":", 1)[1].split("/", 1)[0])
        workers = next((line for line in header if line.startswith("workers: ")), "")
        pids = workers.split("(pids ", 1)[1].split(")", 1)[0].split(", ") if workers else [str(self.process.pid)]
        self.pids = [int(pid) for pid in pids]

    def _read(self, lines: queue.Queue[str]) -> None:
        """The header to ``__init__``, then every line to the log file (what a redirected stdout costs)."""
        assert self.process.stdout is not None
        started = False
        for line in self.process.stdout:
            if started:
                self.log.write(line.encode())
                continue
            lines.put(line)
            started = line.startswith("stop: ")
        if not started:
            lines.put("")

    @property
    def cpu_seconds(self) -> float:
        return sum(cpu_seconds_of(pid) for pid in self.pids)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)
        self.log.close()
        self.errors.close()
