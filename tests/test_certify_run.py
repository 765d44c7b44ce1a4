"""``gatekit certify`` end to end on a small suite of its own: the verdict per flow, failures with their
reasons, the reports, the tag filter and the exit code (non-zero when any flow fails)."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

FEATURES = {
    "cards.feature": """\
Feature: Card payments
  Scenario: An approved sale
    Given a sale of 10.00
    Then the sale is approved

  @broken
  Scenario: A sale the gateway gets wrong
    Given a sale of 10.00
    Then the sale is declined
""",
    "refunds.feature": """\
Feature: Refunds
  Scenario: A refund
    Given a sale of 5.00
    Then the sale is approved
""",
}

STEPS = """\
from pytest_bdd import given, parsers, scenarios, then

scenarios("../features")


@given(parsers.parse("a sale of {amount}"), target_fixture="sale")
def sale(amount):
    return {"amount": amount, "status": "approved"}


@then(parsers.parse("the sale is {status}"))
def sale_is(sale, status):
    assert sale["status"] == status, f"the sale is {sale['status']}, not {status}"
"""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "features").mkdir()
    (tmp_path / "steps").mkdir()
    for name, text in FEATURES.items():
        (tmp_path / "features" / name).write_text(text)
    (tmp_path / "steps" / "test_flows.py").write_text(STEPS)
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["toolkit.certify.plugin"]\n')
    return tmp_path


def certify(suite: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "toolkit.cli", "certify", "--no-html", *args]
    env = {**os.environ, "GATEKIT_SUITE": str(suite)}
    return subprocess.run(command, cwd=suite, env=env, capture_output=True, text=True, timeout=120, check=False)


def flow_rows(stdout: str) -> dict[str, list[str]]:
    rows = {}
    for line in stdout.splitlines():
        for flow in ("Card payments", "Refunds"):
            if line.startswith(flow + " "):
                rows[flow] = line[len(flow) :].split()
    return rows


def test_a_failing_flow_fails_the_run_and_is_named_with_its_reason(suite):
    run = certify(suite)

    assert run.returncode == 1, run.stdout + run.stderr
    assert flow_rows(run.stdout) == {"Card payments": ["FAIL", "1", "1", "0"], "Refunds": ["PASS", "1", "0", "0"]}
    assert "Failures:" in run.stdout and "the sale is approved, not declined" in run.stdout
    junit = ET.parse(suite / "reports" / "junit.xml").getroot()
    assert sum(1 for _ in junit.iter("failure")) == 1
    assert any(path.name.endswith("-result.json") for path in (suite / "allure-results").iterdir())


def test_tags_choose_the_scenarios_and_a_clean_run_exits_zero(suite):
    run = certify(suite, "--tags", "not broken")

    assert run.returncode == 0, run.stdout + run.stderr
    assert flow_rows(run.stdout) == {"Card payments": ["PASS", "1", "0", "0"], "Refunds": ["PASS", "1", "0", "0"]}
    assert "Failures:" not in run.stdout
