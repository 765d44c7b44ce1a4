"""gatekit's pytest plugin as a merchant meets it: ``tests/merchant_project`` run as a pytest session of its own.

That folder has no gatekit wiring but ``pytest_plugins = ["toolkit.steps"]``: the fixtures come from
the ``pytest11`` entry point, the phrases of its feature file from gatekit's suite and its conftest.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from toolkit import demo
from toolkit.simulator.server import SimulatorServer

PROJECT = Path(__file__).resolve().parent / "merchant_project"
BROWSER = os.environ.get("GATEKIT_BROWSER") != "off"


def run_project(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, str]:
    """Each test's outcome (passed, failed, skipped: reason) in a session started in the project's folder."""
    junit = tmp_path / "junit.xml"
    clean = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    command = [sys.executable, "-m", "pytest", "-q", f"--junitxml={junit}", *args]
    done = subprocess.run(command, cwd=PROJECT, env={**clean, **(env or {})}, capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    return {case.get("name", ""): _outcome(case) for case in ET.parse(junit).getroot().iter("testcase")}


def _outcome(case: ET.Element) -> str:
    skipped = case.find("skipped")
    if skipped is not None:
        return f"skipped: {skipped.get('message', '')}"
    return "failed" if case.find("failure") is not None or case.find("error") is not None else "passed"


def test_a_merchant_project_uses_every_fixture_and_phrase_against_the_embedded_simulator(tmp_path):
    outcomes = run_project(tmp_path)

    fixtures = ["gateway_client", "gateway_config", "gateway_simulator", "simulator_control", "callback_receiver",
                "merchant", "payer", "browser_payer"]  # fmt: skip
    assert {f"test_{name}" for name in fixtures} <= set(outcomes)
    scenarios = {"test_a_paid_order_is_refunded_in_part", "test_a_customer_passes_the_3d_secure_challenge"}
    assert scenarios <= set(outcomes)
    expected = {name: "passed" for name in outcomes}
    if not BROWSER:
        expected["test_browser_payer"] = "skipped: GATEKIT_BROWSER=off"
    assert outcomes == expected


@pytest.fixture
def outside_profile(tmp_path: Path) -> tuple[Path, SimulatorServer]:
    server = SimulatorServer().start()
    key = tmp_path / "demo-private.pem"
    key.write_bytes(demo.private_key_pem())
    profile = tmp_path / "profiles.toml"
    profile.write_text(
        f'[profiles.outside]\nbase = "sandbox"\nbase_url = "{server.base_url}"\nendpoint_id = "{demo.ENDPOINT_ID}"\n'
        f'login = "{demo.LOGIN}"\ncontrol_key_env = "OUTSIDE_KEY"\nprivate_key_file = "{key}"\n'
        "poll = { intervals = [0.01, 0.05], deadline = 20 }\n"
    )
    yield profile, server
    server.stop()


def test_on_a_sandbox_profile_the_simulator_fixtures_skip_with_the_reason(tmp_path, outside_profile):
    profile, _ = outside_profile
    outcomes = run_project(
        tmp_path, "test_fixtures.py", "--gateway-profile=outside", f"--gateway-config={profile}",
        "-k", "client or simulator", env={"OUTSIDE_KEY": demo.CONTROL_KEY},
    )  # fmt: skip

    reason = "skipped: needs the simulator's control API; profile outside is a sandbox"
    assert outcomes == {
        "test_gateway_client": "passed",
        "test_gateway_simulator": reason,
        "test_simulator_control": reason,
    }


def test_the_readme_shows_each_fixture_with_the_project_test_that_uses_it():
    readme = (PROJECT.parents[1] / "README.md").read_text()
    section = readme[readme.index("## The pytest plugin") : readme.index("**Our phrases in your feature files.**")]
    examples = section[section.index("```python") + len("```python") : section.rindex("```")].split("\n\n\n")[1:]
    tests = (PROJECT / "test_fixtures.py").read_text()
    fixtures = {row.split("`")[1] for row in section.splitlines() if row.startswith("| `")}
    assert {example.split("(")[0].removeprefix("def test_") for example in examples} == fixtures - {"gateway_target"}
    for example in examples:
        assert example.strip() in tests, example
