"""``gatekit load``'s safety (issue 34, #7): the cap follows where the requests go, the web UI stays on loopback.

The cap: a simulator that this run did not start (another ``SimulatorServer`` on a free port, standing for a
sandbox or a team's simulator) is reached through ``GATEWAY_BASE_URL`` with the default profile, or through a
profile with ``base = "simulator"``; it counts what arrives, second by second. Before, both loaded it uncapped
(about 170 requests a second here).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from toolkit.load.plan import DEFAULT_MAX_RPS, LoadPlan
from toolkit.simulator import SimulatorServer

GATEKIT = [sys.executable, "-m", "toolkit.cli"]
RUN_SECONDS = 4


def _env(**extra: str) -> dict[str, str]:
    clean = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    return {**clean, **extra}


# --- the cap -------------------------------------------------------------------------------------------


def test_only_the_simulator_the_run_started_goes_uncapped():
    own = LoadPlan(simulator_url="http://127.0.0.1:4000/paynet")
    assert own.cap("http://127.0.0.1:4000/paynet") is None and own.cap("http://127.0.0.1:4000/paynet/") is None
    assert own.cap("http://127.0.0.1:4001/paynet") == DEFAULT_MAX_RPS  # a simulator elsewhere, on this machine
    assert own.cap("https://sandbox.gateway.example/paynet") == DEFAULT_MAX_RPS
    assert LoadPlan().cap("http://127.0.0.1:8080/paynet") == DEFAULT_MAX_RPS  # none started: every target
    assert LoadPlan(max_rps=40).cap("http://127.0.0.1:4001/paynet") == 40


class Arrivals:
    """ASGI middleware noting when each request arrives."""

    def __init__(self, app: Any, times: list[float]) -> None:
        self.app, self.times = app, times

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.times.append(time.monotonic())
        await self.app(scope, receive, send)


@pytest.fixture
def elsewhere() -> Iterator[tuple[SimulatorServer, list[float]]]:
    """A simulator this run does not start, on a free loopback port, and the times its requests arrived."""
    times: list[float] = []
    server = SimulatorServer()
    server.add_middleware(Arrivals, times=times)
    with server:
        yield server, times


def busiest_second(times: list[float]) -> int:
    """The most requests that arrived within one second."""
    times = sorted(times)
    return max((sum(1 for t in times[i:] if t < start + 1.0) for i, start in enumerate(times)), default=0)


@pytest.mark.parametrize("aimed", ["GATEWAY_BASE_URL", "profile"], ids=["environment-default-profile", "profile"])
def test_a_simulator_the_run_did_not_start_is_capped(tmp_path: Path, elsewhere, aimed: str):
    """GATEWAY_BASE_URL with the default profile, or a profile based on "simulator" pointing elsewhere: whatever
    the profile says, the run sends that URL at most 2 requests a second, gateway calls and payer pages together,
    and says so, naming the URL, the rate and the flag that sets it."""
    server, times = elsewhere
    env, profile = _env(), []
    if aimed == "GATEWAY_BASE_URL":
        env["GATEWAY_BASE_URL"] = server.base_url
    else:
        (tmp_path / "gatekit.toml").write_text(f'[profiles.team]\nbase = "simulator"\nbase_url = "{server.base_url}"\n')
        profile = ["--profile", "team"]
    run = subprocess.run(
        [*GATEKIT, "load", *profile, "--weights", "sale=1,hosted_form=1", "--headless", "-u", "10", "-r", "10",
         "-t", f"{RUN_SECONDS}s", "--think", "0", "--reports", str(tmp_path / "r"), "--", "--only-summary"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode in (0, 1), run.stderr[-3000:]
    # Users send during RUN_SECONDS, each request on a turn of the cap (the first at once, then 2 a second); a turn
    # that a busy machine kept waiting may arrive next to the following one, which the busiest second allows for.
    assert 4 <= len(times) <= DEFAULT_MAX_RPS * RUN_SECONDS + 2, len(times)
    assert busiest_second(times) <= 2 * DEFAULT_MAX_RPS + 1, (busiest_second(times), len(times))
    said = f"gatekit load: {server.base_url} is not a simulator this run started: capped at 2 requests a second"
    assert said in run.stderr and "(--max-rps N sets the cap)" in run.stderr, run.stderr[:2000]


def test_a_profile_that_is_not_a_simulator_is_refused_naming_the_cap(tmp_path: Path):
    env = _env(GATEWAY_BASE_URL="https://sandbox.gateway.example/paynet", GATEWAY_LOGIN="acme",
               GATEWAY_CONTROL_KEY="k" * 20, GATEWAY_ENDPOINT_ID="1")  # fmt: skip
    run = subprocess.run([*GATEKIT, "load", "--profile", "sandbox", "--headless"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert run.returncode == 2
    assert "profile sandbox (https://sandbox.gateway.example/paynet) is not a gatekit simulator" in run.stderr
    assert "--target-is-not-a-simulator: the run is then capped at 2 requests a second" in run.stderr


# --- the web UI ----------------------------------------------------------------------------------------


def listening(port: int) -> set[str]:
    """The addresses that TCP sockets listen on at ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for name, width in (("tcp", 8), ("tcp6", 32)):
        path = Path("/proc/net") / name
        for line in path.read_text().splitlines()[1:] if path.exists() else ():
            local, state = line.split()[1], line.split()[3]
            address, _, port_hex = local.partition(":")
            if state == "0A" and int(port_hex, 16) == port and len(address) == width:
                found.add(_address(address))
    return found


