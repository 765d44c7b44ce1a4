"""A short pass of ``benchmarks/bench_simulate_cpu.py`` (``make bench`` runs it at length): it runs, it measures
every server and kind, and it judges each goal.  No figure is asserted: a test never asserts a time."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_simulate_cpu_benchmark_runs_and_judges_every_goal():
    command = [sys.executable, "benchmarks/bench_simulate_cpu.py", "--pairs", "60", "--repeat", "2", "--chunk", "20",
               "--warm-pairs", "20"]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "(after a first round of 20 pairs, not counted)" in done.stdout.splitlines()[0], done.stdout[:300]
    server = r"(bare uvicorn|gatekit simulate(?: --quiet)?|in-process SimulatorServer)"
    rows = re.findall(rf"^{server}\s+(pair|sale|status)\s+(\d+\.\d+) \(\d+\.\d+x\), (\d+\.\d+) \(\d+\.\d+x\)",
                      done.stdout, re.MULTILINE)  # fmt: skip
    assert len(rows) == 12, done.stdout
    assert all(float(first) > 0 and float(second) > 0 for *_, first, second in rows), done.stdout
    goals = re.findall(r"^goal (.+): <= (\d\.\d)x bare: (\d+\.\d+)x, (met|NOT met)$", done.stdout, re.MULTILINE)
    assert [goal for goal, *_ in goals] == ["pair, log on", "pair, --quiet", "sale alone", "status alone"], done.stdout
