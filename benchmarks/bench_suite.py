"""The certification suite, serial against two xdist workers: ``pytest steps`` and ``gatekit certify``.

    .venv/bin/python benchmarks/bench_suite.py [--rounds 3] [--only pytest|certify]

Each row runs the suite ``--rounds`` times (fresh processes) and prints the median wall time,
each round beside it, and the CPU time of the run (user + system of every process, from
``getrusage``).  ``pytest`` runs ``pytest -q steps`` in the checkout; ``certify`` runs
``gatekit certify --no-html`` from an empty directory, as a merchant would (no own features: it
blocks the dev-only plugins schemathesis and hypothesis itself, ``runner.UNUSED_BY_THE_SUITE``).
Serial and ``-n 2`` runs alternate, round by round, so a change of load moves both alike.
The goal (issue 12): with ``-n 2`` the suite is faster than serial (ratio < 1).  On a 2-core
machine the two workers each start a Python with pytest and its plugins: what they save is the
test time of half the suite, so the figure depends on how much else loads the machine (the load
average is printed before and after).  ``PYTHONDONTWRITEBYTECODE=1`` makes every process compile
gatekit from source and pytest rewrite it again; it is printed when set.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def clean_env() -> dict[str, str]:
    """No GATEWAY_*/GATEKIT_* settings: the embedded simulator; no real browser (no Chromium start-up in the figure)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GATEWAY_", "GATEKIT_", "PYTEST_"))}
    return env | {"GATEKIT_BROWSER": "off"}


def run_once(argv: list[str], cwd: Path, extra_env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system of the process and its children) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    env = clean_env() | (extra_env or {})
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}\n{(done.stdout + done.stderr)[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(
    serial: list[str], parallel: list[str], cwd: Path, rounds: int, env: dict[str, str]
) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """(wall, CPU) of each round, serial and parallel, the two run in turn."""
    pairs = [(run_once(serial, cwd, env), run_once(parallel, cwd, env)) for _ in range(rounds)]
    return [pair[0] for pair in pairs], [pair[1] for pair in pairs]


Row = tuple[str, list[str], list[str], Path, dict[str, str]]


def commands(which: str, scratch: Path) -> list[Row]:
    """(label, serial argv, parallel argv, working directory, extra environment)."""
    rows: list[Row] = []
    if which in ("all", "pytest"):
        pytest = [str(BIN / "pytest"), "-q", "-p", "no:cacheprovider", "steps"]
        rows.append(("pytest steps", pytest, [*pytest, "-n", "2"], ROOT, {}))
    if which in ("all", "certify"):
        certify = [str(BIN / "gatekit"), "certify", "--no-html", "--results", "results", "--reports", "reports"]
        rows.append(("gatekit certify", certify, [*certify, "-n", "2"], scratch, {}))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each command; the median is printed")
    parser.add_argument("--only", choices=("pytest", "certify"), help="one of the two suites")
    options = parser.parse_args()
    print(f"the suite, serial vs -n 2: median of {options.rounds} runs (wall time; CPU of all processes)")
    print(f"machine: {os.cpu_count()} cores, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the start")
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("PYTHONDONTWRITEBYTECODE is set: every process compiles gatekit from source (slower starts)")
    print(f"{'suite':<18}{'serial':>9}{'-n 2':>9}{'ratio':>8}   {'rounds serial | -n 2':<32}{'cpu s | -n 2':<16}goal")
    with tempfile.TemporaryDirectory() as scratch:
        for label, serial, parallel, cwd, env in commands(options.only or "all", Path(scratch)):
            run_once(serial, cwd, env)  # warm the file cache (and write bytecode where it may be written)
            serial_runs, parallel_runs = measure(serial, parallel, cwd, options.rounds, env)
            walls_s, cpus_s = [wall for wall, _ in serial_runs], [cpu for _, cpu in serial_runs]
            walls_p, cpus_p = [wall for wall, _ in parallel_runs], [cpu for _, cpu in parallel_runs]
            s, p = statistics.median(walls_s), statistics.median(walls_p)
            rounds = f"{' '.join(f'{w:.1f}' for w in walls_s)} | {' '.join(f'{w:.1f}' for w in walls_p)}"
            cpu = f"{statistics.median(cpus_s):.1f} | {statistics.median(cpus_p):.1f}"
            verdict = "met" if p < s else "NOT met"
            print(f"{label:<18}{s:>8.2f}s{p:>8.2f}s{p / s:>8.2f}   {rounds:<32}{cpu:<16}-n 2 < serial: {verdict}")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")
    return 0  # a figure, not a test: make bench goes on


if __name__ == "__main__":
    sys.exit(main())
