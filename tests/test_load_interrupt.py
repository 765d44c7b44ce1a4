"""SIGTERM or Ctrl-C to ``gatekit load`` (issue 34, #7): the users stop first, then the reports are written, then
the embedded simulator stops; the run exits 130 and its summary says INTERRUPTED.

The signal goes to ``gatekit load`` alone (``kill PID``: a CI runner stopping a job), as the README starts it,
once flows have finished (Locust's statistics, printed every 2 s, count them). Before, SIGTERM killed the
command and its simulator and left Locust running against nothing: transport errors, exit 1, and a summary
saying PASS; Ctrl-C was swallowed and the run went on.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from contextlib import suppress
from pathlib import Path
from typing import IO

import pytest

GATEKIT = [sys.executable, "-m", "toolkit.cli"]
FLOWS_DONE = re.compile(r"flow\s+sale\s+[1-9]\d*\s")  # a line of Locust's statistics: sale flows finished


def _env() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}


class Lines:
    """The lines of a process's stream, read by a thread of their own (no read blocks the test)."""

    def __init__(self, stream: IO[str]) -> None:
        self.read: list[str] = []
        self._queue: queue.Queue[str] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self.read.append(line)
            self._queue.put(line)

    def first(self, pattern: re.Pattern[str], timeout: float) -> str:
        """The next line that ``pattern`` matches (AssertionError after ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                break
            if pattern.match(line):
                return line.strip()
        raise AssertionError(f"no line {pattern.pattern!r} within {timeout} s: {''.join(self.read)[-2000:]}")

    def text(self, timeout: float) -> str:
        """All of it, once the stream has ended (within ``timeout`` seconds)."""
        self._thread.join(timeout)
        return "".join(self.read)


def descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        try:
            children = Path(f"/proc/{todo.pop()}/task").glob("*/children")
            pids = [int(child) for path in children for child in path.read_text().split()]
        except OSError:
            continue
        found += pids
        todo += pids
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds Locust's process in /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_an_interrupted_run_stops_its_users_then_reports_then_its_simulator(tmp_path: Path, signum: int):
    reports = tmp_path / "reports"
    process = subprocess.Popen(
        [*GATEKIT, "load", "--headless", "-u", "5", "-r", "5", "-t", "2m", "--think", "0", "--weights", "sale=1",
         "--reports", str(reports)],
        cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    output, errors = Lines(process.stdout), Lines(process.stderr)
    started: list[int] = []
    try:
        errors.first(FLOWS_DONE, timeout=60)
        started = descendants(process.pid)
        process.send_signal(signum)
        process.wait(timeout=60)
        said = errors.text(timeout=10)
        assert process.returncode == 130, said[-3000:]
        assert "gatekit load: interrupted; the users stopped, then" in said and "(INTERRUPTED)" in said, said[-2000:]
        assert started and not any(alive(pid) for pid in started)  # Locust ended with the command
        results = json.loads((reports / "results.json").read_text())
        assert results["interrupted"] is True and results["verdict"] == "INTERRUPTED"
        flows = sum(row["requests"] for row in results["rows"] if row["type"] == "flow")
        assert flows >= 1, results["rows"]
        assert results["failures_by_kind"] == {}, results["failures_by_kind"]  # no transport error of our own
        summary = (reports / "summary.md").read_text()
        assert summary.startswith("# gatekit load: INTERRUPTED\n") and "0 failed." in summary
        assert (reports / "report.html").stat().st_size > 0
    finally:
        for pid in [*(started or descendants(process.pid)), process.pid]:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait()
        for lines, stream in ((output, process.stdout), (errors, process.stderr)):
            lines.text(timeout=10)  # (read to its end: then closed)
            stream.close()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds Locust's processes in /proc")
def test_an_interrupted_distributed_run_stops_the_workers_users_before_its_reports(tmp_path: Path, free_tcp_port: int):
    """SIGTERM to the master's gatekit load: the workers stop their users and send their last statistics, then the
    master writes the reports (INTERRUPTED, 130) and tells the workers to quit. (Locust's master quits its workers
    in a ``quitting`` listener of its own, which ran first: the test had stopped, the summary said PASS.)"""
    port, reports = str(free_tcp_port), tmp_path / "reports"
    master = subprocess.Popen(
        [*GATEKIT, "load", "--master", "--expect-workers", "1", "--master-bind-host", "127.0.0.1",
         "--master-bind-port", port, "--headless", "-u", "4", "-r", "4", "-t", "2m", "--think", "0",
         "--weights", "sale=1", "--reports", str(reports)],
        cwd=tmp_path, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    worker = subprocess.Popen(
        [*GATEKIT, "load", "--worker", "--master-host", "127.0.0.1", "--master-port", port],
        cwd=tmp_path, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert master.stderr is not None
    errors = Lines(master.stderr)
    started: list[int] = []
    try:
        errors.first(FLOWS_DONE, timeout=60)
        started = descendants(master.pid) + descendants(worker.pid)
        master.send_signal(signal.SIGTERM)
        master.wait(timeout=90)
        worker.wait(timeout=60)
        said = errors.text(timeout=10)
        assert (master.returncode, worker.returncode) == (130, 0), said[-3000:]
        results = json.loads((reports / "results.json").read_text())
        assert results["verdict"] == "INTERRUPTED" and results["workers"] == 1
        assert sum(row["requests"] for row in results["rows"] if row["type"] == "flow") >= 1
        assert results["failures_by_kind"] == {}, results["failures_by_kind"]
        assert not any(alive(pid) for pid in started)
    finally:
        for pid in [*(started or descendants(master.pid) + descendants(worker.pid)), master.pid, worker.pid]:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        master.wait()
        worker.wait()
        errors.text(timeout=10)
        master.stderr.close()
