"""Server callbacks of the simulator over real loopback HTTP (behaviour section 4, toolkit/simulator/delivery.py).

Retries follow the simulator's clock: the delays here are minutes, so a retry happens only when
a test advances the clock.  Waiting is on events: the receiver's arrivals, or the control API's
``wait_for_callbacks`` (the simulator answers when the delivery worker has logged the attempt).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolkit import demo
from toolkit.callbacks import CallbackReceiver
from toolkit.client import GatewayClient
from toolkit.models import AsyncResponse
from toolkit.signing import verify_callback_control
from toolkit.simcontrol import SimulatorControl
from toolkit.simulator import SimulatorServer, default_settings
from toolkit.simulator.storage import dumps
from toolkit.simulator.storage.sqlite import SqliteStore
from toolkit.testdata import sale_fields

RETRY = (60.0, 120.0)  # three attempts in all: the first, then one after each delay
TIMEOUT = 0.5


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatorServer]:
    """This module's simulator (``client``, ``control`` and ``receiver`` of conftest.py use it)."""
    with SimulatorServer(default_settings(callback_retry=RETRY, callback_timeout=TIMEOUT)) as running:
        yield running


def sale(client: GatewayClient, callback_url: str | None, cvv2: str = "123") -> AsyncResponse:
    """A 10.42 EUR sale whose CVV2 chooses the outcome; no ``server_callback_url`` when ``callback_url`` is None."""
    return client.sale(sale_fields(cvv2=cvv2, server_callback_url=callback_url))


