"""Ctrl-C or SIGTERM to ``gatekit certify`` (issue 19, #8): one line, exit 130, pytest and every process it
started (a real Chromium and its ChromeDriver, a helper process) ended, and the previous run's reports kept as
they were: a run's files replace the previous run's together, or not at all.

The signal goes to ``gatekit certify`` alone (``kill -INT PID``: a CI runner stopping a job), not to its process
group: before, pytest was killed and its browsers stayed, under PID 1.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolkit.certify.plugin import no_browser_reason
from toolkit.certify.runner import signals_at_default

FEATURE = """Feature: A long run
  Scenario: A payer who takes her time
    Given a payer whose browser is open
    Then she waits for ever
"""
STEPS = """
import json, os, subprocess, time
from pathlib import Path

from pytest_bdd import given, then

READY = Path(os.environ["READY_FILE"])


def descendants(root):
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [root]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


@given("a payer whose browser is open", target_fixture="opened")
def opened(request):
    browser = os.environ.get("WITH_BROWSER") == "1"
    payer = request.getfixturevalue("browser_payer") if browser else None
    helper = subprocess.Popen(["sleep", "600"])
    return payer, helper


@then("she waits for ever")
def waits(opened):
    READY.write_text(json.dumps(descendants(os.getpid())))
    try:
        time.sleep(120)  # (what the interruption stops)
    except KeyboardInterrupt:  # (pytest stopped by a SIGINT, not killed)
        READY.with_suffix(".sigint").write_text("stopped by SIGINT")
        raise
"""
PREVIOUS = {"reports/junit.xml": "<testsuites name='previous'/>", "reports/summary.md": "# previous run\n",
            "allure-results/previous-result.json": "{}"}  # fmt: skip


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # (a zombie is ended: its parent has not read its status yet)


def _ignoring_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def interrupted_run(
    tmp_path: Path, sig: signal.Signals, *, browser: bool, ignoring_sigint: bool = False
) -> tuple[int, str, str, list[int]]:
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "long.feature").write_text(FEATURE)
    (tmp_path / "conftest.py").write_text(STEPS)
    for name, text in PREVIOUS.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    ready = tmp_path / "ready.json"
    env = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    env.update(READY_FILE=str(ready), WITH_BROWSER="1" if browser else "0")
    command = [sys.executable, "-m", "toolkit.cli", "certify", "--suite-only", "--no-html"]
    process = subprocess.Popen(  # (started as a CI runner starts it: SIGINT handled, whatever this worker has)
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_ignoring_sigint if ignoring_sigint else signals_at_default,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the scenario never started"
        time.sleep(0.05)
    time.sleep(0.05)  # (the file is written whole: json.dumps then one write)
    started = [int(pid) for pid in json.loads(ready.read_text())]
    process.send_signal(sig)  # to gatekit certify alone
    stdout, stderr = process.communicate(timeout=60)
    return process.returncode, stdout, stderr, started


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_ends_everything_it_started_and_keeps_the_previous_reports(tmp_path, sig):
    code, stdout, stderr, started = interrupted_run(tmp_path, sig, browser=False)
    assert code == 130, stdout + stderr
    assert "Traceback" not in stdout + stderr and "KeyboardInterrupt" not in stdout + stderr
    assert stderr.strip().splitlines() == [
        "gatekit certify: interrupted; pytest and its browsers were stopped, nothing of this run was kept "
        "(reports/ and allure-results/ hold the previous run's files)"
    ]
    assert started and not [pid for pid in started if alive(pid)]
    for name, text in PREVIOUS.items():
        assert (tmp_path / name).read_text() == text, name
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["junit.xml", "summary.md"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


@pytest.mark.slow
def test_pytest_is_stopped_by_sigint_even_when_certify_was_started_ignoring_it(tmp_path):
    """A process that starts certify with SIGINT ignored (a CI step's shell, a test worker) passed that on to
    pytest, which then ignored the SIGINT certify sends it and was killed 15 s later."""
    code, stdout, stderr, started = interrupted_run(tmp_path, signal.SIGTERM, browser=False, ignoring_sigint=True)
    assert code == 130, stdout + stderr
    assert (tmp_path / "ready.sigint").read_text() == "stopped by SIGINT"
    assert started and not [pid for pid in started if alive(pid)]


@pytest.mark.slow
def test_an_interrupted_run_ends_the_real_browser_and_its_driver(tmp_path):
    reason = no_browser_reason()
    if reason:
        pytest.skip(reason)
    code, stdout, stderr, started = interrupted_run(tmp_path, signal.SIGINT, browser=True)
    assert code == 130, stdout + stderr
    names = [Path(f"/proc/{pid}/comm") for pid in started]
    assert len(started) >= 3, names  # chromedriver, chromium (and its helpers), sleep
    assert not [pid for pid in started if alive(pid)]


def test_the_report_paths_printed_are_where_the_files_end_up(tmp_path, monkeypatch):
    """A path the run wrote in its staging folder (absolute, as Allure's index is; the folders relative, as
    gatekit certify's defaults are) is named where it will be, not in the staging folder that goes away."""
    from toolkit.certify.options import CertifyOptions
    from toolkit.certify.staging import StagedRun

    monkeypatch.chdir(tmp_path)
    staged = StagedRun(CertifyOptions())
    try:
        index = (staged.options.reports / "allure-report" / "index.html").resolve()
        assert staged.final_path(index) == (tmp_path / "reports" / "allure-report" / "index.html").resolve()
    finally:
        staged.discard()
