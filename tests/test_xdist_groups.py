"""Tests marked ``xdist_group`` share a worker under ``make test``'s ``--dist loadgroup`` (tests/xdist_groups.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_tests_of_a_group_run_on_one_worker(tmp_path: Path):
    (tmp_path / "test_grouped.py").write_text(
        "import pytest\n"
        "pytestmark = pytest.mark.xdist_group('together')\n" + "".join(f"def test_{n}(): pass\n" for n in range(6))
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-p", "no:cacheprovider",
               "-p", "tests.xdist_groups", str(tmp_path)]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    workers = re.findall(r"\[(gw\d)\] .*PASSED .*test_grouped\.py::test_\d@together", done.stdout)
    assert len(workers) == 6 and len(set(workers)) == 1, done.stdout
