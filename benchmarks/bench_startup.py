"""How fast the command line starts: ``gatekit --help``, ``gatekit sign``, ``gatekit call --help``.

    .venv/bin/python benchmarks/bench_startup.py [--runs 10] [--rounds 3]

Each command is run ``--runs`` times in a row per round (fresh processes, output thrown away);
a round's figure is the median run, and the figure printed is the median of ``--rounds`` rounds,
each round's figure beside it.  Wall time is what a person waits; CPU time (user + system of the
child, from ``getrusage``) moves less when other processes load the machine.  ``python -c pass``
is the floor: the interpreter's own start.  Goal (issue 12): ``gatekit --help`` under 0.25 s of wall
time (``gatekit call --help`` is held to it too).  ``gatekit sign`` is shown for comparison: the issue asks
that it import neither the simulator, pytest nor FastAPI (``tests/test_lazy_imports.py``), and it does
import ``requests`` (about 0.11 s), since it signs the very request ``GatewayClient.prepare`` builds.
Last row: from starting ``gatekit simulate --port 0`` to its first answer (``GET /_sim/health``), with
the simulator's CPU until then (from ``/proc``); goal: within 0.5 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_startup_simulate import first_answer

GOAL_SECONDS = 0.25
SIMULATE_GOAL = 0.5  # gatekit simulate answering within 0.5 s of its start
BIN = Path(sys.executable).parent
GATEKIT = str(BIN / "gatekit")
SIGN = ["sign", "sale", "client_orderid=inv-1", "amount=10.42", "currency=EUR", "--no-validate",
        "--nonce", "n0nce", "--timestamp", "1700000000"]  # fmt: skip


def commands(gatekit: list[str]) -> list[tuple[str, list[str], float | None]]:
    """Label, argv, goal (None: shown for comparison)."""
    return [
        ("python -c pass", [sys.executable, "-c", "pass"], None),
        ("gatekit --help", [*gatekit, "--help"], GOAL_SECONDS),
        ("gatekit sign sale ...", [*gatekit, *SIGN], None),
        ("gatekit call --help", [*gatekit, "call", "--help"], GOAL_SECONDS),
    ]


def clean_env(cwd: str) -> dict[str, str]:
    """No GATEWAY_*/GATEKIT_* settings: the built-in simulator profile, as on a fresh machine."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GATEWAY_", "GATEKIT_"))}
    return env | {"PWD": cwd}


def run_once(argv: list[str], cwd: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.decode()[:500]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(argv: list[str], *, runs: int, rounds: int, cwd: str) -> tuple[list[float], list[float]]:
    """Per round: the median wall time and the median CPU time of ``runs`` runs."""
    env = clean_env(cwd)
    return rounds_of(lambda: run_once(argv, cwd, env), runs=runs, rounds=rounds)


def rounds_of(sample: Callable[[], tuple[float, float]], *, runs: int, rounds: int) -> tuple[list[float], list[float]]:
    """One unmeasured ``sample()`` (files in the page cache), then per round the medians of ``runs`` samples."""
    sample()
    walls, cpus = [], []
    for _ in range(rounds):
        samples = [sample() for _ in range(runs)]
        walls.append(statistics.median(wall for wall, _ in samples))
        cpus.append(statistics.median(cpu for _, cpu in samples))
    return walls, cpus


def simulate_answers(gatekit: list[str], cwd: str, env: dict[str, str]) -> tuple[float, float]:
    """Seconds from starting ``gatekit simulate`` to its first answer (``/_sim/health``), and its CPU by then."""
    wall, cpu, _ = first_answer(gatekit, env, cwd)
    return wall, cpu


def measure_simulate(gatekit: list[str], *, runs: int, rounds: int, cwd: str) -> tuple[list[float], list[float]]:
    env = clean_env(cwd)
    return rounds_of(lambda: simulate_answers(gatekit, cwd, env), runs=runs, rounds=rounds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="runs per round (default 10)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the median is printed (default 3)")
    parser.add_argument("--gatekit", default=GATEKIT, help="the command that runs gatekit (another build, to compare)")
    options = parser.parse_args()
    gatekit = shlex.split(options.gatekit)
    load = os.getloadavg()
    print(f"start-up of the command line: median of {options.rounds} rounds (each the median of {options.runs} runs)")
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the start")
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print(
            "PYTHONDONTWRITEBYTECODE is set: gatekit's modules (an editable install has no .pyc) compile at each start"
        )
    print(f"{'command':<24}{'wall':>9}{'cpu':>9}   {'rounds (wall)':<24}goal")
    with tempfile.TemporaryDirectory() as cwd:  # no gatekit.toml: the simulator profile
        for label, argv, goal in commands(gatekit):
            walls, cpus = measure(argv, runs=options.runs, rounds=options.rounds, cwd=cwd)
            wall, cpu = statistics.median(walls), statistics.median(cpus)
            rounds = " ".join(f"{w * 1000:.0f}" for w in walls) + " ms"
            verdict = "" if goal is None else f"< {goal:.2f} s: {'met' if wall < goal else 'NOT met'}"
            print(f"{label:<24}{wall * 1000:>7.0f}ms{cpu * 1000:>7.0f}ms   {rounds:<24}{verdict}")
        walls, cpus = measure_simulate(gatekit, runs=max(1, options.runs // 2), rounds=options.rounds, cwd=cwd)
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        rounds = " ".join(f"{w * 1000:.0f}" for w in walls) + " ms"
        verdict = f"< {SIMULATE_GOAL:.2f} s: {'met' if wall < SIMULATE_GOAL else 'NOT met'}"
        print(f"{'simulate, 1st answer':<24}{wall * 1000:>7.0f}ms{cpu * 1000:>7.0f}ms   {rounds:<24}{verdict}")
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end")
    return 0  # a figure, not a test: make bench goes on to the next benchmark


if __name__ == "__main__":
    sys.exit(main())