def _address(hexed: str) -> str:
    """An address of /proc/net/tcp (32-bit words in host order, little-endian here) as text."""
    import ipaddress

    words = bytes.fromhex(hexed)
    raw = b"".join(words[i : i + 4][::-1] for i in range(0, len(words), 4))
    return str(ipaddress.ip_address(raw))


def descendants(pid: int) -> list[int]:
    """The processes ``pid`` started, and theirs."""
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


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the listening sockets from /proc/net")
def test_the_web_ui_listens_on_loopback(tmp_path: Path, free_tcp_port: int):
    """``gatekit load`` as the README starts it with the web UI: Locust listens on 127.0.0.1, not every interface;
    SIGTERM then ends it, Locust included."""
    port = free_tcp_port
    log = tmp_path / "stderr.txt"
    with log.open("w") as stderr:
        process = subprocess.Popen([*GATEKIT, "load", "--reports", str(tmp_path / "r"), "--", "--web-port", str(port)],
                                   cwd=tmp_path, env=_env(), stdout=subprocess.DEVNULL, stderr=stderr)  # fmt: skip
    started: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not listening(port) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # (a deadline poll: Locust says nothing once it listens)
        started = descendants(process.pid)
        assert listening(port) == {"127.0.0.1"}, (listening(port), process.poll())
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        assert process.returncode == 0, log.read_text()[-2000:]  # (no test was running: nothing interrupted)
        assert not listening(port)
    finally:
        for pid in [*(started or descendants(process.pid)), process.pid]:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait()


def test_the_web_ui_address_is_loopback_unless_asked(monkeypatch):
    from toolkit.cli import build_parser, parse
    from toolkit.commands.load import locust_command

    monkeypatch.delenv("LOCUST_WEB_HOST", raising=False)
    plan = LoadPlan()

    def web_hosts(*argv: str) -> list[str]:
        command = locust_command(parse(build_parser(), ["load", *argv]), plan, None)
        return [command[i + 1] for i, arg in enumerate(command) if arg == "--web-host"]

    assert web_hosts() == ["127.0.0.1"]
    assert web_hosts("--web-host", "0.0.0.0") == ["0.0.0.0"]
    assert web_hosts("--", "--web-host", "0.0.0.0")[-1] == "0.0.0.0"  # (Locust takes the last one given)
    monkeypatch.setenv("LOCUST_WEB_HOST", "0.0.0.0")
    assert web_hosts() == []  # (Locust reads the variable)


def test_the_help_says_where_the_web_ui_listens():
    done = subprocess.run([*GATEKIT, "load", "--help"], capture_output=True, text=True, timeout=60, env=_env())
    text = " ".join(done.stdout.split())
    assert "--web-host WEB_HOST the web UI's interface (default 127.0.0.1; 0.0.0.0: every one)" in text, text
