"""The control API ``/_sim/`` over real loopback HTTP: faults, reset, clock, settlement, forced statuses."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import requests

from toolkit import demo
from toolkit.callbacks import CallbackReceiver
from toolkit.client import GatewayClient
from toolkit.errors import ServerError, TransportError, ValidationError
from toolkit.models import AsyncResponse
from toolkit.simcontrol import SimulatorControl, SimulatorControlError
from toolkit.simulator import SimulatorServer, default_settings
from toolkit.testdata import preauth_fields, sale_fields

SETTLEMENT_AFTER = 3600.0


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatorServer]:
    """This module's simulator (``client``, ``control`` and ``receiver`` of conftest.py use it)."""
    with SimulatorServer(default_settings(settlement_after=SETTLEMENT_AFTER)) as running:
        yield running


def sale(client: GatewayClient, cvv2: str = "123", **extra: Any) -> AsyncResponse:
    """A 10.42 EUR sale on the example card 4538977399606732; the CVV2 chooses the outcome."""
    return client.sale(sale_fields(cvv2=cvv2, **extra))


def raw(server: SimulatorServer, method: str, path: str, **kwargs: Any) -> requests.Response:
    return requests.request(method, f"{server.root_url}/_sim/{path}", timeout=10, **kwargs)


# --- operation faults ----------------------------------------------------------------------------


def test_error_fault_answers_500_for_the_next_n_calls(client: GatewayClient, control: SimulatorControl) -> None:
    control.add_fault("sale", "error", count=2)
    for _ in range(2):
        with pytest.raises(ServerError, match="injected fault") as caught:
            sale(client)
        assert caught.value.http_status == 500
    assert sale(client).orderid
    assert control.faults() == []


def test_delay_fault_holds_the_answer(client: GatewayClient, control: SimulatorControl) -> None:
    control.add_fault("sale", "delay", seconds=0.3)
    started = time.monotonic()
    ack = sale(client)
    assert time.monotonic() - started >= 0.3
    assert client.status(client_orderid=ack.client_orderid, orderid=ack.orderid).status.value == "approved"


def test_drop_fault_is_a_transport_error(client: GatewayClient, control: SimulatorControl) -> None:
    control.add_fault("sale", "drop")
    with pytest.raises(TransportError):
        sale(client)
    assert sale(client).orderid
    dropped = control.journal(login=demo.LOGIN)[0]
    assert dropped["http_status"] == 500
    assert "injected fault: drop" in dropped["error"]


def test_any_operation_fault_hits_other_operations(client: GatewayClient, control: SimulatorControl) -> None:
    ack = sale(client)
    control.add_fault("*", "error")
    with pytest.raises(ServerError):
        client.status(client_orderid=ack.client_orderid, orderid=ack.orderid)


def test_fault_waits_for_its_own_operation(client: GatewayClient, control: SimulatorControl) -> None:
    plan = control.add_fault("preauth", "error", count=3)
    sale(client)
    assert control.faults() == [plan]
    with pytest.raises(ServerError):
        client.preauth(preauth_fields())
    assert control.faults()[0]["remaining"] == 2
    assert control.clear_faults() == 1
    assert control.faults() == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"target": "nosuch", "kind": "error"}, "target"),
        ({"target": "sale", "kind": "duplicate"}, "kind"),
        ({"target": "callback", "kind": "drop"}, "kind"),
        ({"target": "sale", "kind": "error", "count": 0}, "count"),
        ({"target": "sale", "kind": "delay"}, "seconds"),
        ({"target": "sale", "kind": "error", "seconds": 2}, "seconds"),
        ({"kind": "error"}, "target"),
    ],
    ids=[
        "unknown-target",
        "callback-kind-on-operation",
        "operation-kind-on-callback",
        "zero-count",
        "delay-0",
        "seconds-on-error",
        "no-target",
    ],
)
def test_bad_fault_names_the_field(
    server: SimulatorServer, control: SimulatorControl, body: dict[str, Any], field: str
) -> None:
    answer = raw(server, "POST", "faults", json=body)
    assert answer.status_code == 400
    assert answer.json()["field"] == field
    assert answer.json()["error"].startswith(f"{field}: ")


# --- reset, inspection ---------------------------------------------------------------------------


def test_reset_forgets_everything(client: GatewayClient, control: SimulatorControl) -> None:
    ack = sale(client)
    client.payout(
        client_orderid=f"po-{uuid.uuid4().hex[:10]}",
        amount=Decimal("100.00"),
        currency="EUR",
        credit_card_number="4538977399606732",
    )
    assert control.merchants()[0]["payout_balance"] == "9900.00"
    control.add_fault("void", "error")
    control.advance_clock(60)

    control.reset()

    with pytest.raises(SimulatorControlError, match="unknown") as caught:
        control.transaction(ack.orderid)
    assert caught.value.http_status == 404
    assert control.journal() == []
    assert control.faults() == []
    assert control.callbacks() == []
    assert control.clock()["offset"] == 0
    assert control.merchants()[0]["payout_balance"] == demo.PAYOUT_BALANCE
    assert control.health()["transactions"] == 0


def test_transaction_view_is_masked(client: GatewayClient, control: SimulatorControl) -> None:
    ack = sale(client)
    tx = control.transaction(ack.orderid)
    assert tx["orderid"] == ack.orderid
    assert tx["status"] == "approved"
    assert tx["amount"] == "10.42"
    assert (tx["card_bin"], tx["card_last4"]) == ("453897", "6732")
    assert "4538977399606732" not in str(tx)


