"""The suite against a sandbox-like profile: a simulator run as an outside gateway, with no control API.

The same feature files must pass; ``@simulator`` scenarios are skipped with their reason, and so
are callback scenarios when the profile gives no public callback URL.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests import suite_passes
from toolkit import demo
from toolkit.certify import catalog
from toolkit.certify.target import embeds_simulator, no_callbacks_reason, start_target
from toolkit.config import simulator_config
from toolkit.simulator.server import SimulatorServer

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def outside_gateway():
    with SimulatorServer() as server:
        yield server


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_suite(
    tmp_path: Path,
    server: SimulatorServer,
    *options: str,
    callback_url: str | None,
    port: int = 0,
    paths: tuple[str, ...] = ("steps",),
) -> ET.Element:
    key = tmp_path / "demo-private.pem"
    key.write_bytes(demo.private_key_pem())
    lines = [
        "[profiles.outside]",
        'base = "sandbox"',
        f'base_url = "{server.base_url}"',
        f'endpoint_id = "{demo.ENDPOINT_ID}"',
        f'endpoint_group_id = "{demo.ENDPOINT_GROUP_ID}"',
        f'login = "{demo.LOGIN}"',
        'control_key_env = "OUTSIDE_CONTROL_KEY"',
        f'private_key_file = "{key}"',
        "poll = { intervals = [0.01, 0.05, 0.1], deadline = 20 }",
    ]
    if callback_url:
        lines.append(f'callback_url = "{callback_url}"')
    (tmp_path / "profiles.toml").write_text("\n".join(lines) + "\n")
    junit = tmp_path / "junit.xml"
    command = [sys.executable, "-m", "pytest", *paths, "-q", "-p", "no:cacheprovider", "--gateway-profile=outside",
               f"--gateway-config={tmp_path / 'profiles.toml'}", f"--junitxml={junit}", *options]  # fmt: skip
    env = {"PATH": "/usr/bin:/bin", "OUTSIDE_CONTROL_KEY": demo.CONTROL_KEY, "HOME": str(tmp_path),
           "GATEKIT_CALLBACK_PORT": str(port)}  # fmt: skip
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, env=env, check=False)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    return ET.parse(junit).getroot()


def skipped(report: ET.Element) -> dict[str, str]:
    return {
        case.get("name", ""): skip.get("message", "")
        for case in report.iter("testcase")
        for skip in case.iter("skipped")
    }


def test_the_suite_passes_against_an_outside_gateway_without_callbacks(tmp_path, outside_gateway):
    report = run_suite(tmp_path, outside_gateway, callback_url=None, paths=suite_passes.outside_step_modules())
    skips = skipped(report)
    cases = list(report.iter("testcase"))
    assert len(cases) - len(skips) >= (40 if suite_passes.FULL else 10), "most scenarios must run against a sandbox"
    assert any("control API" in reason for reason in skips.values())
    assert any("callback_url" in reason for reason in skips.values())
    assert "test_a_void_after_settlement_is_refused" in skips
    assert "test_the_callback_is_delivered_signed_and_matches_the_status" in skips


def test_callback_scenarios_run_when_the_profile_says_where_callbacks_arrive(tmp_path, outside_gateway):
    """The callback scenarios only (the test above ran the whole suite against the same gateway)."""
    port = free_port()
    report = run_suite(tmp_path, outside_gateway, "-m", "callbacks", callback_url=f"http://127.0.0.1:{port}", port=port)
    skips = skipped(report)
    ran = {case.get("name") for case in report.iter("testcase")}
    assert "test_the_callback_is_delivered_signed_and_matches_the_status" in ran, ran
    assert "test_the_callback_is_delivered_signed_and_matches_the_status" not in skips
    assert "test_the_callback_is_retried_after_the_merchant_fails_to_take_it" in skips  # needs the control API


def test_the_callback_skip_reason_names_the_profile_and_what_to_set():
    simulator = simulator_config()
    sandbox = dataclasses.replace(simulator, profile="outside", base_url="https://sandbox.example/paynet")

    assert embeds_simulator(simulator) and not embeds_simulator(sandbox)
    assert no_callbacks_reason(simulator) is None
    assert no_callbacks_reason(dataclasses.replace(sandbox, callback_url="https://hooks.example/gk")) is None
    reason = no_callbacks_reason(sandbox) or ""
    assert reason.startswith("profile outside sets no callback_url") and "GATEKIT_CALLBACK_PORT" in reason


def test_the_suite_passes_on_a_lenient_simulator_too(tmp_path):
    """The embedded simulator with ``--simulator-lenient``: every scenario passes but the @strict ones,
    skipped because a lenient simulator forgives on purpose what they check."""
    junit = tmp_path / "junit.xml"
    command = [sys.executable, "-m", "pytest", *suite_passes.lenient_step_modules(), "-q", "-p", "no:cacheprovider",
               "--simulator-lenient", f"--junitxml={junit}"]  # fmt: skip
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, env=env, check=False)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    skips = skipped(ET.parse(junit).getroot())
    assert set(skips) == {
        "test_a_followup_without_the_merchants_login_is_refused",
        "test_a_followup_with_another_orders_client_orderid_is_refused",
        "test_a_card_past_its_expiry_date_is_declined_as_expired",
        "test_a_stored_card_whose_expiry_has_passed_is_declined_like_a_direct_sale",
    }, skips
    assert all("lenient simulator forgives" in reason for reason in skips.values())


def test_a_lenient_target_embeds_a_lenient_simulator():
    target = start_target("simulator", lenient=True)
    try:
        assert target.server is not None and target.server.settings.lenient is True
        merchant = target.server.settings.merchants[0]
        assert target.server.settings.is_lenient(merchant)
    finally:
        target.stop()


def test_the_suite_passes_on_pages_in_another_style_over_http_and_in_a_browser(tmp_path: Path) -> None:
    """``[simulator] page_style = "alternate"``: hosted and ACS pages with other ids, names and layout; every
    scenario passes, the real-browser ones included (they are skipped only without Chromium)."""
    (tmp_path / "gatekit.toml").write_text(
        '[profiles.alt]\nbase = "simulator"\nsimulator = { page_style = "alternate" }\n'
    )
    command = [sys.executable, "-m", "toolkit.cli", "certify", "--profile", "alt", "-n", "2", "--no-html",
               *suite_passes.certify_tags(suite_passes.PAGES_TAGS)]  # fmt: skip
    run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    cases = ET.parse(tmp_path / "reports" / "junit.xml").getroot().iter("testcase")
    outcomes = {case.get("name"): "skipped" if case.find("skipped") is not None else "passed" for case in cases}
    browser = [name for name in outcomes if name and "real browser" in name]
    tagged = [entry for entry in catalog.read([ROOT / "features"]) if "browser" in entry.tags]
    assert len(outcomes) >= (80 if suite_passes.FULL else 8) and len(browser) == len(tagged) >= 2, outcomes
    if os.environ.get("GATEKIT_BROWSER") != "off":
        assert all(outcomes[name] == "passed" for name in browser), {name: outcomes[name] for name in browser}
