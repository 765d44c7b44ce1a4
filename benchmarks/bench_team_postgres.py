"""The team simulator on PostgreSQL against the same command on a SQLite file, with pgbench's rate beside (issue 39).

    .venv/bin/python benchmarks/bench_team_postgres.py [--seconds 5] [--repeat 3]

Each repetition runs, one after the other in the same run: ``gatekit simulate --quiet --workers 2`` on a SQLite file
(a temporary folder), the same command on a new database of a throwaway PostgreSQL cluster (``tests.postgres``),
and ``pgbench -N`` (16 clients) on that cluster.  Each simulator answers a 1 s run of sales first (cold; those orders
are the ones asked about below), then:

- **mixed** (the goal's figure): ``wrk`` with 32 connections sends sales, each a new order, bodies signed beforehand,
  for ``--seconds``, and at the same time a second ``wrk`` with 8 connections asks for the status of the orders
  made while warming: sales/s and the status p99 *while sales are taken*, and the simulator's CPU per request of
  either kind;
- **status alone** (the first round's status figure, kept for comparison): after the sales, ``wrk`` with 32
  connections asks only for status, for ``--seconds``.

Both ``wrk`` run pinned to one core as in ``bench_team.py``.  The databases of the simulator and of pgbench commit
synchronously (``synchronous_commit=on`` on each database; the throwaway cluster itself runs without ``fsync``, as
the tests run it).  Every repetition is printed with the machine's load (``os.getloadavg``) and the references
beside it; then the medians.

Goal: sales/s on PostgreSQL at least 0.8x the SQLite file's, with status p99 under 30 ms while it does
(the mixed run's).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from bench_http import Run, wrk
from benchservers import Simulate, presigned

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.postgres import Cluster, cluster, skip_reason  # noqa: E402  (the throwaway cluster the tests use)

CONNECTIONS = 32
STATUS_CONNECTIONS = 8  # the status wrk that runs beside the sales wrk
PGBENCH_CLIENTS = 16
GOAL = 0.8  # PostgreSQL's sales/s over the SQLite file's
STATUS_P99_MS = 30.0


@dataclass
class Measured:
    sales: Run  # the mixed run's sales (32 connections)
    status: Run  # the mixed run's status (8 connections, at the same time)
    cpu: float  # the simulator's CPU per request of the mixed run (sales and status), ms
    alone: Run  # status alone, after the sales (32 connections): the first round's status figure


def _load_core() -> int | None:
    """The core wrk and pgbench run on (the last one), as in ``bench_team.py``."""
    count = os.cpu_count() or 1
    return count - 1 if count > 1 else None


def _load() -> str:
    """The machine's load averages (``uptime``): others may be using it while this runs."""
    return " ".join(f"{load:.2f}" for load in os.getloadavg())


def _measure(options: list[str], seconds: float, name: str) -> Measured:
    """``gatekit simulate --quiet --workers 2 OPTIONS`` started, warmed, measured (sales with status beside, then
    status alone) and stopped."""
    simulator = Simulate("--quiet", "--workers", "2", *options)
    core = _load_core()
    try:
        warm, warm_statuses = presigned(f"{name}-warm", 4000)
        warmed = wrk(simulator, "sale", warm, CONNECTIONS, 1, core)  # type: ignore[arg-type]
        known = warm_statuses[: max(1, min(len(warm), int(warmed.rate)))]  # (orders made while warming)
        sales, statuses = presigned(name, max(20_000, int(3000 * seconds)))
        runs: dict[str, Run] = {}
        beside = threading.Thread(target=lambda: runs.setdefault(
            "status", wrk(simulator, "status", known, STATUS_CONNECTIONS, seconds, core)))  # type: ignore[arg-type]  # fmt: skip
        before = simulator.cpu_seconds
        beside.start()
        sold = wrk(simulator, "sale", sales, CONNECTIONS, seconds, core)  # type: ignore[arg-type]
        beside.join()
        spent = simulator.cpu_seconds - before
        status = runs["status"]
        cpu = spent * 1000 / max(1.0, (sold.rate + status.rate) * seconds)
        done = max(1, min(len(statuses), int(sold.rate * seconds)))
        alone = wrk(simulator, "status", statuses[:done], CONNECTIONS, seconds, core)  # type: ignore[arg-type]
    finally:
        simulator.stop()
    return Measured(sold, status, cpu, alone)


def _synchronous(pg: Cluster, url: str) -> str:
    """The database of ``url`` commits synchronously (a database's setting overrides the cluster's ``-c``)."""
    import psycopg

    with psycopg.connect(pg.url(), autocommit=True) as conn:
        conn.execute(f"ALTER DATABASE {url.rsplit('/', 1)[1]} SET synchronous_commit=on")
    return url


def _pgbench(pg: Cluster, url: str, seconds: float) -> float:
    """``pgbench -N`` with 16 clients on the cluster (its database initialised once): transactions per second."""
    command = ["pgbench", "-N", "-n", "-c", str(PGBENCH_CLIENTS), "-j", "2", "-T", str(max(1, round(seconds))), url]
    core = _load_core()
    if core is not None and shutil.which("taskset"):
        command = ["taskset", "-c", str(core), *command]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return float(re.search(r"tps = ([\d.]+)", output).group(1))  # type: ignore[union-attr]


