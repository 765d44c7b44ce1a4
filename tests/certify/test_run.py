"""``gatekit certify`` end to end on a merchant's small suite of its own (``--suite-only``): the verdict per
flow, failures and skips with their reasons, the reports, the tag filter, the listings and the exit code
(non-zero when any flow fails)."""

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

  @sunday
  Scenario: A sale on a Sunday
    Given a sale of 10.00
    Then the acquirer is closed
""",
    "refunds.feature": """\
Feature: Refunds
  Scenario: A refund
    Given a sale of 5.00
    Then the sale is approved
""",
}

STEPS = """\
import pytest
from pytest_bdd import given, parsers, then


@given(parsers.parse("a sale of {amount}"), target_fixture="sale")
def sale(amount):
    return {"amount": amount, "status": "approved"}


@then(parsers.parse("the sale is {status}"))
def sale_is(sale, status):
    assert sale["status"] == status, f"the sale is {sale['status']}, not {status}"


@then("the acquirer is closed")
def closed():
    pytest.skip("the acquirer is closed on Sundays")
"""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A merchant's repository: feature files under features/, their steps in the root conftest.py."""
    (tmp_path / "features").mkdir()
    for name, text in FEATURES.items():
        (tmp_path / "features" / name).write_text(text)
    (tmp_path / "conftest.py").write_text(STEPS)
    return tmp_path


def certify(suite: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "toolkit.cli", "certify", "--no-html", "--suite-only", *args]
    env = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
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
    assert flow_rows(run.stdout) == {"Card payments": ["FAIL", "1", "1", "1"], "Refunds": ["PASS", "1", "0", "0"]}
    assert "Failures:" in run.stdout and "the sale is approved, not declined" in run.stdout
    junit = ET.parse(suite / "reports" / "junit.xml").getroot()
    assert sum(1 for _ in junit.iter("failure")) == 1
    assert any(path.name.endswith("-result.json") for path in (suite / "allure-results").iterdir())


def test_the_reason_of_each_skip_is_under_its_flow(suite):
    run = certify(suite, "--tags", "sunday")

    assert run.returncode == 0, run.stdout + run.stderr
    table = run.stdout[run.stdout.index("Flow ") :].splitlines()
    row = next(i for i, line in enumerate(table) if line.startswith("Card payments "))
    assert table[row].split()[-4:] == ["SKIP", "0", "0", "1"]
    assert table[row + 1] == "  skipped 1: the acquirer is closed on Sundays"


def test_the_listings_show_what_can_be_selected(suite):
    scenarios = certify(suite, "--list", "--tags", "not sunday")
    tags = certify(suite, "--list-tags")

    assert (scenarios.returncode, tags.returncode) == (0, 0), scenarios.stderr + tags.stderr
    assert scenarios.stdout.splitlines()[:3] == [
        "Card payments  (features/cards.feature)",
        "  An approved sale",
        "  A sale the gateway gets wrong  @broken",
    ]
    assert "3 scenarios in 2 flows" in scenarios.stdout and "Sunday" not in scenarios.stdout
    assert tags.stdout.split() == ["tag", "scenarios", "broken", "1", "sunday", "1"]
    assert not (suite / "reports").exists(), "listing runs nothing"


def test_tags_choose_the_scenarios_and_a_clean_run_exits_zero(suite):
    run = certify(suite, "--tags", "not broken and not sunday")

    assert run.returncode == 0, run.stdout + run.stderr
    assert flow_rows(run.stdout) == {"Card payments": ["PASS", "1", "0", "0"], "Refunds": ["PASS", "1", "0", "0"]}
    assert "Failures:" not in run.stdout


def test_with_parallel_workers_each_flow_is_still_one_row(suite):
    run = certify(suite, "-n", "2", "--tags", "not sunday")

    assert run.returncode == 1, run.stdout + run.stderr
    assert flow_rows(run.stdout) == {"Card payments": ["FAIL", "1", "1", "0"], "Refunds": ["PASS", "1", "0", "0"]}
    assert "[3/3] " in run.stdout


def test_a_merchant_s_features_use_gatekit_s_phrases_and_their_own_steps_win(tmp_path):
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "shop.feature").write_text("""\
Feature: Shop
  Scenario: A sale with the shop's own verdict
    Given a card that is approved
    When the merchant sends a sale of 10.00 EUR
    Then the order is approved
""")
    (tmp_path / "conftest.py").write_text("""\
import pytest
from pytest_bdd import then


@then("the order is approved")
def shop_verdict(order):
    pytest.skip(f"the shop's own step saw order {order.orderid}")
""")
    run = certify(tmp_path)

    assert run.returncode == 0, run.stdout + run.stderr
    assert "  skipped 1: the shop's own step saw order " in run.stdout


def test_the_dev_plugins_are_blocked_for_gatekits_own_flows_but_not_beside_a_merchants(tmp_path):
    from toolkit import suite
    from toolkit.certify.runner import CertifyOptions, pytest_args

    own = pytest_args(CertifyOptions(), [suite.features_dir()], tmp_path)
    (tmp_path / "features").mkdir()
    theirs = pytest_args(CertifyOptions(), [suite.features_dir(), tmp_path / "features"], tmp_path)
    blocked = ["-p", "no:schemathesis", "-p", "no:hypothesispytest"]
    assert " ".join(blocked) in " ".join(own)
    assert "no:schemathesis" not in theirs and "no:hypothesispytest" not in theirs
