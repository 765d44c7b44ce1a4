"""``gatekit trigger``: one-line commands against a running simulator's control API (issue 38, #5), in-process
against a simulator on a loopback port; the README's section runs them as the installed script."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolkit import cli, demo
from toolkit.callbacks import CallbackReceiver
from toolkit.client import GatewayClient
from toolkit.masking import Secret
from toolkit.simulator import SimulatorServer, default_settings
from toolkit.testdata import sale_fields

pytestmark = pytest.mark.usefixtures("clean_env")
TOKEN = "trigger-token-for-tests-7c1d"


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorServer]:
    with SimulatorServer() as running:
        yield running


@pytest.fixture(scope="module")
def receiver() -> Iterator[CallbackReceiver]:
    with CallbackReceiver(demo.CONTROL_KEY) as running:
        yield running


@pytest.fixture
def gateway(simulator: SimulatorServer) -> Iterator[GatewayClient]:
    with simulator.control() as control:
        control.reset()
    with GatewayClient(simulator.client_config()) as client:
        yield client


def trigger(capsys, simulator: SimulatorServer | None, *argv: str) -> tuple[int, str, str]:
    """``gatekit trigger ARGV --url <the simulator>``: exit status, stdout, stderr."""
    code = cli.main(["trigger", *argv, *(["--url", simulator.root_url] if simulator else [])])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(capsys, simulator: SimulatorServer, *argv: str) -> str:
    code, out, err = trigger(capsys, simulator, *argv)
    assert (code, err) == (0, ""), err
    assert out.count("\n") == 1, out
    return out.strip()


def closed_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# --- each action, one human line ------------------------------------------------------------------------


def test_force_status_resend_and_chargeback(capsys, simulator, gateway, receiver) -> None:
    ack = gateway.sale(sale_fields(cvv2="217", server_callback_url=receiver.callback_url))  # stays unknown
    orderid = ack.orderid

    line = one_line(capsys, simulator, "force-status", orderid, "approved")
    assert line == f"order {orderid}: sale {orderid} is now approved (its callback is on its way)"
    receiver.wait_for_callback(orderid=orderid, status="approved")

    line = one_line(capsys, simulator, "resend-callback", orderid)
    assert line == f"order {orderid}: 1 callback queued again, to {receiver.callback_url}"
    receiver.wait_for_callback(orderid=orderid, status="approved", count=2)

    line = one_line(capsys, simulator, "chargeback", orderid, "--amount", "2.50")
    assert line.startswith(f"order {orderid}: chargeback ") and line.endswith(" approved, 2.50 EUR taken back")

    line = one_line(capsys, simulator, "force-status", orderid, "declined", "--error-code", "116",
                    "--error-message", "Insufficient funds")  # fmt: skip
    assert line.endswith(" is now declined: 116 Insufficient funds")


def test_faults_clock_and_settlement(capsys, simulator, gateway) -> None:
    assert one_line(capsys, simulator, "fault", "sale", "error", "--count", "2") == (
        "fault plan 1: the next 2 sale calls answer an error (HTTP 500)"
    )
    assert one_line(capsys, simulator, "fault", "*", "delay", "--seconds", "1.5") == (
        "fault plan 2: the next call of any operation is answered 1.5 s late"
    )
    assert one_line(capsys, simulator, "fail-callbacks", "--count", "3") == (
        "fault plan 3: the next 3 callback attempts fail (not sent; each is tried again on the simulator's clock)"
    )
    assert one_line(capsys, simulator, "clear-faults") == "3 fault plans cleared"
    assert one_line(capsys, simulator, "advance", "1d").startswith("clock advanced 1d (86400 s): now ")
    gateway.sale(sale_fields())
    assert one_line(capsys, simulator, "settle") == "1 transaction settled"
    assert one_line(capsys, simulator, "settle") == "0 transactions settled (none was due)"


def test_json_prints_the_answer_for_scripts(capsys, simulator, gateway) -> None:
    code, out, err = trigger(capsys, simulator, "advance", "90s", "--json")
    assert (code, err) == (0, "")
    answer = json.loads(out)
    assert answer["advanced"] == 90 and answer["offset"] == 90


# --- clear errors ----------------------------------------------------------------------------------------


def test_a_refused_value_names_the_argument_and_the_valid_values(capsys, simulator, gateway) -> None:
    ack = gateway.sale(sale_fields())
    code, out, err = trigger(capsys, simulator, "force-status", ack.orderid, "approve")
    assert code == 2 and out == ""
    assert err.strip() == (
        "gatekit trigger: STATUS: must be one of approved|declined|filtered|error|unknown, not 'approve' "
        "(did you mean 'approved'?)"
    )


def test_every_refused_argument_is_named_at_once(capsys, simulator, gateway) -> None:
    code, _, err = trigger(capsys, simulator, "fault", "sael", "eror", "--count", "0")
    assert code == 2
    lines = err.splitlines()
    assert lines[0] == f"gatekit trigger: {simulator.root_url} refused 3 arguments of POST /_sim/faults:"
    assert [line.split(":")[0].strip() for line in lines[1:]] == ["TARGET", "KIND", "--count"]
    assert "did you mean 'sale'?" in lines[1] and "error|delay|drop|fail|duplicate" in lines[2]
    assert lines[3] == "  --count: must be from 1 to 10000, not 0"


def test_an_unknown_order_is_the_simulators_no(capsys, simulator, gateway) -> None:
    code, _, err = trigger(capsys, simulator, "chargeback", "1")
    assert code == 3 and err.strip() == "gatekit trigger: ORDERID: 1 is unknown (HTTP 404)"


def test_an_unreachable_simulator_is_named_with_its_url(capsys) -> None:
    url = closed_url()
    code = cli.main(["trigger", "settle", "--url", url])
    _, err = capsys.readouterr()
    assert code == 4
    assert err.strip() == (
        f"gatekit trigger: no simulator answers at {url} (connection refused); start one (gatekit simulate), "
        "or give --url or --profile"
    )


def test_a_duration_that_is_none_says_what_is_one(capsys) -> None:
    code, _, err = trigger(capsys, None, "advance", "soon")
    assert code == 2
    assert "argument DURATION: 'soon' is not a duration: seconds (90), or with a unit (90s, 15m, 2h, 1d)" in err


# --- where the simulator is, and its token --------------------------------------------------------------


def test_the_url_comes_from_the_profile_or_the_environment(capsys, simulator, gateway, monkeypatch) -> None:
    monkeypatch.setenv("GATEWAY_BASE_URL", f"{simulator.root_url}/paynet")
    code, out, _ = trigger(capsys, None, "settle")
    assert (code, out.strip()) == (0, "0 transactions settled (none was due)")
    monkeypatch.delenv("GATEWAY_BASE_URL")
    Path("gatekit.toml").write_text(f'[profiles.team]\nbase = "simulator"\nbase_url = "{simulator.root_url}/paynet"\n')
    code, out, _ = trigger(capsys, None, "clear-faults", "--profile", "team")
    assert (code, out.strip()) == (0, "0 fault plans cleared")


def test_a_profile_that_is_no_simulator_is_refused_in_one_line(capsys, monkeypatch) -> None:
    monkeypatch.setenv("GATEWAY_BASE_URL", "https://sandbox.gateway.example/paynet")
    monkeypatch.setenv("GATEWAY_LOGIN", "acme")
    monkeypatch.setenv("GATEWAY_CONTROL_KEY", "key")
    monkeypatch.setenv("GATEWAY_ENDPOINT_ID", "1")
    code, _, err = trigger(capsys, None, "settle", "--profile", "sandbox")
    assert code == 2
    assert err.strip() == (
        "gatekit trigger: profile sandbox (https://sandbox.gateway.example/paynet) is not a gatekit simulator: "
        "only a simulator has a control API; give --url of one"
    )


def test_the_control_token_comes_from_the_environment_or_the_flag(capsys, monkeypatch) -> None:
    with SimulatorServer(default_settings(control_token=Secret(TOKEN))) as guarded:
        code, _, err = trigger(capsys, guarded, "settle")
        assert code == 3
        assert err.strip() == (
            "gatekit trigger: authorization: the control API needs Authorization: Bearer <control token> (HTTP 401); "
            "set GATEKIT_CONTROL_TOKEN or give --control-token"
        )
        assert trigger(capsys, guarded, "settle", "--control-token", TOKEN)[0] == 0
        monkeypatch.setenv("GATEKIT_CONTROL_TOKEN", TOKEN)
        assert trigger(capsys, guarded, "settle")[0] == 0