def _checkpoint(pg: Cluster) -> None:
    """The cluster's dirty pages written now (not during the next configuration's run)."""
    import psycopg

    with psycopg.connect(pg.url(), autocommit=True) as conn:
        conn.execute("CHECKPOINT")


def _line(repetition: int, load: str, name: str, measured: Measured, extra: str = "") -> None:
    sold, status, alone = measured.sales, measured.status, measured.alone
    print(f"run {repetition + 1} load {load:14} {name:22} sales/s {sold.rate:5.0f} (p99 {sold.p99:5.1f} ms, "
          f"errors {sold.errors}) | status p99 WHILE SELLING {status.p99:5.1f} ms (status/s {status.rate:5.0f}, "
          f"errors {status.errors}) | cpu {measured.cpu:.2f} ms/request | status alone after: p99 {alone.p99:5.1f} "
          f"ms ({alone.rate:.0f}/s){extra}", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each wrk and pgbench run")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions (interleaved)")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("bench_team_postgres.py needs wrk (apt-get install wrk)")
    if reason := skip_reason():
        print(f"PostgreSQL not measured: {reason}")
        return
    if not shutil.which("pgbench"):
        sys.exit("bench_team_postgres.py needs pgbench (Debian's postgresql-client)")
    sqlite, postgres, pgbench, ratios = [], [], [], []
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gatekit-team-pg-")))
        pg = stack.enter_context(cluster())
        bench_db = _synchronous(pg, pg.new_database())
        subprocess.run(["pgbench", "-i", "-q", "-s", "1", bench_db], capture_output=True, check=True)
        for repetition in range(args.repeat):
            run = f"teampg-{os.getpid()}-{repetition}"
            load = _load()
            sqlite.append(_measure(["--db", str(folder / f"file-{repetition}.db")], args.seconds, f"{run}-file"))
            _line(repetition, load, "2 workers, SQLite file", sqlite[-1])
            load = _load()
            url = _synchronous(pg, pg.new_database())
            postgres.append(_measure(["--db", url], args.seconds, f"{run}-pg"))
            _checkpoint(pg)
            load_pg = _load()
            pgbench.append(_pgbench(pg, bench_db, args.seconds))
            _checkpoint(pg)
            ratios.append(postgres[-1].sales.rate / sqlite[-1].sales.rate)
            verdict = "met" if ratios[-1] >= GOAL and postgres[-1].status.p99 < STATUS_P99_MS else "NOT met"
            _line(repetition, load, "2 workers, PostgreSQL", postgres[-1],
                  f"\n      = {ratios[-1]:.2f}x the SQLite file's {sqlite[-1].sales.rate:.0f} sales/s (goal {GOAL}x, "
                  f"status p99 while selling < {STATUS_P99_MS:g} ms: {verdict}); pgbench -N {pgbench[-1]:.0f} tps "
                  f"(load {load_pg})")  # fmt: skip
    print(
        f"\nmedian of {args.repeat}, {args.seconds:g} s per wrk run: sales with {CONNECTIONS} connections and status "
        f"with {STATUS_CONNECTIONS} at the same time (the goal's figures); status alone after with {CONNECTIONS}:"
    )
    for name, runs in (("2 workers, SQLite file", sqlite), ("2 workers, PostgreSQL", postgres)):
        print(f"  {name:22} sales/s {statistics.median(m.sales.rate for m in runs):5.0f}   status p99 while selling "
              f"{statistics.median(m.status.p99 for m in runs):5.1f} ms   status p99 alone "
              f"{statistics.median(m.alone.p99 for m in runs):5.1f} ms   (runs: sales/s "
              f"{', '.join(f'{m.sales.rate:.0f}' for m in runs)}; status p99 while selling "
              f"{', '.join(f'{m.status.p99:.1f}' for m in runs)}; alone "
              f"{', '.join(f'{m.alone.p99:.1f}' for m in runs)})")  # fmt: skip
    print(f"  pgbench -N, {PGBENCH_CLIENTS} clients    tps {statistics.median(pgbench):5.0f}   "
          f"(runs: {', '.join(f'{rate:.0f}' for rate in pgbench)})")  # fmt: skip
    ratio = statistics.median(ratios)
    p99 = max(m.status.p99 for m in postgres)
    verdict = "PASS" if ratio >= GOAL and p99 < STATUS_P99_MS else "NOT MET"
    each = ", ".join(f"{r:.2f}x" for r in ratios)
    print(f"PostgreSQL / SQLite file: {ratio:.2f}x sales/s (goal >= {GOAL}x), worst status p99 while selling "
          f"{p99:.1f} ms (goal < {STATUS_P99_MS:g} ms): {verdict}   (each repetition: {each})")  # fmt: skip


if __name__ == "__main__":
    main()