def test_journal_has_masked_entries_with_warnings(
    server: SimulatorServer, client: GatewayClient, control: SimulatorControl
) -> None:
    sale(client)
    requests.post(f"{server.base_url}/api/v2/sale/{demo.ENDPOINT_ID}", data={"client_orderid": "x"}, timeout=10)
    entries = control.journal(login=demo.LOGIN)
    assert [e["operation"] for e in entries] == ["sale", "sale"]
    assert entries[0]["fields"]["credit_card_number"] == "453897******6732"
    assert entries[0]["fields"]["cvv2"] == "***"
    assert any("Accept" in warning for warning in entries[1]["warnings"])
    assert control.journal(limit=1) == entries[-1:]


def test_merchants_never_show_control_keys(server: SimulatorServer, control: SimulatorControl) -> None:
    answer = raw(server, "GET", "merchants")
    (merchant,) = answer.json()["merchants"]
    assert merchant["login"] == demo.LOGIN
    assert merchant["endpoint_ids"] == [demo.ENDPOINT_ID]
    assert demo.CONTROL_KEY not in answer.text


def test_health(control: SimulatorControl) -> None:
    assert control.health()["status"] == "ok"


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status", "field"),
    [
        ("POST", "clock/advance", {"json": {"seconds": -1}}, 400, "seconds"),
        ("POST", "clock/advance", {"json": {"seconds": "soon"}}, 400, "seconds"),
        ("POST", "clock/advance", {"json": {}}, 400, "seconds"),
        ("POST", "clock/advance", {"data": "{not json"}, 400, "body"),
        ("POST", "clock/advance", {"json": [1]}, 400, "body"),
        ("GET", "journal", {"params": {"limit": "0"}}, 400, "limit"),
        ("GET", "transactions/abc", {}, 400, "orderid"),
        ("GET", "transactions/1", {}, 404, "orderid"),
        ("POST", "settle", {"json": {"orderid": "x"}}, 400, "orderid"),
        ("GET", "callbacks", {"params": {"attempts": "1"}}, 400, "orderid"),
        ("GET", "callbacks", {"params": {"orderid": "1", "attempts": "x"}}, 400, "attempts"),
    ],
    ids=[
        "negative-seconds",
        "text-seconds",
        "no-seconds",
        "bad-json",
        "not-an-object",
        "zero-limit",
        "orderid-not-digits",
        "unknown-orderid",
        "settle-bad-orderid",
        "wait-without-orderid",
        "wait-bad-attempts",
    ],
)
def test_bad_input_names_the_field(
    server: SimulatorServer,
    control: SimulatorControl,
    method: str,
    path: str,
    kwargs: dict[str, Any],
    status: int,
    field: str,
) -> None:
    answer = raw(server, method, path, **kwargs)
    assert answer.status_code == status
    assert answer.json()["field"] == field


# --- statuses, settlement, the clock -------------------------------------------------------------


def test_forced_final_status_sends_the_callback(
    client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver
) -> None:
    ack = sale(client, cvv2="217", server_callback_url=receiver.callback_url)
    assert control.transaction(ack.orderid)["status"] == "unknown"
    assert control.callbacks(ack.orderid) == []

    forced = control.force_status(ack.orderid, "declined", "116", "insufficient funds (forced)")

    arrived = receiver.wait_for_callback(orderid=ack.orderid)
    assert forced["status"] == "declined"
    assert arrived.control_ok
    assert (arrived.params["status"], arrived.params["error_code"]) == ("declined", "116")
    assert client.status(client_orderid=ack.client_orderid, orderid=ack.orderid).status.value == "declined"


def test_force_status_refuses_a_status_outside_the_list(
    server: SimulatorServer, client: GatewayClient, control: SimulatorControl
) -> None:
    ack = sale(client)
    answer = raw(server, "POST", f"transactions/{ack.orderid}/status", json={"status": "processing"})
    assert answer.status_code == 400
    assert answer.json()["field"] == "status"


def test_settled_sale_cannot_be_voided(client: GatewayClient, control: SimulatorControl) -> None:
    ack = sale(client)
    assert control.settle(ack.orderid) == 1
    with pytest.raises(ValidationError, match="already settled"):
        client.void(client_orderid=ack.client_orderid, orderid=ack.orderid, comment="too late")


def test_advancing_past_the_cut_off_settles(client: GatewayClient, control: SimulatorControl) -> None:
    ack = sale(client)
    assert control.transaction(ack.orderid)["settled"] == 0
    clock = control.advance_clock(SETTLEMENT_AFTER)
    assert clock["offset"] == SETTLEMENT_AFTER
    assert control.transaction(ack.orderid)["settled"] == 1


def test_advancing_the_clock_charges_a_recurring_payment(
    client: GatewayClient, control: SimulatorControl, receiver: CallbackReceiver
) -> None:
    ack = sale(client)
    card = client.create_card_ref(client_orderid=ack.client_orderid, orderid=ack.orderid)
    now = control.clock()["now"]
    tomorrow = dt.datetime.fromtimestamp(now, dt.UTC).date() + dt.timedelta(days=1)
    first_charge = dt.datetime(tomorrow.year, tomorrow.month, tomorrow.day, tzinfo=dt.UTC).timestamp()
    subscription = client.create_recurring_payment(
        client_orderid=f"rp-{uuid.uuid4().hex[:10]}",
        cardrefid=card.card_ref_id,
        amount=Decimal("5.00"),
        currency="EUR",
        period="month",
        interval=1,
        start_date=tomorrow.isoformat(),
        server_callback_url=receiver.callback_url,
    )
    assert receiver.callbacks() == []

    control.advance_clock(first_charge - now + 1)

    charge = receiver.wait_for_callback(client_orderid=f"{subscription.client_orderid}-1")
    assert (charge.params["type"], charge.params["status"]) == ("recurring-charge", "approved")
    assert charge.params["amount"] == "5.00"
    assert charge.control_ok
