"""``gatekit certify -n 2`` against a team's simulator (one for every worker): a scenario that moves what all share,
the simulator's clock or its fault plans, runs alone; the others still run side by side (``certify.shared``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from toolkit.certify.shared import RunLock, moves_shared_state, shared_state_reason
from toolkit.simulator.server import SimulatorServer

FEATURE = """\
Feature: A team's simulator
  Scenario: Time passes on the team's simulator
    Given the scenario takes a while
    When 1 seconds pass on the gateway's clock

  Scenario: A slow scenario A
    Given the scenario takes a while

  Scenario: A slow scenario B
    Given the scenario takes a while

  Scenario: A slow scenario C
    Given the scenario takes a while

  Scenario: A slow scenario D
    Given the scenario takes a while
"""
STEPS = """\
import json, os, time

import pytest
from pytest_bdd import given

pytest_plugins = ["toolkit.steps"]


@given("the scenario takes a while")
def takes_a_while():
    time.sleep(1.0)


@pytest.fixture(autouse=True)
def noted(request):
    started = time.monotonic()
    yield
    with open(os.environ["INTERVALS"], "a") as out:
        out.write(json.dumps([request.node.name, started, time.monotonic()]) + "\\n")
"""


@pytest.fixture(scope="module")
def team() -> Iterator[SimulatorServer]:
    with SimulatorServer() as server:
        yield server


def test_a_scenario_that_moves_the_clock_runs_alone_and_the_others_side_by_side(tmp_path, team):
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "team.feature").write_text(FEATURE)
    (tmp_path / "conftest.py").write_text(STEPS)
    (tmp_path / "gatekit.toml").write_text(f'[profiles.team]\nbase = "simulator"\nbase_url = "{team.base_url}"\n')
    intervals = tmp_path / "intervals.jsonl"
    env = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    command = [sys.executable, "-m", "toolkit.cli", "certify", "--profile", "team", "-n", "2", "--no-html",
               "--suite-only", "--suite", "features"]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, env={**env, "INTERVALS": str(intervals)}, capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    said = (f"starting 2 workers against the simulator at {team.base_url} (2 scenarios at a time, the longest first; "
            "a scenario that moves its clock or faults")  # fmt: skip
    assert said in done.stdout, done.stdout
    runs = [json.loads(line) for line in intervals.read_text().splitlines()]
    [clock] = [(start, end) for name, start, end in runs if "time_passes" in name]
    others = [(start, end) for name, start, end in runs if "time_passes" not in name]
    assert len(others) == 4
    assert all(end <= clock[0] or start >= clock[1] for start, end in others), (clock, others)
    assert any(a[0] < b[1] and b[0] < a[1] for a in others for b in others if a != b), others  # still parallel


def test_the_steps_that_move_the_shared_clock_or_faults_are_marked():
    from toolkit.suite.steps import conftest, test_callbacks

    for step in (conftest.seconds_pass, conftest.days_pass, test_callbacks.retries, test_callbacks.duplicate_callback):
        assert shared_state_reason(step), step
    assert shared_state_reason(conftest.charge_back) is None  # (one order's: nobody else's)


def test_one_alone_waits_for_those_running_and_the_next_wait_for_it(tmp_path):
    lock = RunLock(tmp_path)
    seen: list[str] = []

    def scenario(name: str, alone: bool, seconds: float) -> None:
        with lock.hold(alone=alone):
            seen.append(f"{name} starts")
            time.sleep(seconds)
            seen.append(f"{name} ends")

    first = threading.Thread(target=scenario, args=("shared-1", False, 1.0))
    first.start()
    time.sleep(0.3)
    alone = threading.Thread(target=scenario, args=("alone", True, 0.2))
    alone.start()
    time.sleep(0.3)
    later = threading.Thread(target=scenario, args=("shared-2", False, 0.1))  # (comes while "alone" waits)
    later.start()
    for thread in (first, alone, later):
        thread.join(5)

    assert seen == ["shared-1 starts", "shared-1 ends", "alone starts", "alone ends",
                    "shared-2 starts", "shared-2 ends"]  # fmt: skip


def test_a_step_of_ones_own_can_say_it_moves_shared_state():
    @moves_shared_state("resets the team simulator's merchants")
    def reset() -> None: ...

    assert shared_state_reason(reset) == "resets the team simulator's merchants"
