"""SimulatorControl, the client of ``/_sim/``: requests on a recording server, round trips on a real simulator."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
import requests

import toolkit
from tests.recording_server import RecordingServer, Reply
from toolkit import demo
from toolkit.simcontrol import SimulatorControl, SimulatorControlError
from toolkit.simulator import SimulatorServer

# One answer that satisfies every method (each reads its own key).
ANSWER = {"merchants": [], "entries": [], "callbacks": [], "settled": 1, "cleared": 0, "faults": [], "timed_out": False,
          "resent": [], "routes": []}  # fmt: skip


@pytest.fixture
def recorder() -> Iterator[RecordingServer]:
    """A recording server at the root URL; ``server`` (the simulator) and ``control`` come from conftest.py."""
    with RecordingServer(prefix="") as running:
        yield running


def _root(server: RecordingServer) -> str:
    return server.base_url  # prefix "": the root URL


CALLS: list[tuple[str, Callable[[SimulatorControl], Any], str, str, dict[str, Any] | None]] = [
    ("reset", lambda c: c.reset(), "POST", "/_sim/reset", None),
    ("health", lambda c: c.health(), "GET", "/_sim/health", None),
    ("merchants", lambda c: c.merchants(), "GET", "/_sim/merchants", None),
    ("journal", lambda c: c.journal(login="acme", limit=5), "GET", "/_sim/journal?login=acme&limit=5", None),
    ("transaction", lambda c: c.transaction("8056020"), "GET", "/_sim/transactions/8056020", None),
    (
        "force_status",
        lambda c: c.force_status(8056020, "declined", "116", "no funds"),
        "POST",
        "/_sim/transactions/8056020/status",
        {"status": "declined", "error_code": "116", "error_message": "no funds"},
    ),
    ("settle-all", lambda c: c.settle(), "POST", "/_sim/settle", {}),
    ("settle-one", lambda c: c.settle(8056020), "POST", "/_sim/settle", {"orderid": "8056020"}),
    ("clock", lambda c: c.clock(), "GET", "/_sim/clock", None),
    ("advance_clock", lambda c: c.advance_clock(90), "POST", "/_sim/clock/advance", {"seconds": 90.0}),
    ("callbacks", lambda c: c.callbacks("8056020"), "GET", "/_sim/callbacks?orderid=8056020", None),
    (
        "wait_for_callbacks",
        lambda c: c.wait_for_callbacks("8056020", attempts=3, timeout=2),
        "GET",
        "/_sim/callbacks?orderid=8056020&attempts=3&timeout=2",
        None,
    ),
    (
        "add_fault",
        lambda c: c.add_fault("sale", "delay", count=2, seconds=1.5),
        "POST",
        "/_sim/faults",
        {"target": "sale", "kind": "delay", "count": 2, "seconds": 1.5},
    ),
    ("faults", lambda c: c.faults(), "GET", "/_sim/faults", None),
    ("resend_callbacks", lambda c: c.resend_callbacks("8056020"), "POST", "/_sim/callbacks/8056020/resend", None),
    ("routes", lambda c: c.routes(), "GET", "/_sim/", None),
]


@pytest.mark.parametrize(("call", "method", "target", "body"), [c[1:] for c in CALLS], ids=[c[0] for c in CALLS])
def test_each_method_sends_its_request(
    recorder: RecordingServer,
    call: Callable[[SimulatorControl], Any],
    method: str,
    target: str,
    body: dict[str, Any] | None,
) -> None:
    recorder.reply(ANSWER)
    with SimulatorControl(_root(recorder)) as control:
        call(control)
    sent = recorder.last
    path, _, query = target.partition("?")
    assert (sent.method, urlsplit(sent.path).path) == (method, path)
    assert dict(parse_qsl(urlsplit(sent.path).query)) == dict(parse_qsl(query))
    assert (json.loads(sent.body) if sent.body else None) == body


def test_wait_for_callbacks_raises_when_the_simulator_timed_out(recorder: RecordingServer) -> None:
    recorder.reply({"callbacks": [{"attempts": [{"http_status": 500}]}], "timed_out": True})
    with SimulatorControl(_root(recorder)) as control, pytest.raises(TimeoutError, match="1 callback attempt"):
        control.wait_for_callbacks("8056020", attempts=2, timeout=1)


def test_an_answer_that_is_not_json_is_refused(recorder: RecordingServer) -> None:
    recorder.reply(Reply("<html>not found</html>", 404, "text/html"))
    with SimulatorControl(_root(recorder)) as control, pytest.raises(SimulatorControlError) as caught:
        control.health()
    assert caught.value.http_status == 404
    assert "is this a gatekit simulator" in str(caught.value)


def test_no_answer_is_a_control_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        root = f"http://127.0.0.1:{probe.getsockname()[1]}"
    with (
        SimulatorControl(root, timeout=2) as control,
        pytest.raises(SimulatorControlError, match="no answer") as caught,
    ):
        control.health()
    assert isinstance(caught.value.__cause__, requests.ConnectionError)


def test_a_silent_simulator_is_a_control_error_naming_the_timeout() -> None:
    with (
        socket.create_server(("127.0.0.1", 0)) as silent,  # accepts connections, never answers
        SimulatorControl(f"http://127.0.0.1:{silent.getsockname()[1]}", timeout=0.2) as control,
        pytest.raises(SimulatorControlError, match=r"/_sim/health: no answer within 0\.2s \(ReadTimeout\)$"),
    ):
        control.health()


def test_the_given_session_is_used(recorder: RecordingServer) -> None:
    recorder.reply(ANSWER)
    seen: list[int] = []
    with requests.Session() as session:
        session.hooks["response"].append(lambda answer, *args, **kwargs: seen.append(answer.status_code))
        SimulatorControl(_root(recorder) + "/", session=session).health()
    assert seen == [200]
    assert recorder.last.path == "/_sim/health"


def test_refusals_carry_the_field(control: SimulatorControl) -> None:
    with pytest.raises(SimulatorControlError, match="seconds") as caught:
        control.advance_clock(-5)
    assert (caught.value.http_status, caught.value.field) == (400, "seconds")


def test_unknown_orderid_is_404(control: SimulatorControl) -> None:
    with pytest.raises(SimulatorControlError) as caught:
        control.transaction(1)
    assert (caught.value.http_status, caught.value.field) == (404, "orderid")


def test_round_trip_on_a_simulator(server: SimulatorServer, control: SimulatorControl) -> None:
    assert control.root_url == server.root_url
    assert control.health()["status"] == "ok"
    assert [m["login"] for m in control.merchants()] == [demo.LOGIN]
    before = control.clock()
    after = control.advance_clock(120)
    assert after["offset"] == before["offset"] + 120
    plan = control.add_fault("*", "error", count=2)
    assert control.faults() == [plan]
    assert control.clear_faults() == 1
    assert control.settle() == 0
    assert control.journal() == []
    assert control.reset()["clock"]["offset"] == 0


def test_simulator_control_is_public() -> None:
    assert toolkit.SimulatorControl is SimulatorControl
    assert "SimulatorControl" in toolkit.__all__
