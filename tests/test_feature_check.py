"""Feature files are checked before anything runs (``toolkit.certify.check``): a step no phrase matches and a
value its phrase does not know are one line each, with the closest phrases or the valid values, exit 2,
under ``gatekit certify --check``, ``gatekit certify`` and plain ``pytest`` alike.  And the smaller things a
new user trips on: a wrong profile is one line, the history is kept per suite selection."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit import suite
from toolkit.certify.options import CertifyOptions
from toolkit.certify.runner import history_name

TYPOS = """\
Feature: Typos

  Scenario: A card with a typo
    Given a card that is aproved
    When the merchant sends a sael of 10.00 EUR
    Then the order is approved

  Scenario Outline: An outline with a version no phrase knows
    Given an approved sale of 10.00 EUR
    When the merchant creates a card reference with <version>
    Then the order is approved

    Examples:
      | version |
      | v3      |
      | v4      |
"""
EXPECTED = [
    "features/typos.feature:4: Given a card that is aproved: 'is aproved' is not a card this phrase knows; "
    "did you mean 'is approved' or 'is expired'? (known: is approved, ",
    "features/typos.feature:5: When the merchant sends a sael of 10.00 EUR: no phrase matches this when step; "
    "closest: 'the merchant sends a sale of 10.00 EUR';",
    "features/typos.feature:10: When the merchant creates a card reference with v3: 'v3' is not a version this "
    "phrase knows (known: v2, v4)",
]


def gatekit(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    return subprocess.run([sys.executable, "-m", "toolkit.cli", *args], cwd=cwd, env={**clean, **(env or {})},
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip


@pytest.fixture
def typos(tmp_path: Path) -> Path:
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "typos.feature").write_text(TYPOS)
    return tmp_path


def problem_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "features/typos.feature:" in line]


def test_check_names_each_problem_in_one_line_with_the_closest_phrases_and_exits_2(typos):
    done = gatekit("certify", "--check", "--suite-only", "--suite", "features", cwd=typos)

    assert done.returncode == 2, done.stdout + done.stderr
    lines = problem_lines(done.stdout)
    assert len(lines) == 3 and all(line.startswith(expected) for line, expected in zip(lines, EXPECTED, strict=True))
    assert "closest: 'the merchant sends a sale of 10.00 EUR'; 'the merchant sends a sale of 1.00 EUR'" not in (
        done.stdout
    )  # one example per phrase's shape
    assert done.stdout.rstrip().endswith("gatekit certify --check: 3 problems; nothing ran")
    assert "Traceback" not in done.stdout + done.stderr and not (typos / "allure-results").exists()


def test_check_passes_gatekits_own_suite(tmp_path):
    done = gatekit("certify", "--check", cwd=tmp_path)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "every step has a phrase and every value is known" in done.stdout


def test_certify_runs_nothing_and_the_summary_lists_the_problems(typos):
    done = gatekit("certify", "--no-html", "--suite-only", "--suite", "features", cwd=typos)

    assert done.returncode == 2, done.stdout + done.stderr
    assert "Feature files that cannot run (nothing ran" in done.stdout and len(problem_lines(done.stdout)) == 3
    summary = (typos / "reports" / "summary.md").read_text()
    assert summary.startswith("## ⛔ gatekit certification: NOT RUN")
    assert [line.strip("- `") for line in summary.splitlines() if "typos.feature:" in line][2] == EXPECTED[2]


def test_plain_pytest_refuses_the_file_at_collection(typos):
    (typos / "conftest.py").write_text('pytest_plugins = ["toolkit.steps", "toolkit.certify.collect"]\n')
    (typos / "pytest.ini").write_text("[pytest]\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "features"], cwd=typos,
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip

    assert done.returncode == 2, done.stdout + done.stderr
    assert "Interrupted: 1 error during collection" in done.stdout and "passed" not in done.stdout
    assert [line for line in done.stdout.splitlines() if line.startswith("features/typos.feature:")] == [
        line for line in done.stdout.splitlines() if line.startswith(tuple(EXPECTED))
    ] and len(problem_lines(done.stdout)) >= 3


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--gateway-profile", "sandbx"],
         "ERROR: unknown profile 'sandbx' (did you mean 'sandbox'?); known profiles: simulator, sandbox"),
        (["--gateway-profile", "sandbox", "-n", "2"],
         "ERROR: profile sandbox: missing base_url (GATEWAY_BASE_URL), login (GATEWAY_LOGIN), control_key"),
    ],
)  # fmt: skip
def test_a_profile_that_cannot_be_used_is_one_line_under_plain_pytest(tmp_path, args, line):
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "ok.feature").write_text(
        "Feature: ok\n  Scenario: fine\n    Given a card that is approved\n"
        "    When the merchant sends a sale of 1.00 EUR\n    Then the order is approved\n"
    )
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["toolkit.steps", "toolkit.certify.collect"]\n')
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, "features"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip

    assert done.returncode == 4, done.stdout + done.stderr
    assert line in done.stderr and "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr


def test_each_suite_selection_keeps_its_own_history(tmp_path):
    own = tmp_path / "features"
    own.mkdir()
    gatekit_only = history_name(CertifyOptions(), [suite.features_dir()], tmp_path)
    both = history_name(CertifyOptions(), [suite.features_dir(), own], tmp_path)
    own_only = history_name(CertifyOptions(suite_only=True), [own], tmp_path)
    tagged = history_name(CertifyOptions(tags="threeds and not browser"), [suite.features_dir()], tmp_path)

    assert gatekit_only == "history.jsonl"
    assert (both, own_only) == ("history.gatekit+features.jsonl", "history.features.jsonl")
    assert tagged.startswith("history.gatekit+tags-threeds-and-not-browser-") and tagged.endswith(".jsonl")
    assert len({gatekit_only, both, own_only, tagged}) == 4
    assert history_name(CertifyOptions(tags="threeds and not browser"), [suite.features_dir()], tmp_path) == tagged
