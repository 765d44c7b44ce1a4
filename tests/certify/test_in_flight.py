"""``gatekit certify`` against a gateway it does not start runs scenarios side by side (``toolkit.certify.parallel``).

A stand-in sandbox (a simulator with no control API for the run, deciding 0.2 s after each request) is certified
twice, as a user would: ``--in-flight 1`` (one scenario after another), then with no flag (the profile's
``in_flight``).  Both give the same verdicts and the same recordings; the parallel run never had more orders in
flight than the setting (read from its recordings: an order is in flight from its first request to the end of its
last exchange) and did run orders side by side; its callbacks came through the one forwarded port
(``GATEKIT_CALLBACK_PORT``) to the worker whose order each was for, and ended the waits.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path

import pytest

from tests import suite_passes
from toolkit import demo
from toolkit.recording.reading import read_index
from toolkit.simulator.server import SimulatorServer
from toolkit.simulator.settings import default_settings

IN_FLIGHT = 3


@pytest.fixture(scope="module")
def standin():
    with SimulatorServer(default_settings(latency=0.2)) as server:
        yield server


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def project(folder: Path, server: SimulatorServer, callback_port: int) -> Path:
    key = folder / "demo-private.pem"
    key.write_bytes(demo.private_key_pem())
    (folder / "gatekit.toml").write_text(
        "\n".join([
            "[profiles.standin]",
            'base = "sandbox"',
            f'base_url = "{server.base_url}"',
            f'endpoint_id = "{demo.ENDPOINT_ID}"',
            f'endpoint_group_id = "{demo.ENDPOINT_GROUP_ID}"',
            f'login = "{demo.LOGIN}"',
            'control_key_env = "STANDIN_CONTROL_KEY"',
            f'private_key_file = "{key}"',
            f'callback_url = "http://127.0.0.1:{callback_port}"',
            "poll = { intervals = [0.5], deadline = 30 }",
            f"in_flight = {IN_FLIGHT}",
        ]) + "\n"
    )  # fmt: skip
    return folder


def certify(folder: Path, name: str, callback_port: int, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("GATEWAY_", "GATEKIT_"))}
    env |= {"STANDIN_CONTROL_KEY": demo.CONTROL_KEY, "GATEKIT_CALLBACK_PORT": str(callback_port)}
    command = [sys.executable, "-m", "toolkit.cli", "certify", "--profile", "standin", "--no-html",
               "--results", f"results-{name}", "--reports", f"reports-{name}", "--record", f"recordings-{name}",
               *suite_passes.certify_tags(suite_passes.IN_FLIGHT_TAGS), *flags]  # fmt: skip
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=900, check=False)


def verdicts(junit: Path) -> dict[str, str]:
    outcome = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        said = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcome[case.get("name", "")] = said[0] if said else "passed"
    return outcome


def orders_in_flight(recordings: Path) -> tuple[int, int]:
    """(the most orders in flight at once, the most scenarios at once) over every HAR of a run.  An order is in flight
    while the gateway owes it a decision: from a request it acknowledged (``async-*response``) to the end of the first
    status answer after it that is not ``processing``; a scenario from its first request to its last answer."""
    in_flight: list[tuple[float, float]] = []
    scenarios = []
    for har in recordings.glob("*.har"):
        spans, owed = [], {}
        entries = json.loads(har.read_text())["log"]["entries"]
        for entry in sorted(entries, key=lambda e: e["startedDateTime"]):
            start = datetime.fromisoformat(entry["startedDateTime"]).timestamp()
            end = start + float(entry["time"]) / 1000
            spans.append((start, end))
            orderid, answer = _orderid(entry), _answer(entry)
            if not orderid:
                continue
            if answer.get("type") in ("async-response", "async-form-response"):
                owed.setdefault(orderid, start)
            elif answer.get("type") == "status-response" and answer.get("status") != "processing" and orderid in owed:
                in_flight.append((owed.pop(orderid), end))
        in_flight += [(since, max(e for _, e in spans)) for since in owed.values()]
        if spans:
            scenarios.append((min(s for s, _ in spans), max(e for _, e in spans)))
    return _most_at_once(in_flight), _most_at_once(scenarios)


def _answer(entry: dict) -> dict:
    try:
        answer = json.loads(entry["response"].get("content", {}).get("text", ""))
    except ValueError:
        return {}
    return answer if isinstance(answer, dict) else {}


def _orderid(entry: dict) -> str:
    params = {p["name"]: p.get("value", "") for p in entry["request"].get("postData", {}).get("params", [])}
    params |= {p["name"]: p.get("value", "") for p in entry["request"].get("queryString", [])}
    return str(params.get("orderid") or _answer(entry).get("paynet-order-id") or "")


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])  # (an end before a start)
    most = current = 0
    for _, step in events:
        current += step
        most = max(most, current)
    return most


def test_side_by_side_gives_the_serial_verdicts_and_recordings_within_the_setting(tmp_path, standin):
    port = free_port()
    folder = project(tmp_path, standin, port)

    serial = certify(folder, "serial", port, "--in-flight", "1")
    side_by_side = certify(folder, "parallel", port)

    assert serial.returncode == 0, serial.stdout[-3000:] + serial.stderr[-2000:]
    assert side_by_side.returncode == 0, side_by_side.stdout[-3000:] + side_by_side.stderr[-2000:]
    assert "starting the first scenario" in serial.stdout
    assert f"starting {IN_FLIGHT} workers" in side_by_side.stdout, side_by_side.stdout[:500]
    one_by_one, together = (
        verdicts(folder / "reports-serial" / "junit.xml"),
        verdicts(folder / "reports-parallel" / "junit.xml"),
    )
    assert together == one_by_one
    assert list(together.values()).count("passed") >= (40 if suite_passes.FULL else 6), together
    ran_callbacks = "The callback is delivered, signed and matches the status"
    assert together[ran_callbacks] == "passed", "a callback must reach its worker through the forwarded port"

    files = {path.name for path in (folder / "recordings-serial").iterdir()}
    assert "index.json" in files and files == {path.name for path in (folder / "recordings-parallel").iterdir()}
    indexed = {
        name: {(s["name"], s["outcome"]) for s in read_index(folder / f"recordings-{name}")["scenarios"]}
        for name in ("serial", "parallel")
    }
    assert indexed["serial"] == indexed["parallel"]

    orders, scenarios = orders_in_flight(folder / "recordings-parallel")
    assert 2 <= orders <= IN_FLIGHT and scenarios <= IN_FLIGHT, (orders, scenarios)
    assert orders_in_flight(folder / "recordings-serial") == (1, 1)

    durations = json.loads((folder / "reports-parallel" / "durations.json").read_text())["standin"]
    assert len(durations) == list(together.values()).count("passed") and all(took > 0 for took in durations.values())
