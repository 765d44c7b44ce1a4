"""A failed comparison names both sides, what the feature expected and what the gateway said, in one shape
(``toolkit.certify.expect``): in the console, the Markdown summary and Allure's headline; every comparison of the
suite's steps goes through it."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from toolkit import suite
from toolkit.certify.expect import Words, expect, expect_fields, expect_in, expect_refusal
from toolkit.errors import AuthenticationError, ValidationError
from toolkit.models import Status

WANTED = 'the decline message: the feature expected "Insuficient funds"; the gateway said "Insufficient funds"'


def message(check) -> str:
    with pytest.raises(AssertionError) as raised:
        check()
    return str(raised.value)


def test_a_text_names_both_texts():
    said = "Insufficient funds (the simulator's amount rule)"
    assert message(lambda: expect_in("the decline message", "Insuficient funds", said, about="Order(sale)")) == (
        'the decline message: the feature expected "Insuficient funds"; the gateway said '
        '"Insufficient funds (the simulator\'s amount rule)" (Order(sale))'
    )
    expect_in("the decline message", "Insufficient funds", said)


def test_values_and_fields_name_both_values():
    assert message(lambda: expect("the order's status", Status.APPROVED, Status.DECLINED)) == (
        "the order's status: the feature expected approved; the gateway said declined"
    )
    answer = {"status": Status.APPROVED, "transaction_type": "sale", "amount": Decimal("10.00")}
    check = lambda: expect_fields("the capture", answer, status=Status.APPROVED, transaction_type="capture",  # noqa: E731
                                  amount=Decimal("5.00"))  # fmt: skip
    assert message(check) == (
        'the capture: the feature expected transaction type "capture", amount 5.00; '
        'the gateway said transaction type "sale", amount 10.00'
    )
    expect_fields("the capture", answer, status=Status.APPROVED, amount=Decimal("10.0"))


def test_a_refusal_names_how_the_gateway_answered():
    assert message(lambda: expect_refusal("the capture", None)) == (
        "the capture: the feature expected a refusal; the gateway said no refusal: it accepted the request"
    )
    refusal = ValidationError("Amount too big", operation="capture", response={"error-message": "Amount too big"})
    assert expect_refusal("the capture", refusal, ValidationError) is refusal
    assert message(lambda: expect_refusal("the signature", refusal, AuthenticationError)) == (
        "the signature: the feature expected an authentication error (HTTP 401); the gateway said a validation error "
        "(Amount too big)"
    )
    assert message(lambda: expect("kind", Words("a refusal"), Words("none"))) == (
        "kind: the feature expected a refusal; the gateway said none"
    )


def test_no_step_asserts_on_its_own():
    """Each comparison of the suite's steps is made by toolkit.certify.expect (one shape of message)."""
    asserts = [
        f"{path.name}:{node.lineno}"
        for path in sorted((suite.root() / "steps").glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Assert)
    ]
    assert asserts == []


FEATURE = """\
Feature: Wording
  Scenario: A decline whose message the feature misspells
    Given a card that is insufficient-funds
    When the merchant sends a sale of 10.00 EUR
    Then the order is declined with "Insuficient funds"
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    where = tmp_path_factory.mktemp("wording")
    (where / "features").mkdir()
    (where / "features" / "wording.feature").write_text(FEATURE)
    env = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    command = [sys.executable, "-m", "toolkit.cli", "certify", "--no-html", "--suite-only", "--suite", "features"]
    done = subprocess.run(command, cwd=where, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    return where, done


def test_the_console_names_both_texts(run):
    _, done = run
    failures = done.stdout.split("Failures:", 1)[-1]
    assert WANTED in failures, done.stdout


def test_the_summary_names_both_texts(run):
    where, _ = run
    assert WANTED in (where / "reports" / "summary.md").read_text()


def test_allures_headline_names_both_texts(run):
    where, _ = run
    [result] = [json.loads(path.read_text()) for path in (where / "allure-results").glob("*-result.json")]
    assert result["status"] == "failed"
    assert result["statusDetails"]["message"].startswith(f"AssertionError: {WANTED}"), result["statusDetails"]
