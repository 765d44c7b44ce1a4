"""Card data typed into a merchant's test never shows in pytest's report of its failure (issue 34, point 8).

A project with the gatekit plugin active (it is, once gatekit is installed) whose tests, fixture and Gherkin step
fail with a CVV2 and a card number in their source, their locals, pytest's explanation of the assertion and the
exception's message.  The terminal (``-l``: locals shown; each ``--tb`` style), the JUnit XML and the Allure
results (status details of the test, its step and its fixture) are read for every value.

Before, the plugin masked the report's text only when masking changed it, and then replaced the report by that
text: ``cvv2 = "987"`` (source and locals) and ``assert '987' == '654'`` (the explanation) passed unmasked, and
a report that did change lost its shape (JUnit's ``message`` became the first source line).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# Each value typed into the project below, and what it is (a message names what leaked, never the value).
TYPED = {
    "987": "the CVV2 in a local",
    "654": "the CVV2 a test expects",
    "986": "a CVV in an exception's message",
    "4321": "a fixture's security code",
    "5432": "the security code a fixture expects",
    "4111111111111111": "a Visa number",
    "5555555555554444": "a Mastercard number",
}
LEAK = re.compile(r"(?<![\w.\-])(?:987|654|986|4321|5432)(?![\w\-])|4111111111111111|5555555555554444")

TESTS = """
import pytest


def check(fields, card):
    assert fields["cvv2"] == "654", "the gateway got another CVV2"


def test_a_card_typed_into_a_test():
    cvv2 = "987"
    card = "4111111111111111"
    fields = {"cvv2": "987", "credit_card_number": card}
    check(fields, card)


def test_a_cvv_compared():
    cvv2 = "987"
    assert cvv2 == "654"


def test_a_cvv_in_free_text():
    note = "the payer typed CVV 986"
    raise ValueError(note)


@pytest.fixture
def payer_card():
    security_code = "4321"
    assert security_code == "5432"


def test_a_fixture_that_fails(payer_card):
    pass


@pytest.fixture
def teardown_card():
    yield
    number = "5555555555554444"
    raise RuntimeError(f"left card {number} behind")


def test_a_teardown_that_fails(teardown_card):
    pass
"""

STEPS = """
from pytest_bdd import given, scenarios

scenarios("card.feature")


@given("the payer typed the card's CVV2")
def typed():
    cvv2 = "987"
    assert cvv2 == "654", "another CVV2"
"""

FEATURE = """Feature: Card data in a step
  Scenario: The payer types a CVV2
    Given the payer typed the card's CVV2
"""


def redacted(text: str) -> str:
    """``text`` with each typed value replaced by what it is (a test's message never shows one)."""
    return LEAK.sub(lambda found: f"<{TYPED[found.group(0)]}>", text)


Run = tuple[str, str, dict[str, str]]  # terminal output, JUnit XML, the Allure result files by name
STYLES = {
    "long with locals": ("-l", "--tb=long"),
    "short with locals": ("-l", "--tb=short"),
    "native": ("--tb=native",),
    "line": ("--tb=line",),
    "two xdist workers": ("-l", "-n", "2"),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """The project's run in each style, made when a test first asks for it (the tests of a style share it)."""
    made: dict[str, Run] = {}

    class Runs(dict[str, Run]):
        def __missing__(self, style: str) -> Run:
            made[style] = run(tmp_path_factory.mktemp("reports"), *STYLES[style])
            return made[style]

    return Runs()


def run(tmp_path: Path, *options: str) -> Run:
    """The project's run: terminal output, JUnit XML, and the Allure result files by name."""
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_cards.py").write_text(TESTS)
    (project / "tests" / "test_steps.py").write_text(STEPS)
    (project / "tests" / "card.feature").write_text(FEATURE)
    junit, allure = tmp_path / "junit.xml", tmp_path / "allure-results"
    env = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    env["COLUMNS"] = "200"  # (the short summary keeps its lines whole)
    command = [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", f"--junitxml={junit}",
               f"--alluredir={allure}", *options, "tests"]  # fmt: skip
    done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 1, redacted(output[-3000:])
    assert "4 failed, 1 passed, 2 errors" in output, redacted(output[-3000:])
    results = {path.name: path.read_text() for path in sorted(allure.iterdir()) if path.suffix == ".json"}
    return output, junit.read_text(), results


def leaks(texts: dict[str, str]) -> dict[str, list[str]]:
    """Where each typed value shows: {place: [what leaked]} (names, not values)."""
    found = {where: sorted({TYPED[m] for m in LEAK.findall(text)}) for where, text in texts.items()}
    return {where: what for where, what in found.items() if what}


@pytest.mark.slow
@pytest.mark.parametrize("style", list(STYLES))
def test_no_typed_cvv_or_card_number_shows_in_any_report(runs: dict[str, Run], style: str) -> None:
    output, junit, results = runs[style]
    assert leaks({"terminal": output, "junit.xml": junit, **results}) == {}
    assert "FAILED tests/test_cards.py::test_a_cvv_compared - AssertionError: assert '***' == '***'" in output


@pytest.mark.slow
def test_the_report_keeps_its_shape_with_its_card_data_masked(runs: dict[str, Run]) -> None:
    """The source lines, locals and explanation are there, masked in place; JUnit's message is the exception's."""
    output, junit, _ = runs["long with locals"]
    for shown in ('    cvv2 = "***"', "cvv2       = '***'", "fields     = {'cvv2': '***', 'credit_card_number': "
                  "'411111******1111'}", '>       assert fields["cvv2"] == "***", "the gateway got another CVV2"',
                  "E       assert '***' == '***'", "E       ValueError: the payer typed CVV ***"):  # fmt: skip
        assert shown in output, shown
    assert 'message="AssertionError: the gateway got another CVV2' in junit
    assert 'message="ValueError: the payer typed CVV ***"' in junit
    assert "RuntimeError: left card 555555******4444 behind" in output


@pytest.mark.slow
def test_allure_status_details_of_the_test_its_step_and_its_fixture_are_masked(runs: dict[str, Run]) -> None:
    _, _, results = runs["long with locals"]
    documents = [doc for text in results.values() if isinstance(doc := json.loads(text), dict)]
    tests = {doc["name"]: doc for doc in documents if "befores" not in doc and "name" in doc}
    compared = tests["test_a_cvv_compared"]["statusDetails"]
    assert compared["message"].startswith("AssertionError: assert '***' == '***'"), redacted(compared["message"])
    step = tests["The payer types a CVV2"]["steps"][0]
    assert step["statusDetails"]["message"].startswith("AssertionError: another CVV2"), redacted(str(step))
    assert 'assert cvv2 == "***"' in step["statusDetails"]["trace"], redacted(step["statusDetails"]["trace"])
    fixtures = [before for doc in documents for before in doc.get("befores", []) if before["name"] == "payer_card"]
    assert fixtures and all("'***' == '***'" in f["statusDetails"]["message"] for f in fixtures), redacted(
        str(fixtures)
    )
