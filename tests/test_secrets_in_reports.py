"""Secrets never printed by a failing run (issue 19, #3): every fixture of the plugin made to fail with a known
control key and passphrase in the environment, and tests that fail with the merchant's configuration in their
locals, print the key or put it in their assertion; the terminal (with ``-l``: locals shown), the JUnit XML
and the Allure results are scanned for the two values.

Before, a sandbox profile without ``GATEWAY_BASE_URL`` failed inside a fixture and the traceback showed
``settings = {... 'control_key': '...'}`` three times, on the console and in the JUnit XML.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

KEY = "TOP-SECRET-CONTROL-KEY-9F31C"
PASSPHRASE = "passphrase-of-the-merchant-77"
FIXTURES = ("gateway_target", "gateway_config", "gateway_client", "gateway_simulator", "simulator_control",
            "callback_receiver", "merchant", "payer", "browser_payer")  # fmt: skip

FAILING_FIXTURES = "\n".join(f"def test_{name}({name}):\n    assert {name}\n" for name in FIXTURES)
FAILING_TESTS = """
import os

from toolkit.config import load_config


def test_locals_hold_the_configuration():
    config = load_config("sandbox")
    raw = dict(os.environ)
    assert config.base_url == "never"


def test_printing_the_key():
    print("the key is", os.environ["GATEWAY_CONTROL_KEY"])
    assert False


def test_asserting_with_the_key():
    key = os.environ["GATEWAY_CONTROL_KEY"]
    assert key == "another", f"expected another key than {key}"
"""


def run(tmp_path: Path, env: dict[str, str], *, allure_results: bool = True, code: int = 1) -> tuple[str, Path, Path]:
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_fixtures.py").write_text(FAILING_FIXTURES)
    (project / "tests" / "test_failing.py").write_text(FAILING_TESTS)
    junit, allure = tmp_path / "junit.xml", tmp_path / "allure-results"
    clean = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    allure.mkdir()
    reports = [f"--junitxml={junit}", *([f"--alluredir={allure}"] if allure_results else [])]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-l", "--tb=long", "-rA", *reports, "-p", "no:cacheprovider", "tests"],
        cwd=project, env={**clean, **env}, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == code, done.stdout[-3000:] + done.stderr[-2000:]
    if not junit.exists():
        junit.write_text("")
    return done.stdout + done.stderr, junit, allure


def leaked(output: str, junit: Path, allure: Path) -> dict[str, list[str]]:
    texts = {"terminal": output, "junit.xml": junit.read_text()}
    texts.update({f"allure/{path.name}": path.read_text(errors="replace") for path in allure.iterdir()})
    return {where: [s for s in (KEY, PASSPHRASE) if s in text] for where, text in texts.items()
            if KEY in text or PASSPHRASE in text}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("allure_results", [False, True])
def test_a_profile_that_cannot_be_used_stops_the_run_in_one_line_without_the_key(
    tmp_path: Path, allure_results: bool
) -> None:
    """Before, every fixture failed with a traceback whose locals held the settings; now the tests that need the
    gateway are seen at collection and the run stops before any of them, in one line (issue 20)."""
    env = {
        "GATEWAY_CONTROL_KEY": KEY,
        "GATEWAY_PRIVATE_KEY_PASSPHRASE": PASSPHRASE,
        "GATEKIT_PROFILE": "sandbox",
        "GATEWAY_LOGIN": "acme",
    }  # fmt: skip  (no GATEWAY_BASE_URL)
    output, junit, allure = run(tmp_path, env, allure_results=allure_results, code=4)
    assert output.strip().splitlines()[-1] == "ERROR: profile sandbox: missing base_url (GATEWAY_BASE_URL)", output
    assert "Traceback" not in output and leaked(output, junit, allure) == {}


@pytest.mark.slow
def test_a_usable_profile_whose_gateway_is_down_fails_without_printing_the_key(tmp_path: Path) -> None:
    env = {"GATEWAY_CONTROL_KEY": KEY, "GATEWAY_PRIVATE_KEY_PASSPHRASE": PASSPHRASE, "GATEKIT_PROFILE": "sandbox",
           "GATEWAY_LOGIN": "acme", "GATEWAY_BASE_URL": "http://127.0.0.1:9/paynet",
           "GATEWAY_ENDPOINT_ID": "1"}  # fmt: skip
    output, junit, allure = run(tmp_path, env)
    assert "test_locals_hold_the_configuration FAILED" in output or "FAILED tests/test_failing.py" in output
    assert "control_key=Secret('<redacted>')" in output  # the locals, shown with -l: a Secret shows its mask
    assert leaked(output, junit, allure) == {}
