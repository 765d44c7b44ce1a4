"""Sale + status round trips per second through the simulator, against a bare uvicorn app.

    .venv/bin/python benchmarks/bench_simulator.py [--seconds 3] [--repeat 5] [--same-core] [--profile]

Rows, measured in the same run, one request at a time, over loopback:
  bare      a bare ASGI app under uvicorn that reads the body and answers a constant JSON body;
            the client is requests.Session, the same library the GatewayClient uses
  simulator GatewayClient: sale, then status by orderid (validation, control signing, decoding,
            typed responses), each sale with a new client_orderid
  simulator requests.Session with bodies signed beforehand: the server's share of the above

Fairness: each server runs alone in its own process pinned to one core (os.sched_setaffinity)
and the client runs in this process pinned to another, so neither steals the other's CPU and
the figure is what one server core delivers to one sequential client.  ``--same-core`` pins
both to one core instead (then the rate also pays for the client and the context switches).
Both servers use the same uvicorn configuration (its default loop and HTTP implementation,
no access log).  Rows are interleaved ``--repeat`` times and each row's best repetition is
reported (the one least disturbed by other work on the machine; CPU columns are medians).
``--profile`` runs the simulator under cProfile and prints its hot spots.  The goal: the
simulator through the GatewayClient reaches at least half of the bare figure.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import multiprocessing
import os
import pstats
import socket
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection

import requests
import uvicorn
from benchservers import HEADERS, SALE, bare_config, signed

from toolkit import demo
from toolkit.client import GatewayClient
from toolkit.config import simulator_config
from toolkit.wire import encode_form

# --- the server process ---------------------------------------------------------------------------


def serve(kind: str, core: int | None, profile: bool, conn: Connection) -> None:
    """Child process: pin, bind a free port, report it, serve until told to stop (then report the profile)."""
    if core is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # TCP_NODELAY, as the simulator
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections queue from now on, so the port can be reported before uvicorn runs
    if kind == "bare":
        config = bare_config(lifespan="auto")
    else:  # what SimulatorServer and `gatekit simulate` run: the app, its stack built
        from toolkit.simulator.core import build_state
        from toolkit.simulator.web.app import build, create_app  # imported here: the bare server never loads it
        from toolkit.simulator.web.connections import uvicorn_config

        state = build_state()
        app = create_app(state=state)
        build(app)
        config = uvicorn_config(app, state.settings)
    server = uvicorn.Server(config)

    def stop_when_told() -> None:
        conn.recv()
        server.should_exit = True

    threading.Thread(target=stop_when_told, daemon=True).start()
    conn.send(sock.getsockname()[1])
    profiler = cProfile.Profile() if profile else None
    if profiler:
        profiler.enable()
    server.run(sockets=[sock])
    if profiler:
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(40)
        conn.send(out.getvalue())


@dataclass
class Server:
    process: multiprocessing.process.BaseProcess
    conn: Connection
    port: int
    profile: bool = False

    @property
    def cpu_seconds(self) -> float | None:
        """utime + stime of the server process (Linux /proc), None elsewhere."""
        try:
            with open(f"/proc/{self.process.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> str:
        """Stop the server; its profile report when it was profiled."""
        self.conn.send("stop")
        report = self.conn.recv() if self.profile and self.conn.poll(30) else ""
        self.process.join(timeout=30)
        return str(report)


def start(kind: str, core: int | None, profile: bool = False) -> Server:
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=serve, args=(kind, core, profile, child), name=f"bench-{kind}", daemon=True)
    process.start()
    if not parent.poll(60):
        raise RuntimeError(f"the {kind} server did not start")
    return Server(process, parent, parent.recv(), profile)


# --- the client side ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Measure:
    rate: float  # round trips per second
    client_cpu: float  # ms per round trip, this process
    server_cpu: float | None  # ms per round trip, the server process (None: not measurable here)


def timed(round_trip: Callable[[int], None], seconds: float, server: Server) -> Measure:
    """Round trips per second and CPU per round trip on both sides, over about ``seconds``."""
    for n in range(100):  # warm-up: connections, caches, the store's first pages
        round_trip(100_000 + n)
    count, server_before, client_before = 0, server.cpu_seconds, time.process_time()
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        round_trip(count)
        count += 1
    elapsed = time.perf_counter() - started
    client = (time.process_time() - client_before) * 1000 / count
    server_after = server.cpu_seconds
    served = None if server_before is None or server_after is None else (server_after - server_before) * 1000 / count
    return Measure(count / elapsed, client, served)


def bare_round_trips(port: int) -> Callable[[int], None]:
    session = requests.Session()
    base = f"http://127.0.0.1:{port}/paynet/api/v2"
    body = encode_form({"client_orderid": "bench", **SALE, "control": "0" * 40}).encode()
    status = encode_form({"client_orderid": "bench", "orderid": "1", "control": "0" * 40}).encode()

    def round_trip(_: int) -> None:
        session.post(f"{base}/sale/1001", data=body, headers=HEADERS, timeout=30).json()
        session.post(f"{base}/status/1001", data=status, headers=HEADERS, timeout=30).json()

    return round_trip


def client_round_trips(port: int, run: str) -> Callable[[int], None]:
    client = GatewayClient(simulator_config(f"http://127.0.0.1:{port}/paynet"))

    def round_trip(n: int) -> None:
        ack = client.sale({"client_orderid": f"{run}-{n}", **SALE})
        client.status(client_orderid=ack.client_orderid, orderid=ack.orderid)

    return round_trip


def presigned_round_trips(port: int, run: str, count: int) -> Callable[[int], None]:
    """Sale and status bodies signed beforehand (status by client_orderid: no orderid to wait for)."""
    session = requests.Session()
    base = f"http://127.0.0.1:{port}/paynet/api/v2"
    sales, statuses = [], []
    for n in range(count):
        sale = {"client_orderid": f"{run}-{n}", **SALE}
        status = {"login": demo.LOGIN, "client_orderid": sale["client_orderid"]}  # login: required by status
        sales.append(encode_form(signed("sale", sale)).encode())
        statuses.append(encode_form(signed("status", status)).encode())

    def round_trip(n: int) -> None:
        session.post(f"{base}/sale/1001", data=sales[n % count], headers=HEADERS, timeout=30).json()
        session.post(f"{base}/status/1001", data=statuses[n % count], headers=HEADERS, timeout=30).json()

    return round_trip


# --- the run ------------------------------------------------------------------------------------


def cores(same_core: bool) -> tuple[int | None, int | None]:
    """(server core, client core); None where affinity cannot be set."""
    if not hasattr(os, "sched_getaffinity"):
        return None, None
    available = sorted(os.sched_getaffinity(0))
    server = available[0]
    client = server if same_core or len(available) == 1 else available[1]
    return server, client


ROWS = (
    ("bare ASGI app", "requests.Session"),
    ("simulator", "GatewayClient"),
    ("simulator", "requests.Session, pre-signed"),
)


def measure(seconds: float, repeat: int, server_core: int | None) -> dict[int, list[Measure]]:
    results: dict[int, list[Measure]] = {index: [] for index in range(len(ROWS))}
    bare, simulator = start("bare", server_core), start("simulator", server_core)
    try:
        for round_number in range(repeat):
            run = f"bench-{os.getpid()}-{round_number}"
            trips = (
                (bare_round_trips(bare.port), bare),
                (client_round_trips(simulator.port, run), simulator),
                (presigned_round_trips(simulator.port, run + "-raw", 20000), simulator),
            )
            for index, (round_trip, server) in enumerate(trips):
                results[index].append(timed(round_trip, seconds, server))
    finally:
        bare.stop()
        simulator.stop()
    return results


def table(results: dict[int, list[Measure]]) -> str:
    def median(values: list[float | None]) -> str:
        known = [value for value in values if value is not None]
        return f"{statistics.median(known):.2f}" if known else "n/a"

    rates = {index: max(m.rate for m in runs) for index, runs in results.items()}
    lines = [
        f"{'server':<16}{'client':<32}{'round trips/s':>14}{'ms each':>9}"
        f"{'client CPU ms':>15}{'server CPU ms':>15}{'vs bare':>9}"
    ]
    for index, (target, client) in enumerate(ROWS):
        runs, rate = results[index], rates[index]
        client_cpu, server_cpu = median([m.client_cpu for m in runs]), median([m.server_cpu for m in runs])
        lines.append(
            f"{target:<16}{client:<32}{rate:>14,.0f}{1000 / rate:>9.2f}"
            f"{client_cpu:>15}{server_cpu:>15}{rate / rates[0]:>9.2f}"
        )
    verdict = "reached" if rates[1] >= rates[0] / 2 else "NOT reached"
    lines.append(f"goal (simulator through the GatewayClient >= half of bare): {verdict}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time spent on each row, each repetition")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved repetitions (the best is shown)")
    parser.add_argument("--same-core", action="store_true", help="pin client and servers to one core")
    parser.add_argument("--profile", action="store_true", help="profile the simulator (cProfile) and print hot spots")
    args = parser.parse_args()
    server_core, client_core = cores(args.same_core)
    if client_core is not None:
        os.sched_setaffinity(0, {client_core})
    print(f"server core {server_core}, client core {client_core}, {args.seconds:g} s x {args.repeat} per row")
    if args.profile:
        simulator = start("simulator", server_core, profile=True)
        round_trip = client_round_trips(simulator.port, f"profile-{os.getpid()}")
        rate = timed(round_trip, args.seconds, simulator).rate
        print(f"profiled simulator: {rate:,.0f} round trips/s (under cProfile)")
        print(simulator.stop())
        return
    print(table(measure(args.seconds, args.repeat, server_core)))


if __name__ == "__main__":
    main()
