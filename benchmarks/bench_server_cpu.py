"""Simulator server CPU per request against a bare uvicorn app (issue 12: goal <= 2.0x).

    .venv/bin/python benchmarks/bench_server_cpu.py [--pairs 1500] [--repeat 3]

Each server runs in its own process pinned to one core; this process (the client, one keep-alive
``http.client`` connection, one request at a time) is pinned to the other.  The simulator gets
sale + status pairs signed beforehand (each sale a new client_orderid, status by client_orderid);
the bare app (a plain ASGI callable answering constant JSON) gets the same bodies.  Server CPU is
utime + stime of the server process read from ``/proc`` before and after, divided by the number of
requests: CPU time, so other work on the machine moves it little.  Repetitions are interleaved;
the table shows each repetition and the median.
"""

from __future__ import annotations

import argparse
import http.client
import os
import signal
import statistics
import subprocess
import time

from benchservers import API, HEADERS, Server, cores, presigned, start

GOAL = 2.0
WARM_UP = 100


def drive(server: Server, sales: list[bytes], statuses: list[bytes]) -> float:
    """Send every sale + status pair on one keep-alive connection; server CPU ms per request."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    before = 0.0
    for index, (sale, status) in enumerate(zip(sales, statuses, strict=True)):
        if index == WARM_UP:  # the first pairs warm up the connection, the store's first pages, caches
            before = server.cpu_seconds
        connection.request("POST", f"{API}/sale/1001", body=sale, headers=HEADERS)
        answer = connection.getresponse()
        answer.read()
        assert answer.status == 200, answer.status
        connection.request("POST", f"{API}/status/1001", body=status, headers=HEADERS)
        answer = connection.getresponse()
        answer.read()
        assert answer.status == 200, answer.status
    spent = server.cpu_seconds - before
    connection.close()
    return spent * 1000 / (2 * (len(sales) - WARM_UP))


def profile(path: str, pairs: int) -> None:
    """The simulator's flame graph while it serves ``pairs`` sale + status pairs (py-spy, pip install py-spy)."""
    server_core, client_core = cores()
    if client_core is not None:
        os.sched_setaffinity(0, {client_core})
    simulator = start("simulator", server_core)
    try:
        sales, statuses = presigned(f"profile-{os.getpid()}", WARM_UP + pairs)
        spy = subprocess.Popen(
            [
                "py-spy",
                "record",
                "--pid",
                str(simulator.process.pid),
                "--output",
                path,
                "--format",
                "flamegraph" if path.endswith(".svg") else "raw",
                "--rate",
                "500",
                "--threads",
                "--nonblocking",
            ],
            stdout=subprocess.DEVNULL,
        )
        time.sleep(1.0)  # py-spy attaches
        served = drive(simulator, sales, statuses)
        spy.send_signal(signal.SIGINT)
        spy.wait(60)
    finally:
        simulator.stop()
    print(f"simulator under py-spy: {served:.3f} ms server CPU per request; flame graph in {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1500, help="sale + status pairs per server, per repetition")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved repetitions (the median is the figure)")
    parser.add_argument("--profile", metavar="FILE", help="py-spy flame graph (SVG) of the simulator under this load")
    args = parser.parse_args()
    if args.profile:
        profile(args.profile, args.pairs)
        return
    server_core, client_core = cores()
    if client_core is not None:
        os.sched_setaffinity(0, {client_core})
    print(f"server core {server_core}, client core {client_core}, {args.pairs} sale + status pairs x {args.repeat}")
    bare, simulator = start("bare", server_core), start("simulator", server_core)
    rows: list[tuple[float, float]] = []
    try:
        for repetition in range(args.repeat):
            sales, statuses = presigned(f"cpu-{os.getpid()}-{repetition}", WARM_UP + args.pairs)
            rows.append((drive(bare, sales, statuses), drive(simulator, sales, statuses)))
    finally:
        bare.stop()
        simulator.stop()
    print(f"{'run':<8}{'bare ms/request':>18}{'simulator ms/request':>22}{'ratio':>8}")
    for index, (floor, served) in enumerate(rows, 1):
        print(f"{index:<8}{floor:>18.3f}{served:>22.3f}{served / floor:>8.2f}")
    floor, served = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
    ratio = statistics.median(r[1] / r[0] for r in rows)
    print(f"{'median':<8}{floor:>18.3f}{served:>22.3f}{ratio:>8.2f}")
    verdict = "reached" if ratio <= GOAL else "NOT reached"
    print(f"goal: simulator server CPU per request <= {GOAL:.1f}x bare uvicorn: {ratio:.2f}x, {verdict}")


if __name__ == "__main__":
    main()
