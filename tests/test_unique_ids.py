"""Each test has a node id of its own (tests/unique_ids.py): schemathesis's tests, one per API operation, all run
under ``make test``'s ``--dist loadgroup``, and a duplicate id stops the run, named."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = """
import schemathesis

paths = {f"/item{n}": {"get": {"operationId": f"item{n}", "responses": {"200": {"description": "ok"}}}}
         for n in range(3)}
SCHEMA = schemathesis.openapi.from_dict({"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": paths})
SCHEMA.config.phases.coverage.enabled = False

@SCHEMA.parametrize()
def test_each_operation(case):
    assert case.operation.path.startswith("/item")
"""


def run(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-p", "tests.unique_ids", *options,
               str(tmp_path)]  # fmt: skip
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_every_api_operation_is_a_test_of_its_own_under_loadgroup(tmp_path: Path) -> None:
    (tmp_path / "test_api.py").write_text(SCHEMA)
    done = run(tmp_path, "-n", "2", "--dist", "loadgroup")
    assert done.returncode == 0 and "3 passed" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    ran = re.findall(r"PASSED .*test_api\.py::test_each_operation\[GET (/item\d)\]", done.stdout)
    assert sorted(ran) == ["/item0", "/item1", "/item2"], done.stdout


def test_two_tests_with_one_id_stop_the_run_naming_it(tmp_path: Path) -> None:
    (tmp_path / "test_twice.py").write_text("def test_once():\n    pass\n")
    (tmp_path / "conftest.py").write_text("def pytest_collection_modifyitems(items):\n    items.append(items[0])\n")
    done = run(tmp_path, "-p", "no:xdist")
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1 node ids are shared by several tests (one would run): ['test_twice.py::test_once']" in done.stderr
