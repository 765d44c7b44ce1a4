"""``gatekit certify`` says what it is doing while it works: a first line before pytest starts (its start and the
collection take seconds), a line once the scenarios are collected with what starts next, and a line while the
HTML report is made (Allure takes 7 to 30 s), then how long it took."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.certify.test_run import FEATURES, STEPS

FAKE_ALLURE = """\
#!{python}
import pathlib, sys, time
time.sleep(0.3)
report = pathlib.Path(sys.argv[sys.argv.index("-o") + 1])
report.mkdir(parents=True, exist_ok=True)
(report / "index.html").write_text("<html><body>report</body></html>")
"""


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A merchant's small suite, and an Allure that writes an empty report (``./node_modules/.bin/allure``)."""
    (tmp_path / "features").mkdir()
    for name, text in FEATURES.items():
        (tmp_path / "features" / name).write_text(text)
    (tmp_path / "conftest.py").write_text(STEPS)
    allure = tmp_path / "node_modules" / ".bin" / "allure"
    allure.parent.mkdir(parents=True)
    allure.write_text(FAKE_ALLURE.format(python=sys.executable))
    allure.chmod(0o755)
    return tmp_path


def certify(where: Path, *args: str) -> list[str]:
    command = [sys.executable, "-m", "toolkit.cli", "certify", "--suite-only", "--tags", "not sunday", *args]
    env = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    done = subprocess.run(command, cwd=where, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 1, done.stdout + done.stderr  # (one scenario fails on purpose)
    return done.stdout.splitlines()


def test_it_says_what_it_starts_before_the_first_scenario_and_while_it_makes_the_report(shop):
    lines = certify(shop)

    first = "gatekit certify: 3 scenarios of 2 flows, profile simulator; starting pytest and collecting them…"
    assert lines[0] == first
    assert re.fullmatch(r"collected 3 scenarios in \d+\.\d s; starting the embedded simulator…", lines[1]), lines
    assert lines[2].startswith("[1/3] ")
    making = lines.index("making the HTML report (Allure)…")
    assert making > lines.index("Flow           verdict  passed  failed  skipped")
    assert re.fullmatch(r"HTML report made in \d+\.\d s", lines[making + 1]), lines


def test_with_workers_it_says_that_each_starts_its_simulator(shop):
    lines = certify(shop, "--no-html", "-n", "2")

    collected = [line for line in lines if line.startswith("collected ")]
    assert len(collected) == 1, lines
    assert collected[0].endswith("; starting 2 workers, each with its embedded simulator…")
    assert not any(line.startswith("making the HTML report") for line in lines)
