"""Recordings and drift, end to end: ``gatekit certify --record`` against a stand-in sandbox (a second simulator,
run as an outside gateway, whose settings inject one known difference), then ``gatekit drift``: each injected
difference is reported, and nothing else; against a simulator configured as the embedded one, none.

The runs take the ``declines`` scenarios (a sale and its status per row of the CVV2 table): enough for every
kind of difference injected here, and quick.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import suite_passes
from tests.once_per_run import once_per_run
from toolkit import demo
from toolkit.simulator import SimulatorServer
from toolkit.simulator.settings import load_settings

# One stand-in difference at a time through the command line: the long pass (make test-long). make test runs all
# four at once, in process (tests/test_drift_teach.py: each named, then taught away).
LONG_PASS = pytest.mark.skipif(not suite_passes.FULL, reason="the long pass (make test-long)")

TAGS = "declines"


def stand_in(tmp: Path, simulator: str) -> Iterator[SimulatorServer]:
    path = tmp / "stand-in.toml"
    latency = "" if "latency" in simulator else "latency = 0.1\n"  # (the embedded simulator's)
    path.write_text(f"[simulator]\n{latency}{simulator}\n")
    with SimulatorServer(load_settings(path)) as server:
        yield server


def record(tmp: Path, server: SimulatorServer) -> Path:
    """``gatekit certify --profile standin --record`` against ``server``, as a merchant runs it on a sandbox."""
    key = tmp / "demo-private.pem"
    key.write_bytes(demo.private_key_pem())
    (tmp / "gatekit.toml").write_text(
        '[profiles.standin]\nbase = "sandbox"\n'
        f'base_url = "{server.base_url}"\nendpoint_id = "{demo.ENDPOINT_ID}"\n'
        f'endpoint_group_id = "{demo.ENDPOINT_GROUP_ID}"\n'
        f'login = "{demo.LOGIN}"\ncontrol_key_env = "STANDIN_KEY"\nprivate_key_file = "{key}"\n'
        "poll = { intervals = [0.01, 0.05, 0.1], deadline = 20 }\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GATEWAY_", "GATEKIT_"))}
    env |= {"STANDIN_KEY": demo.CONTROL_KEY, "GATEKIT_BROWSER": "off"}
    command = [sys.executable, "-m", "toolkit.cli", "certify", "--profile", "standin", "--tags", TAGS, "--no-html",
               "--record", "recording", "--in-flight", "2"]  # fmt: skip
    done = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert (tmp / "recording" / "index.json").is_file(), done.stdout[-3000:] + done.stderr[-2000:]
    return tmp / "recording"


def drift(tmp: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    command = [sys.executable, "-m", "toolkit.cli", "drift", "recording", "--out", "drift", *extra]
    done = subprocess.run(command, cwd=tmp, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-2000:]
    return done.returncode, json.loads((tmp / "drift" / "drift.json").read_text()), done.stdout


def kinds(report: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(d["kind"], d["operation"], d["field"]) for d in report["differences"]}


def recorded(factory: pytest.TempPathFactory, tmp: Path, simulator: str) -> Path:
    """A recording against a stand-in with these settings, in ``tmp`` (where ``gatekit drift`` then runs): made
    once per run, as tests that need the same recording share it (``tests/once_per_run.py``)."""

    def build(folder: Path) -> dict[str, str]:
        for server in stand_in(folder, simulator):
            record(folder, server)
        return {"recording": str(folder / "recording")}

    made = once_per_run(factory, "drift-" + hashlib.sha256(simulator.encode()).hexdigest()[:12], build)
    shutil.copytree(made["recording"], tmp / "recording")
    return tmp / "recording"


def run_against(factory: pytest.TempPathFactory, tmp: Path, simulator: str) -> tuple[int, dict[str, Any], str]:
    recorded(factory, tmp, simulator)
    return drift(tmp)


@pytest.mark.slow
def test_a_stand_in_configured_as_the_simulator_shows_no_drift(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    code, report, out = run_against(tmp_path_factory, tmp_path, "")
    assert (code, report["differences"]) == (0, []), out
    assert report["scenarios"] == 6 and "no difference" in out
    assert report["suggested_simulator_settings"]["latency"] == pytest.approx(0.1, abs=0.1)


@pytest.mark.slow
@LONG_PASS
def test_a_slower_answer_is_an_answer_time_difference(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    code, report, out = run_against(tmp_path_factory, tmp_path, "answer_delay = 0.3")
    assert code == 1 and kinds(report) == {("answer-time", "sale", ""), ("answer-time", "status", "")}, out
    assert report["suggested_simulator_settings"]["answer_delay"] == pytest.approx(0.3, abs=0.1)


@pytest.mark.slow
@LONG_PASS
def test_a_field_left_out_of_the_answers_is_a_missing_field(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    code, report, out = run_against(tmp_path_factory, tmp_path, 'omit_fields = ["descriptor"]')
    assert code == 1 and kinds(report) == {("field-extra", "status", "descriptor")}, out
    assert len(report["differences"]) == 6  # one per scenario: the simulator sends it, the stand-in does not


@pytest.mark.slow
@LONG_PASS
def test_another_decline_code_is_an_error_code_difference(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    row = (
        '[simulator.outcomes]\n"116" = { status = "declined", error_code = "05", error_message = "Insufficient funds" }'
    )
    code, report, out = run_against(tmp_path_factory, tmp_path, row)
    found = report["differences"]
    assert code == 1 and [(d["kind"], d["a"], d["b"]) for d in found] == [("error-code", "05", "51")], out
    assert found[0]["scenario"] == "A card that is insufficient-funds is declined"


@pytest.mark.slow
@LONG_PASS
def test_another_outcome_for_one_cvv2_is_a_status_difference_of_that_scenario_only(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    code, report, out = run_against(tmp_path_factory, tmp_path, '[simulator.outcomes]\n"119" = { status = "approved" }')
    found = report["differences"]
    assert code == 1 and {d["scenario"] for d in found} == {"A card that is not-permitted is declined"}, out
    assert ("status", "approved", "declined") in {(d["kind"], d["a"], d["b"]) for d in found}


@pytest.mark.slow
@LONG_PASS
def test_a_longer_processing_is_a_processing_time_difference(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    code, report, out = run_against(tmp_path_factory, tmp_path, "latency = 0.8")
    assert code == 1 and kinds(report) == {("processing-time", "sale", "")}, out
    assert report["suggested_simulator_settings"]["latency"] == pytest.approx(0.8, abs=0.3)


@pytest.mark.slow
def test_differences_a_team_knows_are_accepted_in_drift_toml(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    code, report, _ = run_against(tmp_path_factory, tmp_path, 'omit_fields = ["descriptor"]')
    assert code == 1
    (tmp_path / "drift.toml").write_text(
        '[[accept]]\nkind = "field-extra"\nfield = "descriptor"\nreason = "the sandbox sends no descriptor"\n'
    )
    code, report, out = drift(tmp_path)
    assert code == 0 and all(d["accepted"] == "the sandbox sends no descriptor" for d in report["differences"]), out
    assert "no difference not accepted (6 accepted)" in out
    (tmp_path / "drift.toml").write_text('[[accept]]\nkind = "wording"\nreason = "x"\n')
    done = subprocess.run([sys.executable, "-m", "toolkit.cli", "drift", "recording"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 2 and "kind must be one of http-status" in done.stderr


@pytest.mark.slow
def test_two_recordings_are_compared_without_a_replay(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    for name, settings in (("a", "answer_delay = 0.3"), ("b", "")):  # (the recordings of two tests above)
        folder = tmp_path / name
        folder.mkdir()
        recorded(tmp_path_factory, folder, settings)
    command = [sys.executable, "-m", "toolkit.cli", "drift", "a/recording", "b/recording", "--out", "ab"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    report = json.loads((tmp_path / "ab" / "drift.json").read_text())
    assert done.returncode == 1 and kinds(report) == {("answer-time", "sale", ""), ("answer-time", "status", "")}
    assert (
        (tmp_path / "ab" / "drift.md")
        .read_text()
        .startswith("## ❌ gatekit drift: 1 difference not accepted (2 occurrences)")
    )
    assert "<table>" in (tmp_path / "ab" / "drift.html").read_text()


@pytest.mark.slow
def test_a_replay_on_a_busy_machine_is_not_answer_time_drift(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The replay's simulator answers 0.4 s late, as a loaded CI runner made it (a status answered in 0.85 s where
    the simulator waits 0): its answer times are those its settings give, so there is no drift (issue 34)."""
    from toolkit import drift as drift_api
    from toolkit.simulator.web import gateway

    recorded(tmp_path_factory, tmp_path, "")
    respond = gateway.respond

    async def busy(*args: Any) -> Any:
        await asyncio.sleep(0.4)
        return await respond(*args)

    monkeypatch.setattr(gateway, "respond", busy)
    report = drift_api.against_simulator(tmp_path / "recording", tmp_path / "replay")
    assert [(d.kind, d.operation) for d in report.differences] == []
