"""Client CPU per sale + status: GatewayClient against requests.Session posting pre-built bodies.

    .venv/bin/python benchmarks/bench_client.py [--seconds 2] [--repeat 3] [--profile]

The simulator (and a bare ASGI app, for the round-trip row) run in their own processes pinned
to one core; this process, the client, is pinned to the other.  The client's CPU is read with
``time.process_time`` in this process, so work done by the server or by other programs on the
machine moves it little.  Rows, interleaved ``--repeat`` times (medians shown):

  GatewayClient            sale then status (validation, control signing, decoding, typed responses)
  requests, pre-built      requests.Session posting bodies encoded and signed beforehand, ``.json()``
  bare app, requests       requests.Session against a bare uvicorn app (round trips only)

Goals (issue 12): client CPU of the GatewayClient <= 1.2x that of requests with pre-built bodies;
round trips per second through the GatewayClient >= 0.6x those of requests against the bare app.
``--profile`` runs the GatewayClient rows under cProfile and prints the client's hot spots.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_simulator import (
    Server,
    bare_round_trips,
    client_round_trips,
    cores,
    presigned_round_trips,
    start,
)
from counters import Counter


@dataclass(frozen=True)
class Measure:
    rate: float  # round trips per second
    client_cpu: float  # ms of this process's CPU per round trip
    client_instructions: float | None  # this thread's user-space instructions per round trip (None: not counted)


def timed(round_trip: Callable[[int], None], seconds: float, server: Server) -> Measure:
    """Round trips per second, and the client's CPU and instructions per round trip, over about ``seconds``."""
    for n in range(100):  # warm-up: connections, caches, the store's first pages
        round_trip(100_000 + n)
    count = 0
    started = time.perf_counter()
    deadline = started + seconds
    with Counter() as counted:
        while time.perf_counter() < deadline:
            round_trip(count)
            count += 1
    elapsed = time.perf_counter() - started
    instructions = None if counted.instructions is None else counted.instructions / count
    return Measure(count / elapsed, counted.cpu_seconds * 1000 / count, instructions)


CPU_GOAL = 1.2
RATE_GOAL = 0.6
ROWS = ("GatewayClient", "requests, pre-built bodies", "bare app, requests")


def measure(seconds: float, repeat: int, server_core: int | None) -> dict[str, list[Measure]]:
    results: dict[str, list[Measure]] = {row: [] for row in ROWS}
    simulator, bare = start("simulator", server_core), start("bare", server_core)
    try:
        for round_number in range(repeat):
            run = f"client-{os.getpid()}-{round_number}"
            results[ROWS[0]].append(timed(client_round_trips(simulator.port, run), seconds, simulator))
            results[ROWS[1]].append(
                timed(presigned_round_trips(simulator.port, run + "-raw", 20000), seconds, simulator)
            )
            results[ROWS[2]].append(timed(bare_round_trips(bare.port), seconds, bare))
    finally:
        simulator.stop()
        bare.stop()
    return results


def table(results: dict[str, list[Measure]]) -> str:
    cpu = {row: statistics.median(m.client_cpu for m in runs) for row, runs in results.items()}
    rate = {row: statistics.median(m.rate for m in runs) for row, runs in results.items()}
    counted = all(m.client_instructions is not None for runs in results.values() for m in runs)
    instructions = {
        row: statistics.median(m.client_instructions or 0.0 for m in runs) if counted else None
        for row, runs in results.items()
    }
    lines = [
        f"{'client':<28}{'client CPU ms (runs)':>24}{'median':>8}{'instructions':>14}{'round trips/s':>15}",
    ]
    for row, runs in results.items():
        each = " ".join(f"{m.client_cpu:.3f}" for m in runs)
        shown = "n/a" if instructions[row] is None else f"{instructions[row]:,.0f}"
        lines.append(f"{row:<28}{each:>24}{cpu[row]:>8.3f}{shown:>14}{rate[row]:>15,.0f}")
    gateway, bare = ROWS[0], ROWS[1]
    cpu_ratio = cpu[gateway] / cpu[bare]
    lines.append(
        f"client CPU per sale + status, GatewayClient / requests pre-built: {cpu_ratio:.2f}x "
        f"(goal <= {CPU_GOAL}x: {'reached' if cpu_ratio <= CPU_GOAL else 'NOT reached'})"
    )
    mine, theirs = instructions[gateway], instructions[bare]
    if mine is not None and theirs is not None:
        ratio = mine / theirs
        lines.append(
            f"client instructions, GatewayClient / requests pre-built:         {ratio:.2f}x "
            f"(goal <= {CPU_GOAL}x: {'reached' if ratio <= CPU_GOAL else 'NOT reached'}; not moved by other work)"
        )
    rate_ratio = rate[gateway] / rate[ROWS[2]]
    lines.append(
        f"round trips, GatewayClient / requests against the bare app:       {rate_ratio:.2f}  "
        f"(goal >= {RATE_GOAL}: {'reached' if rate_ratio >= RATE_GOAL else 'NOT reached'}; the server's share too)"
    )
    return "\n".join(lines)


def profile(seconds: float, server_core: int | None) -> str:
    simulator = start("simulator", server_core)
    try:
        round_trip = client_round_trips(simulator.port, f"profile-{os.getpid()}")
        profiler = cProfile.Profile()
        profiler.enable()
        measured = timed(round_trip, seconds, simulator)
        profiler.disable()
    finally:
        simulator.stop()
    out = io.StringIO()
    out.write(f"GatewayClient under cProfile: {measured.rate:,.0f} round trips/s\n")
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(30)
    stats.sort_stats("cumulative").print_stats(40)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time spent on each row, each repetition")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved repetitions (medians are shown)")
    parser.add_argument("--profile", action="store_true", help="profile the GatewayClient rows (cProfile)")
    args = parser.parse_args()
    server_core, client_core = cores(same_core=False)
    if client_core is not None:
        os.sched_setaffinity(0, {client_core})
    print(f"server core {server_core}, client core {client_core}, {args.seconds:g} s x {args.repeat} per row")
    if args.profile:
        print(profile(args.seconds, server_core))
        return
    print(table(measure(args.seconds, args.repeat, server_core)))


if __name__ == "__main__":
    main()
