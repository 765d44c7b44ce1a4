"""gatekit's plugin in a merchant's strict project (``filterwarnings = error``): the embedded simulator starts with
the first test that needs the gateway, 300 quick tests run while it builds its app, then pages and the control API
answer (issue 34, #2: the build raised a warning made an error in 3 runs of 14, and every page and control call
answered 500 until the session ended).

``GATEKIT_STRICT_RUNS`` sets how many sessions run (1 here; ``make test-reliability`` runs 20).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

RUNS = int(os.environ.get("GATEKIT_STRICT_RUNS", "1"))
pytestmark = pytest.mark.slow

PROJECT = {
    "pytest.ini": "[pytest]\nfilterwarnings = error\n",
    "test_strict.py": """
import pytest
import requests


def test_000_the_gateway_answers_at_once(gateway_client, gateway_config):
    assert gateway_config.base_url  # the embedded simulator started: its app builds meanwhile


@pytest.mark.parametrize("n", range(300))
def test_quick(n):
    assert n >= 0


def test_zzz_the_control_api_and_the_pages_answer(simulator_control, gateway_simulator):
    assert simulator_control.clock()["offset"] == 0
    page = requests.get(gateway_simulator.base_url + "/form/no-such-token", timeout=30)
    assert page.status_code == 404 and "page-error" in page.text
""",
}


def test_a_strict_project_passes_every_run(tmp_path: Path) -> None:
    for name, text in PROJECT.items():
        (tmp_path / name).write_text(text)
    clean = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    outcomes = []
    for _ in range(RUNS):
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=tmp_path,
                              env=clean, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
        outcomes.append(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-2000:])
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert all(line.startswith("302 passed") for line in outcomes), outcomes
