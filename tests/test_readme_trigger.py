"""The README's "gatekit trigger" section runs as written against a `gatekit simulate` this test starts (issue 38,
#5): its command lines (the ports aside: free ones replace 8080 and 9000), the output it shows, and the control
API's answers it shows for curl."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.test_readme import README, _free_port, commands

SECTION = README[README.index("## gatekit trigger") :]
SECTION = SECTION[: SECTION.index("\n## ", 1)]
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", SECTION, re.DOTALL)
GATEKIT = str(Path(sys.executable).with_name("gatekit"))
CLOCK = re.compile(r"now \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")


def block(language: str, containing: str) -> str:
    return next(text for kind, text in BLOCKS if kind == language and containing in text)


class Session:
    """`gatekit simulate` and `gatekit listen` on free ports, and the environment the README's lines run in."""

    def __init__(self, tmp_path: Path) -> None:
        self.cwd = tmp_path
        self.sim_port, self.listen_port = _free_port(), _free_port()
        self.env = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
        self.env["GATEWAY_BASE_URL"] = f"http://127.0.0.1:{self.sim_port}/paynet"  # (wins over the profile)
        self.started: list[subprocess.Popen[str]] = []

    def ports(self, line: str) -> str:
        for readme, port in (("8080", self.sim_port), ("9000", self.listen_port)):
            line = line.replace(f"--port {readme}", f"--port {port}").replace(f".0.1:{readme}", f".0.1:{port}")
        return line

    def start(self, line: str, ready: str) -> subprocess.Popen[str]:
        process = subprocess.Popen([GATEKIT, *shlex.split(self.ports(line))[1:]], cwd=self.cwd, env=self.env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        self.started.append(process)
        assert process.stdout is not None and ready in process.stdout.readline()
        return process

    def run(self, line: str) -> subprocess.CompletedProcess[str]:
        argv = shlex.split(self.ports(line))
        program = GATEKIT if argv[0] == "gatekit" else str(shutil.which(argv[0]))
        return subprocess.run([program, *argv[1:]], cwd=self.cwd, env=self.env, capture_output=True, text=True,
                              timeout=60, check=False)  # fmt: skip

    def stop(self) -> list[str]:
        """Stop what was started; the lines the last one printed after its first (the listener's arrivals)."""
        lines: list[str] = []
        for process in reversed(self.started):
            process.terminate()
            out, _ = process.communicate(timeout=30)
            lines = out.splitlines() if process is self.started[-1] else lines
        return lines


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    running = Session(tmp_path)
    try:
        yield running
    finally:
        for process in running.started:
            if process.poll() is None:
                process.kill()
                process.communicate(timeout=30)


def test_the_trigger_session_runs_as_written_and_prints_what_the_readme_shows(session: Session) -> None:
    lines = commands(block("sh", "gatekit trigger force-status"))
    simulate, listen, sale, *triggers = lines
    assert simulate == "gatekit simulate --port 8080" and listen == "gatekit listen --port 9000"
    session.start(simulate, "simulator: http://127.0.0.1:")
    session.start(listen, "")
    sold = session.run(sale)
    assert sold.returncode == 0, sold.stderr
    assert json.loads(sold.stdout)["paynet-order-id"] == "8056020"  # (a new simulator's first order)
    printed = []
    for line in triggers:
        assert line.startswith("gatekit trigger "), line
        done = session.run(line)
        assert done.returncode == 0 and done.stderr == "", (line, done.stderr)
        printed += done.stdout.splitlines()
    shown = [session.ports(line) for line in commands(block("text", "order 8056020: sale 8056020 is now approved"))]
    assert [CLOCK.sub("now <time>", line) for line in printed] == [CLOCK.sub("now <time>", line) for line in shown]
    waited = {"orderid": "8056020", "attempts": "3", "timeout": "10"}
    delivered = requests.get(f"http://127.0.0.1:{session.sim_port}/_sim/callbacks", params=waited, timeout=30)
    assert not delivered.json()["timed_out"], delivered.text
    arrivals = [json.loads(line) for line in session.stop() if '"params"' in line]
    assert [(a["params"]["type"], a["params"]["status"]) for a in arrivals] == [
        ("sale", "approved"),
        ("sale", "approved"),
        ("chargeback", "approved"),
    ]


@pytest.mark.skipif(shutil.which("curl") is None, reason="no curl here")
def test_the_curl_lines_answer_what_the_readme_shows(session: Session) -> None:
    session.start("gatekit simulate --port 8080", "simulator: http://127.0.0.1:")
    listing, openapi, refused = commands(block("sh", "curl -s"))
    index = json.loads(session.run(listing).stdout)
    assert any(route["path"] == "/_sim/faults" for route in index["routes"])
    assert json.loads(session.run(openapi).stdout)["openapi"] == "3.1.0"
    answer = json.loads(session.run(refused).stdout)
    assert answer == json.loads(block("json", '"problems"'))
