"""How many flows a second one load-generator process (one Locust process, one core) sustains (issue 22).

    .venv/bin/python benchmarks/bench_load_generator.py [--seconds 10] [--users 40] [--repeat 1]

``gatekit load --headless --think 0`` runs as users run it, against the simulator it starts (in the gatekit
process: the Locust process is its child), one flow at a time and then the default mix. The Locust process's
CPU time comes from /proc; the figure for a core of its own is flows/s divided by the share of a core it used
(when it used less than a whole one, the simulator or the machine held it back: the line says so). Divide the
flows/s a test needs by that figure to know how many Locust worker processes it needs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from toolkit.load.plan import FLOWS  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(child) for child in text.split()]


def one_run(weights: str, users: int, seconds: float) -> tuple[float, float, float, int]:
    """(flows/s, share of a core the Locust process used, the simulator's share, failed flows)."""
    with tempfile.TemporaryDirectory() as folder:
        command = [str(ROOT / ".venv" / "bin" / "gatekit"), "load", "--headless", "-u", str(users), "-r",
                   str(users), "-t", f"{seconds:g}s", "--think", "0", "--weights", weights, "--reports", folder,
                   "--", "--only-summary", "--loglevel", "WARNING"]  # fmt: skip
        process = subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        locust: int | None = None
        while locust is None and process.poll() is None:
            time.sleep(0.05)
            found = children(process.pid)
            locust = found[0] if found else None
        time.sleep(2.0)  # (Locust's start-up and the users' spawn left out)
        before = (cpu_seconds(locust), cpu_seconds(process.pid)) if locust else (0.0, 0.0)
        started = time.monotonic()
        time.sleep(max(0.5, seconds - 3.0))
        after = (cpu_seconds(locust), cpu_seconds(process.pid)) if locust else (0.0, 0.0)
        elapsed = time.monotonic() - started
        process.wait(timeout=seconds + 120)
        results = json.loads(Path(folder, "results.json").read_text())
    flows = [row for row in results["rows"] if row["type"] == "flow"]
    rate = sum(row["requests"] for row in flows) / results["seconds"]
    failed = sum(row["failures"] for row in flows)
    return rate, (after[0] - before[0]) / elapsed, (after[1] - before[1]) / elapsed, failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each run")
    parser.add_argument("--users", type=int, default=40, help="Locust users (enough to keep one process busy)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each flow (the median is printed)")
    args = parser.parse_args()
    mix = ",".join(f"{name}={weight}" for name, weight in FLOWS.items())
    plans = [(name, f"{name}=1") for name in FLOWS] + [("default mix", mix)]
    print(f"{args.users} users, think 0, {args.seconds:g} s per run, {args.repeat} run(s) each; one Locust process")
    for name, weights in plans:
        runs = [one_run(weights, args.users, args.seconds) for _ in range(args.repeat)]
        rate = statistics.median(r[0] for r in runs)
        share = statistics.median(r[1] for r in runs)
        simulator = statistics.median(r[2] for r in runs)
        per_core = rate / share if share > 0 else float("nan")
        bound = (
            "" if share >= 0.9 else f"  (the generator used {share:.0%} of a core: held back, the figure is a floor)"
        )
        print(f"  {name:16} {rate:7.1f} flows/s, generator {share:4.0%} of a core, simulator {simulator:4.0%}: "
              f"{per_core:7.1f} flows/s per generator core; failed {sum(r[3] for r in runs)}"
              f" (runs: {', '.join(f'{r[0]:.1f}' for r in runs)}){bound}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
