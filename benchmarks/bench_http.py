"""The simulator under load from wrk, against a bare uvicorn app in the same run; its memory with many orders.

    .venv/bin/python benchmarks/bench_http.py [--seconds 2] [--repeat 3] [--skip-memory]

Load: ``wrk`` (Debian package ``wrk``), pinned to one core with ``taskset``, the server to the other
(each server in its own process).  wrk replays bodies signed beforehand (``bodies.lua``: one body per
line of a file, in turn), so the load generator only moves bytes.  ``sale`` bodies each carry a new
client_orderid; ``status`` bodies ask for orders stored beforehand (by client_orderid).  For each
operation and each concurrency (1, 8 and 64 connections), the simulator and the bare app
(a plain ASGI callable answering constant JSON) run in turn, ``--repeat`` times; the table shows the
median requests per second, p50 and p99 latency (wrk's) and server CPU per request (utime + stime of
the server process from ``/proc``).

Memory: a fresh simulator's VmRSS, then after 10,000 and 100,000 stored orders (written straight into
its store, as the sale handler writes them: through HTTP it would take minutes), with the server CPU of
a status request at each size (wrk, one connection, orders picked across the whole range), which must
stay flat: SQLite's plans for the status queries are printed (an index search, never a scan).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchservers import API, HEADERS, Server, cores, presigned, signed, start

from toolkit import demo
from toolkit.wire import encode_form

CONCURRENCY = (1, 8, 64)
# Each request is formatted once, when wrk's thread starts (``init``: wrk has set the Host header by then), not on
# every send: wrk shares the two cores with the simulator, and its CPU per request is CPU the server does not get.
LUA = """
local path = os.getenv("BENCH_PATH")
local headers = {}
HEADERS
local requests = {}
init = function(args)
  for line in io.lines(os.getenv("BENCH_BODIES")) do
    requests[#requests + 1] = wrk.format("POST", path, headers, line)
  end
end
-- wrk takes one request of each thread before it sends any and never sends it: that one is the list's last, so
-- every body is sent, the first one first (starting at 0, the first body of a list was never sent)
local i = -1
request = function()
  i = i % #requests + 1
  return requests[i]
end
""".replace("HEADERS", "\n".join(f'headers["{name}"] = "{value}"' for name, value in HEADERS.items()))
UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


@dataclass(frozen=True)
class Run:
    rate: float  # requests per second
    p50: float  # ms
    p99: float  # ms
    cpu: float  # server CPU ms per request
    errors: int  # answers other than 2xx/3xx, and socket errors


def _ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()  # type: ignore[union-attr]
    return float(number) * UNITS[unit]


def wrk(server: Server, operation: str, bodies: list[bytes], connections: int, seconds: float, core: int | None) -> Run:
    """One wrk run: ``bodies`` in turn to ``operation`` over ``connections`` keep-alive connections."""
    with tempfile.TemporaryDirectory() as folder:
        script, lines = Path(folder, "bodies.lua"), Path(folder, "bodies.txt")
        script.write_text(LUA)
        lines.write_bytes(b"\n".join(bodies) + b"\n")
        command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "--latency", "-s", str(script)]
        if core is not None and shutil.which("taskset"):
            command = ["taskset", "-c", str(core), *command]
        env = {**os.environ, "BENCH_BODIES": str(lines), "BENCH_PATH": f"{API}/{operation}/{demo.ENDPOINT_ID}"}
        before = server.cpu_seconds
        output = subprocess.run(
            [*command, f"http://127.0.0.1:{server.port}/"], env=env, capture_output=True, text=True, check=True
        ).stdout
        spent = server.cpu_seconds - before
    count = int(re.search(r"(\d+) requests in", output).group(1))  # type: ignore[union-attr]
    latency = dict(re.findall(r"^\s+(50|99)%\s+(\S+)$", output, re.MULTILINE))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    socket_errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", output))
    return Run(
        rate=float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),  # type: ignore[union-attr]
        p50=_ms(latency["50"]),
        p99=_ms(latency["99"]),
        cpu=spent * 1000 / max(count, 1),
        errors=(int(bad.group(1)) if bad else 0) + socket_errors,
    )


def status_bodies(first: int, last: int, count: int, rng: random.Random) -> list[bytes]:
    """Status requests (by client_orderid) for ``count`` seeded orders picked across ``first..last``."""
    bodies = []
    for _ in range(count):
        client_orderid = f"seed-{rng.randint(first, last)}"
        fields = signed("status", {"login": demo.LOGIN, "client_orderid": client_orderid})
        bodies.append(encode_form(fields).encode())
    return bodies


def median_run(runs: list[Run]) -> Run:
    return Run(
        rate=statistics.median(r.rate for r in runs),
        p50=statistics.median(r.p50 for r in runs),
        p99=statistics.median(r.p99 for r in runs),
        cpu=statistics.median(r.cpu for r in runs),
        errors=sum(r.errors for r in runs),
    )


def load_table(seconds: float, repeat: int, server_core: int | None, wrk_core: int | None) -> None:
    rng = random.Random(12)
    bare, simulator = start("bare", server_core), start("simulator", server_core)
    try:
        first, last = simulator.seed(2000)  # orders for the status runs
        results: dict[tuple[str, int, str], list[Run]] = {}
        for repetition in range(repeat):
            for operation in ("status", "sale"):
                for connections in CONCURRENCY:
                    if operation == "sale":
                        run_name = f"http-{os.getpid()}-{repetition}-{connections}"
                        bodies = presigned(run_name, max(2000, int(2500 * seconds)))[0]
                    else:
                        bodies = status_bodies(first, last, 2000, rng)
                    for server in (simulator, bare):
                        run = wrk(server, operation, bodies, connections, seconds, wrk_core)
                        results.setdefault((operation, connections, server.kind), []).append(run)
    finally:
        bare.stop()
        simulator.stop()
    print(
        f"{'operation':<10}{'conns':>6}{'server':>11}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'CPU ms/req':>12}{'errors':>8}{'CPU vs bare':>13}"
    )
    for operation in ("status", "sale"):
        for connections in CONCURRENCY:
            floor = median_run(results[(operation, connections, "bare")])
            for kind in ("simulator", "bare"):
                run = median_run(results[(operation, connections, kind)])
                ratio = f"{run.cpu / floor.cpu:.2f}x" if kind == "simulator" else ""
                print(
                    f"{operation:<10}{connections:>6}{kind:>11}{run.rate:>9,.0f}{run.p50:>9.2f}{run.p99:>9.2f}"
                    f"{run.cpu:>12.3f}{run.errors:>8}{ratio:>13}"
                )


def memory_table(seconds: float, repeat: int, server_core: int | None, wrk_core: int | None) -> None:
    rng = random.Random(34)
    simulator = start("simulator", server_core)
    try:
        rows = [("fresh", simulator.rss_kb, None)]
        first = last = 0
        for target in (10_000, 100_000):
            first_new, last = simulator.seed(target - (last - first + 1 if last else 0))
            first = first or first_new
            bodies = status_bodies(first, last, 5000, rng)
            runs = [wrk(simulator, "status", bodies, 1, seconds, wrk_core) for _ in range(repeat)]
            rows.append((f"{target:,} orders", simulator.rss_kb, median_run(runs)))
        plans = simulator.status_plans()
    finally:
        simulator.stop()
    print(f"{'simulator':<16}{'VmRSS MB':>10}{'status CPU ms':>15}{'status p50 ms':>15}{'p99 ms':>9}")
    for label, rss, run in rows:
        if run is None:
            print(f"{label:<16}{rss / 1024:>10.1f}")
        else:
            print(f"{label:<16}{rss / 1024:>10.1f}{run.cpu:>15.3f}{run.p50:>15.2f}{run.p99:>9.2f}")
    small, big = rows[1][2], rows[2][2]
    assert small is not None and big is not None
    verdict = "flat" if big.cpu <= small.cpu * 1.25 else "NOT flat"
    print(f"status CPU at 100,000 orders vs 10,000: {big.cpu / small.cpu:.2f}x ({verdict}; goal: flat)")
    for plan in plans:
        print(f"  plan: {plan}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each wrk run")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each row (the median is shown)")
    parser.add_argument("--skip-memory", action="store_true", help="only the load table")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("bench_http.py needs wrk (apt-get install wrk)")
    server_core, wrk_core = cores()
    print(f"server core {server_core}, wrk core {wrk_core} (taskset), {args.seconds:g} s x {args.repeat} per row")
    load_table(args.seconds, args.repeat, server_core, wrk_core)
    if not args.skip_memory:
        print()
        memory_table(args.seconds, args.repeat, server_core, wrk_core)


if __name__ == "__main__":
    main()