def closed_port_url() -> str:
    """An address where nothing listens (connection refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/callback"


@pytest.mark.parametrize(("cvv2", "status"), [("123", "approved"), ("116", "declined")], ids=["approved", "declined"])
def test_final_status_sends_exactly_one_verified_get(
    client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver, cvv2: str, status: str
) -> None:
    ack = sale(client, receiver.callback_url, cvv2)
    arrived = receiver.wait_for_callback(orderid=ack.orderid)
    (delivery,) = control.wait_for_callbacks(ack.orderid, attempts=1)
    final = client.status(client_orderid=ack.client_orderid, orderid=ack.orderid)

    assert arrived.method == "GET"
    assert verify_callback_control(arrived.params, demo.CONTROL_KEY)
    assert arrived.params["status"] == final.status.value == status
    assert arrived.params["client_orderid"] == ack.client_orderid
    assert arrived.params["type"] == final.transaction_type == "sale"
    assert arrived.params["amount"] == "10.42"
    assert (arrived.params["error_message"] != "") is (status == "declined")
    assert delivery["state"] == "delivered"
    assert [a["http_status"] for a in delivery["attempts"]] == [200]
    assert len(receiver.callbacks(orderid=ack.orderid)) == 1


def test_wrong_key_does_not_verify(
    client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver
) -> None:
    ack = sale(client, receiver.callback_url)
    arrived = receiver.wait_for_callback(orderid=ack.orderid)
    assert not verify_callback_control(arrived.params, demo.CONTROL_KEY + "x")


def test_no_callback_without_url(client: GatewayClient, control: SimulatorControl) -> None:
    ack = sale(client, None)
    assert client.status(client_orderid=ack.client_orderid, orderid=ack.orderid).status.value == "approved"
    assert control.callbacks(ack.orderid) == []


def test_unknown_is_not_final_and_sends_nothing(client: GatewayClient, control: SimulatorControl) -> None:
    ack = sale(client, "http://127.0.0.1:9/never", cvv2="217")
    assert client.status(client_orderid=ack.client_orderid, orderid=ack.orderid).status.value == "unknown"
    assert control.callbacks(ack.orderid) == []


def test_non_200_is_retried_when_the_clock_reaches_the_retry(
    client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver
) -> None:
    receiver.fail_next(2)
    ack = sale(client, receiver.callback_url)
    (first,) = control.wait_for_callbacks(ack.orderid, attempts=1)
    assert first["state"] == "pending"
    assert first["next_at"] == pytest.approx(first["attempts"][0]["at"] + RETRY[0], abs=1.0)

    control.advance_clock(RETRY[0])
    control.wait_for_callbacks(ack.orderid, attempts=2)
    control.advance_clock(RETRY[1])
    (delivery,) = control.wait_for_callbacks(ack.orderid, attempts=3)

    assert [a["http_status"] for a in delivery["attempts"]] == [500, 500, 200]
    assert delivery["state"] == "delivered"
    assert all(a["elapsed"] >= 0 and a["at"] > 0 for a in delivery["attempts"])
    assert [r.answered for r in receiver.callbacks(orderid=ack.orderid)] == [500, 500, 200]


def test_only_the_process_holding_the_scheduler_lease_claims_a_due_callback(
    server: SimulatorServer, client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver
) -> None:
    """A team simulator's process without the lease (here: ``scheduling`` says so) that moves the clock leaves the
    due retry to the holder: nothing is claimed or sent from it."""
    receiver.fail_next(1)
    ack = sale(client, receiver.callback_url)
    control.wait_for_callbacks(ack.orderid, attempts=1)
    engine = server.app.state.engine
    holder = engine.scheduling
    engine.scheduling = lambda: False
    try:
        control.advance_clock(RETRY[0])
        (waiting,) = control.callbacks(ack.orderid)
        assert (waiting["state"], len(waiting["attempts"])) == ("pending", 1)
    finally:
        engine.scheduling = holder
    control.advance_clock(1)
    (delivery,) = control.wait_for_callbacks(ack.orderid, attempts=2)
    assert [a["http_status"] for a in delivery["attempts"]] == [500, 200]


def test_the_log_of_all_orders_keeps_each_callbacks_own_attempts(
    client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver
) -> None:
    receiver.fail_next(1)
    first = sale(client, receiver.callback_url)
    control.wait_for_callbacks(first.orderid, attempts=1)
    second = sale(client, receiver.callback_url)
    control.wait_for_callbacks(second.orderid, attempts=1)

    log = {d["orderid"]: (d["state"], [a["http_status"] for a in d["attempts"]]) for d in control.callbacks()}
    assert log == {first.orderid: ("pending", [500]), second.orderid: ("delivered", [200])}


def test_exhausted_retries_end_failed(client: GatewayClient, control: SimulatorControl) -> None:
    ack = sale(client, closed_port_url())
    control.wait_for_callbacks(ack.orderid, attempts=1)
    control.advance_clock(RETRY[0])
    control.wait_for_callbacks(ack.orderid, attempts=2)
    control.advance_clock(RETRY[1])
    (delivery,) = control.wait_for_callbacks(ack.orderid, attempts=3)

    assert delivery["state"] == "failed"
    assert delivery["next_at"] is None
    assert all(a["http_status"] is None and "ConnectionError" in a["error"] for a in delivery["attempts"])
    control.advance_clock(3600)  # a due row would be claimed (``sending``) before this answers
    (after,) = control.callbacks(ack.orderid)
    assert (after["state"], len(after["attempts"])) == ("failed", 3)


def test_timeout_counts_as_a_failed_attempt(
    client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver
) -> None:
    receiver.delay_next(1, seconds=30)  # cut short when the receiver stops
    ack = sale(client, receiver.callback_url)
    (delivery,) = control.wait_for_callbacks(ack.orderid, attempts=1)
    attempt = delivery["attempts"][0]
    assert attempt["http_status"] is None
    assert attempt["error"].startswith("timeout")
    assert attempt["elapsed"] == pytest.approx(TIMEOUT, abs=0.4)

    control.advance_clock(RETRY[0])
    (delivery,) = control.wait_for_callbacks(ack.orderid, attempts=2)
    assert delivery["state"] == "delivered"


def test_fail_fault_is_a_failed_attempt_that_is_not_sent(
    client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver
) -> None:
    control.add_fault("callback", "fail")
    ack = sale(client, receiver.callback_url)
    (delivery,) = control.wait_for_callbacks(ack.orderid, attempts=1)
    assert delivery["state"] == "pending"
    assert "injected fault" in delivery["attempts"][0]["error"]
    assert receiver.callbacks(orderid=ack.orderid) == []

    control.advance_clock(RETRY[0])
    (delivery,) = control.wait_for_callbacks(ack.orderid, attempts=2)
    assert delivery["state"] == "delivered"
    assert len(receiver.callbacks(orderid=ack.orderid)) == 1
    assert control.faults() == []


def test_duplicate_fault_delivers_twice(
    client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver
) -> None:
    control.add_fault("callback", "duplicate")
    ack = sale(client, receiver.callback_url)
    second = receiver.wait_for_callback(orderid=ack.orderid, count=2)
    (delivery,) = control.wait_for_callbacks(ack.orderid, attempts=2)

    assert second.duplicate
    assert [a["http_status"] for a in delivery["attempts"]] == [200, 200]
    assert delivery["state"] == "delivered"
    first = receiver.callbacks(orderid=ack.orderid)[0]
    assert first.params == second.params


def test_a_slow_merchant_does_not_hold_up_others() -> None:
    """One callback hangs until its receiver stops; another order's callback still arrives at once."""
    with (
        SimulatorServer(default_settings(callback_timeout=30)) as slow_sim,
        GatewayClient(slow_sim.client_config()) as slow_client,
        slow_sim.control() as control,
        CallbackReceiver(demo.CONTROL_KEY) as fast,
        CallbackReceiver(demo.CONTROL_KEY) as slow,
    ):
        slow.delay_next(1, seconds=30)
        stuck = sale(slow_client, slow.callback_url)
        slow.wait_for_callback(orderid=stuck.orderid)
        ack = sale(slow_client, fast.callback_url)
        fast.wait_for_callback(orderid=ack.orderid)
        assert control.callbacks(stuck.orderid)[0]["state"] == "sending"
        assert control.wait_for_callbacks(ack.orderid)[0]["state"] == "delivered"


def test_a_restart_sends_what_was_in_flight(tmp_path: Path, receiver: CallbackReceiver) -> None:
    """A row left ``sending`` by a stopped simulator (file store) is sent when it starts again."""
    db = tmp_path / "sim.db"
    store = SqliteStore(db)
    params = {"status": "approved", "orderid": "8056020", "client_orderid": "inv-1"}
    store.insert(
        "callbacks",
        {
            "orderid": 8056020,
            "login": demo.LOGIN,
            "url": receiver.callback_url,
            "params": dumps(params),
            "state": "sending",
            "next_at": 0.0,
            "created_at": 0.0,
        },
    )
    store.close()
    with SimulatorServer(db=db) as restarted, restarted.control() as control:
        (delivery,) = control.wait_for_callbacks("8056020")
    assert delivery["state"] == "delivered"
    assert receiver.wait_for_callback(orderid="8056020").params["client_orderid"] == "inv-1"
