"""Drift's loop, end to end (issue 38's "Done when"): a stand-in sandbox (a second simulator) injects a latency, an
answer delay, a field left out and another decline for one CVV2; ``gatekit drift`` names exactly those four in a
few grouped rows, hides what ``drift.toml`` accepts, and fits a ``[simulator]`` section which, taught to the
simulator, makes the next drift clean.  A sandbox profile, polling seconds apart, against a stand-in configured as
the embedded simulator: no difference.

The first test is the loop in one process (a few seconds); the others run the commands as a user does.
``GATEKIT_DRIFT_POLL`` sets the seconds between the sandbox profile's polls (1 by default; 3, the sandbox
profile's own schedule, at length).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from decimal import Decimal
from pathlib import Path

import pytest

from tests import suite_passes
from tests.test_drift import stand_in
from toolkit import demo, drift
from toolkit.drift.report import settings_toml
from toolkit.explorer.session import GatewaySession
from toolkit.simulator.settings import default_settings, simulator_table
from toolkit.testdata import card_for

STAND_IN = {
    "latency": 1.0,
    "answer_delay": 0.25,
    "omit_fields": ["descriptor"],
    "outcomes": {"116": {"status": "declined", "error_code": "05", "error_message": "Do not honor"}},
}
FOUR = (
    'latency = 1.0\nanswer_delay = 0.25\nomit_fields = ["descriptor"]\n'
    '[simulator.outcomes]\n"116" = { status = "declined", error_code = "05", error_message = "Do not honor" }'
)
# What each injected difference shows as: (kind, field) of its grouped rows.
INJECTED = {
    "latency": {("processing-time", "-")},
    "answer_delay": {("answer-time", "-")},
    "omit_fields": {("field-extra", "descriptor")},
    "outcomes": {("error-code", "-"), ("error-message", "-")},
}
INSUFFICIENT = "A card that is insufficient-funds is declined"  # (CVV2 116's scenario)


def test_the_fitted_section_taught_to_the_simulator_makes_the_next_drift_clean(tmp_path: Path) -> None:
    session = GatewaySession.embedded(settings=default_settings(**simulator_table(STAND_IN, "the stand-in")))
    try:
        run = session.record_into(tmp_path / "stand-in", profile="stand-in")
        for name, outcome in (("an approved sale", "approved"), ("a declined sale", "insufficient-funds")):
            with session.recording(run, name):  # (the callback too: a scenario ends when its order has said all)
                final = session.merchant.final_status(session.merchant.pay("sale", card_for(outcome), Decimal("10.42")))
                session.receiver.wait_for_callback(orderid=final.orderid)
    finally:
        session.stop()
    report = drift.against_simulator(tmp_path / "stand-in", tmp_path / "replay")
    assert {(group.kind, group.field or "-") for group in report.groups} == set().union(*INJECTED.values())
    fitted = tomllib.loads("\n".join(settings_toml(report.fitted)))["simulator"]
    taught = default_settings(**simulator_table(fitted, "the fitted section"))
    again = drift.against_simulator(tmp_path / "stand-in", tmp_path / "replay-taught", settings=taught)
    assert (again.verdict, again.differences) == ("no difference", []), settings_toml(report.fitted)


def _certify(tmp: Path, base_url: str, poll: str) -> None:
    """``gatekit certify --record recording`` of the declines (a sale and its status per CVV2 row), with a sandbox
    profile whose gateway is the stand-in (``poll``: its status polls, or the sandbox profile's own)."""
    key = tmp / "demo-private.pem"
    key.write_bytes(demo.private_key_pem())
    (tmp / "gatekit.toml").write_text(
        f'[profiles.standin]\nbase = "sandbox"\nbase_url = "{base_url}"\nendpoint_id = "{demo.ENDPOINT_ID}"\n'
        f'endpoint_group_id = "{demo.ENDPOINT_GROUP_ID}"\nlogin = "{demo.LOGIN}"\ncontrol_key_env = "STANDIN_KEY"\n'
        f'private_key_file = "{key}"\n{poll}\n'
    )
    done = _gatekit(
        tmp,
        "certify",
        "--profile",
        "standin",
        "--tags",
        "declines",
        "--no-html",
        "--record",
        "recording",
        "--in-flight",
        "2",
    )
    assert (tmp / "recording" / "index.json").is_file(), done.stdout[-3000:] + done.stderr[-2000:]


def _gatekit(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GATEWAY_", "GATEKIT_"))}
    env |= {"STANDIN_KEY": demo.CONTROL_KEY, "GATEKIT_BROWSER": "off"}
    command = [sys.executable, "-m", "toolkit.cli", *args]
    return subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True, timeout=600, check=False)


def _drift(tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``gatekit drift recording``: replayed on a fresh simulator (``extra``: its profile), compared."""
    done = _gatekit(tmp, "drift", "recording", "--out", "drift", *extra)
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-2000:]
    return done


def _rows(out: str) -> list[list[str]]:
    """The grouped rows of the table (cells split on two spaces or more)."""
    lines = out.splitlines()
    start = next(number for number, line in enumerate(lines) if line.startswith("kind "))
    return [[cell for cell in line.split("  ") if cell.strip()] for line in lines[start + 1 : lines.index("", start)]]


@pytest.mark.slow
@pytest.mark.skipif(
    not suite_passes.FULL, reason="the long pass (make test-long); make test runs the in-process loop of this test"
)
def test_four_injected_differences_are_four_named_rows_and_the_fitted_section_makes_drift_clean(
    tmp_path: Path,
) -> None:
    for server in stand_in(tmp_path, FOUR):
        _certify(tmp_path, server.base_url, "poll = { intervals = [0.01, 0.05, 0.1], deadline = 20 }")
    first = _drift(tmp_path)
    print(first.stdout)  # (the console output, as a user sees it: pytest -s shows it)
    rows = _rows(first.stdout)
    assert first.returncode == 1 and len(rows) <= 12, first.stdout
    assert {(row[0].strip(), row[1].strip()) for row in rows} == set().union(*INJECTED.values()), first.stdout
    assert all(INSUFFICIENT in row[-1] for row in rows if row[0].startswith("error-")), first.stdout
    assert [line[:6] for line in first.stdout.splitlines()[1:7]] == [f"  {n}/6 " for n in range(1, 7)]

    (tmp_path / "drift.toml").write_text(
        '[[accept]]\nkind = "field-extra"\nfield = "descriptor"\nreason = "the sandbox sends no descriptor"\n'
    )
    accepted = _gatekit(tmp_path, "drift", "recording", "drift/replay", "--out", "drift-ab")  # (A against its replay)
    assert accepted.returncode == 1 and accepted.stdout.startswith("drift: 6 scenarios of recording (A) against replay")
    assert ("field-extra", "descriptor") not in {(row[0].strip(), row[1].strip()) for row in _rows(accepted.stdout)}
    assert "accepted in drift.toml: field-extra 6 (--show-accepted lists them)" in accepted.stdout, accepted.stdout

    fitted = (tmp_path / "drift" / "simulator.toml").read_text()
    profile = fitted.replace("[simulator", "[profiles.taught.simulator")
    with (tmp_path / "gatekit.toml").open("a") as config:
        config.write(f'\n[profiles.taught]\nbase = "simulator"\n\n{profile}')
    taught = _drift(tmp_path, "--profile", "taught")
    print(taught.stdout)
    assert taught.returncode == 0 and "no difference" in taught.stdout.splitlines()[8], fitted + taught.stdout


@pytest.mark.slow
def test_a_sandbox_profile_against_an_identically_configured_simulator_is_clean(tmp_path: Path) -> None:
    seconds = float(os.environ.get("GATEKIT_DRIFT_POLL", "1"))
    poll = "" if seconds == 3 else f"poll = {{ intervals = [{seconds}], deadline = 60 }}"  # (3: the profile's own)
    for server in stand_in(tmp_path, ""):  # (latency 0.1 s, as the embedded simulator's)
        _certify(tmp_path, server.base_url, poll)
    done = _drift(tmp_path)
    assert done.returncode == 0 and "6 scenarios" in done.stdout and "no difference" in done.stdout, done.stdout
