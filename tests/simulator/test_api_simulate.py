"""``gatekit simulate`` as a user runs it: a subprocess whose first line names the base URL.

The pipe is read line by line (a reader thread feeds a queue, so a silent process fails the test
after a timeout instead of hanging it); the process is stopped with SIGTERM or SIGINT and must
exit 0.  A file database survives even SIGKILL.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.network import ipv6_loopback
from toolkit import demo
from toolkit.client import GatewayClient
from toolkit.config import GatewayConfig, simulator_config
from toolkit.masking import Secret
from toolkit.models import Status
from toolkit.testdata import sale_fields

GATEKIT = Path(sys.executable).parent / "gatekit"
pytestmark = pytest.mark.slow  # each test starts a Python process


class Simulate:
    """One ``gatekit simulate`` process; ``header`` holds its lines up to ``stop:``."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [str(GATEKIT), "simulate", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.header = self._header()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def line(self) -> str | None:
        return self._lines.get(timeout=30)

    def _header(self) -> list[str]:
        lines: list[str] = []
        while (line := self.line()) is not None:
            lines.append(line)
            if line.startswith("stop:"):
                break
        return lines

    @property
    def base_url(self) -> str:
        first = self.header[0]
        assert first.startswith("simulator: http://127.0.0.1:") and first.endswith("/paynet"), self.header
        return first.removeprefix("simulator: ")

    def close(self) -> None:
        """Killed if still running, its pipes closed."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    def stop(self, signum: int = signal.SIGTERM) -> tuple[int, list[str], str]:
        """Send ``signum``; the exit status, the lines printed after the header, and stderr."""
        self.process.send_signal(signum)
        status = self.process.wait(timeout=30)
        rest = []
        while (line := self.line()) is not None:
            rest.append(line)
        assert self.process.stderr is not None
        return status, rest, self.process.stderr.read()


@pytest.fixture
def simulate() -> Iterator[list[Simulate]]:
    """Start processes with ``simulate.append(Simulate(...))``; any still running is killed at the end."""
    started: list[Simulate] = []
    yield started
    for sim in started:
        sim.close()


def failed(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(GATEKIT), "simulate", "--port", "0", *args], capture_output=True, text=True, timeout=60)


LOGGED = re.compile(r"\d\d:\d\d:\d\d\.\d{3} POST /paynet/api/v2/(?P<op>sale|status)/1001 (?P=op) 200 "
                    r"(async|status)-response orderid=(?P<orderid>\d+) \d+ ms")  # fmt: skip


@pytest.mark.parametrize(
    ("signum", "quiet"), [(signal.SIGTERM, False), (signal.SIGINT, True)], ids=["SIGTERM", "Ctrl-C, --quiet"]
)
def test_simulate_serves_the_demo_merchant_until_stopped(simulate: list[Simulate], signum: int, quiet: bool) -> None:
    simulate.append(sim := Simulate(*(["--quiet"] if quiet else [])))
    with GatewayClient(simulator_config(sim.base_url)) as client:
        sale = client.sale(sale_fields())
        assert client.wait_for_final_status(sale).status is Status.APPROVED
    assert f"  endpoint ids: {demo.ENDPOINT_ID}" in sim.header
    assert f"  endpoint group ids: {demo.ENDPOINT_GROUP_ID}" in sim.header
    assert f"  control key: {demo.CONTROL_KEY}" in sim.header  # the documented demo key, and only that one
    status, rest, errors = sim.stop(signum)
    assert (status, rest[-1], errors) == (0, f"stopped: {sim.base_url}", "")
    if quiet:
        assert rest == [f"stopped: {sim.base_url}"]
    else:  # one masked line per request: the sale, then each status poll
        logged = [LOGGED.fullmatch(line) for line in rest[:-1]]
        assert all(logged) and [m["op"] for m in logged if m][:2] == ["sale", "status"], rest
        assert {m["orderid"] for m in logged if m} == {sale.orderid}


def test_what_start_up_made_is_set_aside_from_the_garbage_collector(simulate: list[Simulate], tmp_path: Path) -> None:
    """Once it serves, ``gatekit simulate`` freezes what start-up made (``gc.freeze``): a full collection then walks
    only what requests made.  The count is read as the process ends, by a ``sitecustomize`` put on its path."""
    frozen = tmp_path / "frozen"
    (tmp_path / "sitecustomize.py").write_text(
        "import atexit, gc, os\n"
        "atexit.register(lambda: open(os.environ['FROZEN'], 'w').write(str(gc.get_freeze_count())))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])),
           "FROZEN": str(frozen)}  # fmt: skip
    simulate.append(sim := Simulate("--quiet", env=env))
    status, _, errors = sim.stop()
    assert (status, errors) == (0, "")
    assert int(frozen.read_text()) > 10_000  # (the modules, the app, the catalogue: 0 without the freeze)


def test_configured_merchants_are_listed_without_their_keys(simulate: list[Simulate], tmp_path: Path) -> None:
    settings = tmp_path / "sim.toml"
    settings.write_text(
        '[simulator]\nlatency = 0\n\n[[merchant]]\nlogin = "acme"\ncontrol_key = "ACME-SECRET-KEY"\n'
        'endpoint_ids = [51494, 51495]\nendpoint_group_ids = [7001]\npayout_balance = "50.00"\n'
    )
    simulate.append(sim := Simulate("--config", str(settings)))
    assert "merchant: acme" in sim.header and "  endpoint ids: 51494, 51495" in sim.header
    assert "  endpoint group ids: 7001" in sim.header
    assert not any("ACME-SECRET-KEY" in line or demo.CONTROL_KEY in line for line in sim.header)
    config = GatewayConfig(sim.base_url, "acme", Secret("ACME-SECRET-KEY"), endpoint_id="51495")
    with GatewayClient(config) as client:
        assert client.sale(sale_fields()).orderid
    assert sim.stop()[0] == 0


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ("[simulator]\nlatencyy = 1\n", "unknown settings latencyy"),
        ("[simulator]\nlatency = -1\n", "latency must be a number of seconds >= 0"),
        ('[[merchant]]\nlogin = "acme"\n', "[[merchant]] #1: 'control_key' is required"),
        ("not toml [", "sim.toml"),
    ],
    ids=["unknown setting", "negative latency", "incomplete merchant", "not TOML"],
)
def test_unusable_settings_exit_2_with_the_reason(tmp_path: Path, settings: str, message: str) -> None:
    path = tmp_path / "sim.toml"
    path.write_text(settings)
    result = failed("--config", str(path))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("gatekit simulate: ") and message in result.stderr


def test_a_busy_port_exits_2() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = subprocess.run(
            [str(GATEKIT), "simulate", "--port", str(taken.getsockname()[1])],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2 and "cannot listen on 127.0.0.1:" in result.stderr


def test_a_negative_latency_option_exits_2() -> None:
    result = failed("--latency", "-0.5")
    assert result.returncode == 2 and "--latency -0.5: must be 0 or more seconds" in result.stderr


def test_an_acknowledged_sale_survives_sigkill_with_a_file_database(simulate: list[Simulate], tmp_path: Path) -> None:
    db = str(tmp_path / "sim.db")
    simulate.append(first := Simulate("--db", db, "--latency", "2"))
    assert f"database: {db}" in first.header and "latency: 2 s" in first.header
    with GatewayClient(simulator_config(first.base_url)) as client:
        ack = client.sale(sale_fields())
        assert (
            client.status(client_orderid=ack.client_orderid).status is Status.PROCESSING
        )  # still to be decided when the process dies
    first.process.kill()
    first.process.wait(timeout=30)
    simulate.append(second := Simulate("--db", db))
    with GatewayClient(simulator_config(second.base_url)) as client:
        status = client.wait_for_final_status(client_orderid=ack.client_orderid)
        assert (status.orderid, status.status) == (ack.orderid, Status.APPROVED)
        assert int(client.sale(sale_fields()).orderid) > int(ack.orderid)
    assert second.stop()[0] == 0


# --- issue 19, #9 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "said"), [("", "is empty"), ("   ", "is empty"), ("short", "is 5 characters")])
def test_an_empty_or_short_control_token_is_refused_in_one_line(value: str, said: str) -> None:
    """An empty GATEKIT_CONTROL_TOKEN turned token mode off without a word."""
    result = subprocess.run([str(GATEKIT), "simulate", "--port", "0"], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "GATEKIT_CONTROL_TOKEN": value})  # fmt: skip
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip() == (
        f"gatekit simulate: GATEKIT_CONTROL_TOKEN {said}: a control token has at least 16 characters "
        "(unset it to keep /_sim/ on loopback without one)"
    )


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback (::1) on this machine")
def test_the_simulator_listens_on_ipv6_loopback() -> None:
    from toolkit.simulator import SimulatorServer

    with SimulatorServer(host="::1") as server, GatewayClient(server.client_config()) as client:
        assert server.base_url.startswith("http://[::1]:")
        assert client.wait_for_final_status(client.sale(sale_fields())).status is Status.APPROVED
        with server.control() as control:
            assert control.health()["status"] == "ok"
