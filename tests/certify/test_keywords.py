"""A misspelled Gherkin keyword is named with its file, its line and the keyword it resembles (``certify.keywords``):
under ``gatekit certify --check``, by ``gatekit certify`` before anything runs, and at pytest's collection; a
feature's prose is left alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.certify.keywords import findings

MISSPELLED = """\
Feature: Typos
  Given that the merchant is set up, the scenarios below check its payments.
  Scenarios below are for the team.

  Scenaro: A card with a typo in its scenario
    Given a card that is approved
    When the merchant sends a sale of 10.00 EUR
    Then the order is approved

  Scenario: A card with typos in its steps
    Givn a card that is approved
    When the merchant sends a sale of 10.00 EUR
    Thne the order is approved

  Scenario Outline: An outline with a typo in its examples
    Given a card that <description>
    When the merchant sends a sale of 10.00 EUR
    Then the order is approved

    Exampels:
      | description |
      | is approved |
"""
EXPECTED = [
    "features/typos.feature:5: Scenaro: A card with a typo in its scenario: 'Scenaro' is not a Gherkin keyword; "
    "did you mean 'Scenario'?",
    "features/typos.feature:11: Givn a card that is approved: 'Givn' is not a Gherkin keyword; did you mean 'Given'?",
    "features/typos.feature:13: Thne the order is approved: 'Thne' is not a Gherkin keyword; did you mean 'Then'?",
    "features/typos.feature:20: Exampels: 'Exampels' is not a Gherkin keyword; did you mean 'Examples'?",
]


def shown(text: str) -> list[str]:
    return [finding.shown("features/typos.feature") for finding in findings(text)]


def test_each_misspelled_keyword_is_named_with_its_line_and_the_keyword_it_resembles():
    assert shown(MISSPELLED) == EXPECTED


@pytest.mark.parametrize(
    ("line", "meant"),
    [("Wen the merchant sends a sale of 10.00 EUR", "When"), ("Adn the order is approved", None),
     ("An the order is approved", "And"), ("Bt the order is approved", "But"), ("given a card", "Given")],
    ids=["Wen", "Adn is too far", "An", "Bt", "lower case"],
)  # fmt: skip
def test_a_step_keyword_is_compared_by_similarity(line, meant):
    text = f"Feature: F\n  Scenario: S\n    Given a card that is approved\n    {line}\n"
    found = findings(text)
    if meant is None:
        assert all("did you mean" not in finding.reason for finding in found), found
    else:
        assert [(f.line, f.reason.split("did you mean ")[-1]) for f in found] == [(4, f"{meant!r}?")]


def test_a_feature_a_scenario_outline_and_a_background_are_recognised_too():
    text = ("Featur: F\n  Backgrond:\n    Given a card that is approved\n\n"
            "  Scenario Outlin: S <x>\n    When the merchant sends a sale of 10.00 EUR\n"
            "    Then the order is approved\n\n    Examples:\n      | x |\n      | 1 |\n")  # fmt: skip
    assert [(f.line, f.reason.split("did you mean ")[-1]) for f in findings(text)] == [
        (1, "'Feature'?"),
        (2, "'Background'?"),
        (5, "'Scenario Outline'?"),
    ]


PROSE = """\
Feature: Prose that looks like keywords
  Given that the merchant is set up, the scenarios below check its payments.
  Scenarios below are for the team, and so are the examples.
  Rules: the team writes them; Examples: see the wiki.
  Then again, Then is a keyword.

  Rule: Payments
    The rule's own prose: Scenaro is not a scenario here.

    Scenario: A described scenario
      The merchant pays twice, and them both are approved.
      An order then exists.
      Given a card that is approved
      When the merchant sends a sale of 10.00 EUR
      Then the order is approved
"""


def test_a_features_prose_is_not_flagged():
    assert findings(PROSE) == []


def test_the_dialect_of_the_file_is_used():
    text = "# language: fr\nFonctionnalité: F\n  Scenario: S\n    Soit une carte\n    Alors la commande est payée\n"
    assert [(f.line, f.reason) for f in findings(text)] == [
        (3, "'Scenario' is not a Gherkin keyword; did you mean 'Scénario'?")
    ]


def test_a_line_gherkin_cannot_read_for_another_reason_says_what_it_takes_there():
    text = "Feature: F\n  Scenario: S\n    Given a card that is approved\n    Nothing like a step\n"
    [finding] = findings(text)
    assert finding.shown("f.feature") == (
        "f.feature:4: Nothing like a step: Gherkin cannot read this line here (it takes a table row, a doc string, "
        "a step, a tag, Examples:, Scenario: or Rule:)"
    )


# --- the commands ----------------------------------------------------------------------------------------


def gatekit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    return subprocess.run([sys.executable, "-m", "toolkit.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip


@pytest.fixture
def typos(tmp_path: Path) -> Path:
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "typos.feature").write_text(MISSPELLED)
    return tmp_path


def test_check_names_the_misspelled_keywords(typos):
    done = gatekit("certify", "--check", "--suite-only", "--suite", "features", cwd=typos)

    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout.splitlines() == [*EXPECTED, "gatekit certify --check: 4 problems; nothing ran"]


def test_certify_refuses_before_anything_runs_in_one_message(typos):
    done = gatekit("certify", "--no-html", "--suite-only", "--suite", "features", cwd=typos)

    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        "gatekit certify: feature files that cannot run (nothing ran):",
        *(f"  {line}" for line in EXPECTED),
    ]
    assert done.stdout == "" and not (typos / "allure-results").exists() and not (typos / "reports").exists()


def test_list_refuses_them_too(typos):
    done = gatekit("certify", "--list", "--suite-only", "--suite", "features", cwd=typos)

    assert done.returncode == 2 and EXPECTED[0] in done.stderr, done.stdout + done.stderr


def test_a_suite_without_scenarios_says_so_without_naming_tags(tmp_path):
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "empty.feature").write_text("Feature: Nothing yet\n  We will write scenarios.\n")
    done = gatekit("certify", "--no-html", "--suite-only", "--suite", "features", cwd=tmp_path)

    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == "gatekit certify: no scenario in features"


@pytest.mark.parametrize("binding", ["collect", "scenarios"], ids=["feature files collected", "scenarios() module"])
def test_plain_pytest_refuses_the_file_at_collection(typos, binding):
    if binding == "collect":
        (typos / "conftest.py").write_text('pytest_plugins = ["toolkit.steps", "toolkit.certify.collect"]\n')
        target = "features"
    else:
        (typos / "conftest.py").write_text('pytest_plugins = ["toolkit.steps"]\n')
        (typos / "test_features.py").write_text('from pytest_bdd import scenarios\n\nscenarios("features")\n')
        target = "test_features.py"
    (typos / "pytest.ini").write_text("[pytest]\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", target], cwd=typos,
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip

    assert done.returncode == 2, done.stdout + done.stderr
    errors = done.stdout.split("short test summary info")[0]  # CI=1 prints the summary untruncated: read the section
    assert [line for line in errors.splitlines() if line.startswith("features/typos.feature:")] == EXPECTED
    assert "Traceback" not in done.stdout and "passed" not in done.stdout
