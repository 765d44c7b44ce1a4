"""The team simulator under load: sales per second and status p99 at 64 connections, ``gatekit simulate`` with 1
and 2 worker processes on SQLite and 2 on PostgreSQL, in one run (issue 21).

    .venv/bin/python benchmarks/bench_team.py [--seconds 5] [--repeat 3]

Each simulator is started as users start it (``gatekit simulate --quiet --port 0 --workers N --db ...``: a
SQLite file in a temporary folder, or a database of a throwaway PostgreSQL cluster). Load: ``wrk`` pinned to
one core with ``taskset`` as in ``bench_http.py`` (bodies signed beforehand: one new client_orderid per sale,
then status requests for those orders).  One worker's process is pinned to the other core (unpinned, the
scheduler moved its threads onto wrk's core half of the time: 1,857-2,177 sales/s against 2,112-2,506 pinned);
two workers are not pinned (they need both cores: wrk shares them).  The SQLite configurations run in turn,
``--repeat`` times (interleaved); then the PostgreSQL cluster is started for its runs (its background work after
a run slowed the next SQLite runs by 5-15% and made them vary).  Each simulator answers a 1 s run of sales before
it is measured (the first, cold, was the slowest).  Every repetition is printed with the median.  The goal:
2 workers on SQLite at least 1.7x the sales/s of one.

A reference runs in turn with them: two simulators that share nothing (a SQLite file each, two wrk processes of
32 connections on wrk's core), whose sales/s added are what two processes make on this machine with no shared
store at all.  Its ratio to one worker is the ceiling of any way of sharing a store here; the run prints what
share of it the two workers on one file make (their shared store's cost).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

from bench_http import Run, wrk
from benchservers import Simulate, presigned

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.postgres import cluster, skip_reason  # noqa: E402  (the throwaway cluster the tests use)

CONNECTIONS = 64
GOAL = 1.7
SEPARATE = "2 simulators, no sharing"


def measure(simulator: Simulate, seconds: float, run_name: str) -> tuple[Run, Run]:
    warm, _ = presigned(f"{run_name}-warm", 8000)
    wrk(simulator, "sale", warm, CONNECTIONS, 1, _wrk_core())  # type: ignore[arg-type]
    sales, statuses = presigned(run_name, max(20_000, int(4000 * seconds)))
    sold = wrk(simulator, "sale", sales, CONNECTIONS, seconds, _wrk_core())  # type: ignore[arg-type]
    done = max(1, int(sold.rate * seconds))
    status = wrk(simulator, "status", statuses[:done], CONNECTIONS, seconds, _wrk_core())  # type: ignore[arg-type]
    return sold, status


def _run(
    results: dict[str, list[tuple[Run, Run]]],
    seconds: float,
    repetition: int,
    name: str,
    options: list[str],
    cores: str | None = None,
) -> None:
    """One configuration, measured once: its simulator started, warmed, measured and stopped."""
    simulator = Simulate("--quiet", *options, cores=cores)
    try:
        run_name = f"team-{os.getpid()}-{repetition}-{len(results.get(name, []))}"
        results.setdefault(name, []).append(measure(simulator, seconds, run_name))
    finally:
        simulator.stop()
    sold, status = results[name][-1]
    print(f"run {repetition + 1} {name:24} sales/s {sold.rate:8.0f} (p99 {sold.p99:6.1f} ms, server cpu "
          f"{sold.cpu:.2f} ms/sale, errors {sold.errors})   status/s {status.rate:8.0f}  status p99 "
          f"{status.p99:6.1f} ms", flush=True)  # fmt: skip


def _separate(seconds: float, repetition: int, folder: Path) -> float:
    """The reference: two simulators that share nothing (a file each), loaded at once by two wrk processes of 32
    connections each (on wrk's core): what two processes make on this machine with no shared store.  Sales/s, the
    two added."""
    simulators = [Simulate("--quiet", "--db", str(folder / f"apart-{repetition}-{n}.db")) for n in range(2)]
    try:
        _both(simulators, f"apart-{os.getpid()}-{repetition}-warm", 1)
        runs = _both(simulators, f"apart-{os.getpid()}-{repetition}", seconds)
    finally:
        for simulator in simulators:
            simulator.stop()
    rate = sum(run.rate for run in runs)
    cpu = sum(run.cpu * run.rate for run in runs) / max(rate, 1)
    print(f"run {repetition + 1} {SEPARATE:24} sales/s {rate:8.0f} (server cpu {cpu:.2f} ms/sale, errors "
          f"{sum(run.errors for run in runs)})", flush=True)  # fmt: skip
    return rate


def _both(simulators: list[Simulate], name: str, seconds: float) -> list[Run]:
    """Sales to each simulator at once, half the connections each, each with bodies of its own."""
    with ThreadPoolExecutor(len(simulators)) as pool:
        runs = [pool.submit(wrk, simulator, "sale", presigned(f"{name}-{n}", 12_000)[0],  # type: ignore[arg-type]
                            CONNECTIONS // len(simulators), seconds, _wrk_core())
                for n, simulator in enumerate(simulators)]  # fmt: skip
        return [run.result() for run in runs]


def _other_core() -> str | None:
    """The core wrk does not use: one worker's process is pinned there (a whole core of its own, never shared with
    wrk: the best case for one process, so the ratio of two workers to it is the strict one)."""
    core = _wrk_core()
    return None if core is None else str(core - 1)


def _wrk_core() -> int | None:
    return (os.cpu_count() or 1) - 1 if (os.cpu_count() or 1) > 1 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each wrk run")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of every configuration (interleaved)")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("bench_team.py needs wrk (apt-get install wrk)")
    results: dict[str, list[tuple[Run, Run]]] = {}
    apart: list[float] = []
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gatekit-team-")))
        for repetition in range(args.repeat):  # SQLite first, with no PostgreSQL server running beside it
            one, two = str(folder / f"one-{repetition}.db"), str(folder / f"two-{repetition}.db")
            _run(results, args.seconds, repetition, "1 worker, SQLite", ["--db", one], _other_core())
            _run(results, args.seconds, repetition, "2 workers, SQLite", ["--workers", "2", "--db", two])
            apart.append(_separate(args.seconds, repetition, folder))
        pg = None if skip_reason() else stack.enter_context(cluster())
        if pg is not None:
            for repetition in range(args.repeat):
                options = ["--workers", "2", "--db", pg.new_database()]
                _run(results, args.seconds, repetition, "2 workers, PostgreSQL", options)
    print(f"\n{CONNECTIONS} connections, {args.seconds:g} s per wrk run, median of {args.repeat}:")
    medians = {}
    for name, runs in results.items():
        sales = statistics.median(sold.rate for sold, _ in runs)
        p99 = statistics.median(status.p99 for _, status in runs)
        medians[name] = sales
        print(f"  {name:24} sales/s {sales:8.0f}   status p99 {p99:6.1f} ms   "
              f"(sales/s runs: {', '.join(f'{sold.rate:.0f}' for sold, _ in runs)})")  # fmt: skip
    ratio = medians["2 workers, SQLite"] / medians["1 worker, SQLite"]
    verdict = "PASS" if ratio >= GOAL else "NOT MET"
    pairs = zip(results["2 workers, SQLite"], results["1 worker, SQLite"], strict=True)
    each = [two.rate / one.rate for (two, _), (one, _) in pairs]
    print(f"2 workers / 1 worker on SQLite: {ratio:.2f}x sales/s (goal >= {GOAL}x): {verdict}   "
          f"(each repetition: {', '.join(f'{r:.2f}x' for r in each)})")  # fmt: skip
    ceiling = statistics.median(apart)
    print(
        f"{SEPARATE}: sales/s {ceiling:.0f} (runs: {', '.join(f'{rate:.0f}' for rate in apart)}), "
        f"{ceiling / medians['1 worker, SQLite']:.2f}x one worker: what two processes make here with no shared "
        f"store; 2 workers on one SQLite file make {medians['2 workers, SQLite'] / ceiling:.0%} of it"
    )
    if pg is None:
        print(f"PostgreSQL not measured: {skip_reason()}")


if __name__ == "__main__":
    main()
