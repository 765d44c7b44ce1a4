"""Forcing statuses through the control API never breaks an order's money (issue 34, #1).

Before: the control API looked the order's latest transaction up before the store's write lock, so a force could
land on a transaction the order had gone on from; the rule "a final transaction the order went on from keeps its
status" ignored later transactions that were declined (forced approved later); and a change from declined to
approved was never checked against the ledger. Seen: preauth 100.00, 20.00 charged back against 0.00 charged.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from tests.simulator.rules.test_ledger import HOUR, all_at_once, assert_true
from toolkit.client import GatewayClient
from toolkit.errors import ValidationError
from toolkit.models import AsyncResponse
from toolkit.simcontrol import SimulatorControl, SimulatorControlError
from toolkit.simulator import SimulatorServer
from toolkit.simulator.rules.engine import Engine
from toolkit.simulator.rules.errors import SimError
from toolkit.simulator.rules.followups import money_problem
from toolkit.simulator.settings import default_settings
from toolkit.testdata import preauth_fields, sale_fields

pytestmark = pytest.mark.simulator


@pytest.fixture(scope="module")
def slow() -> Iterator[SimulatorServer]:
    with SimulatorServer(default_settings(latency=HOUR)) as running:
        yield running


@pytest.fixture
def gateway(slow: SimulatorServer) -> Iterator[tuple[GatewayClient, SimulatorControl, Engine]]:
    with GatewayClient(slow.client_config()) as client, slow.control() as control:
        yield client, control, slow.state.engine


def ids(order: AsyncResponse) -> dict[str, str]:
    return {"client_orderid": order.client_orderid, "orderid": order.orderid}


def latest(control: SimulatorControl, order: AsyncResponse) -> dict[str, Any]:
    return control.transaction(order.orderid)


def approved_preauth_with_capture(client: GatewayClient, control: SimulatorControl) -> AsyncResponse:
    order = client.preauth(preauth_fields(amount=Decimal("100.00")))
    control.force_status(order.orderid, "approved")
    client.capture(ids(order))
    control.force_status(order.orderid, "approved")
    return order


def test_a_transaction_the_order_went_on_from_keeps_its_status_even_when_what_followed_was_declined(
    gateway: tuple[GatewayClient, SimulatorControl, Engine],
) -> None:
    """The issue's order: the capture forced declined behind a declined chargeback, the chargeback then forced
    approved. The stale transaction id is what the control API used to force when a request came in between."""
    client, control, engine = gateway
    order = approved_preauth_with_capture(client, control)
    capture_id = latest(control, order)["id"]
    control.chargeback(order, Decimal("20.00"))
    control.force_status(order.orderid, "declined")  # the chargeback, the order's latest: allowed
    with pytest.raises(SimError, match=r"the capture of orderid \d+ is approved and the order went on from it "
                                       r"\(a chargeback, declined\)"):  # fmt: skip
        engine.force_status(capture_id, "declined")
    control.force_status(order.orderid, "approved")  # the chargeback again: the capture still charges 100.00
    assert_true(control, order.orderid, ["capture approved", "chargeback 20.00 approved"])


def test_the_control_api_forces_the_latest_transaction_found_under_the_lock(
    gateway: tuple[GatewayClient, SimulatorControl, Engine],
) -> None:
    client, control, _ = gateway
    order = approved_preauth_with_capture(client, control)
    control.chargeback(order, Decimal("20.00"))
    forced = control.force_status(order.orderid, "declined")
    assert (forced["kind"], forced["status"]) == ("chargeback", "declined")
    capture = next(tx for tx in control.order(order.orderid)["transactions"] if tx["kind"] == "capture")
    assert capture["status"] == "approved"


def test_a_forced_change_that_would_break_the_money_is_refused_with_409(
    gateway: tuple[GatewayClient, SimulatorControl, Engine],
) -> None:
    """Sale 100.00; a return of 100.00 approved and one of 100.00 declined (the rows an older simulator could
    leave: the first return made approved behind the second's back). Forcing the second approved would return
    200.00 of 100.00: 409, and nothing changes."""
    client, control, engine = gateway
    order = client.sale(sale_fields(amount=Decimal("100.00")))
    control.force_status(order.orderid, "approved")
    client.return_(ids(order))
    first = control.force_status(order.orderid, "declined")
    client.return_(ids(order))
    control.force_status(order.orderid, "declined")
    engine.update(engine.tx(first["id"]), status="approved")
    with pytest.raises(SimulatorControlError, match=r"status: the reversal of orderid \d+ cannot become approved: "
                                                    r"the order would have 200\.00 EUR returned or charged back on "
                                                    r"100\.00 EUR charged") as refused:  # fmt: skip
        control.force_status(order.orderid, "approved")
    assert refused.value.http_status == 409
    assert latest(control, order)["status"] == "declined"


@pytest.mark.parametrize(
    ("kind", "break_it", "problem"),
    [
        ("sale", "sale declined", "20.00 EUR returned or charged back on 0.00 EUR charged"),
        ("preauth", "preauth declined", "100.00 EUR captured on 0.00 EUR authorized"),
        ("preauth", "capture declined", "20.00 EUR returned or charged back on 0.00 EUR charged"),
    ],
    ids=["sale-declined-under-a-chargeback", "preauth-declined-under-a-capture", "capture-declined-under-a-chargeback"],
)
def test_money_problem_names_what_is_broken(
    gateway: tuple[GatewayClient, SimulatorControl, Engine], kind: str, break_it: str, problem: str
) -> None:
    client, control, engine = gateway
    if kind == "sale":
        order = client.sale(sale_fields(amount=Decimal("100.00")))
        control.force_status(order.orderid, "approved")
    else:
        order = approved_preauth_with_capture(client, control)
    control.chargeback(order, Decimal("20.00"))
    root = engine.tx(int(order.orderid))
    assert money_problem(engine, root) is None
    target = next(tx for tx in engine.transactions_of(root) if tx["kind"] == break_it.split()[0])
    engine.update(target, status="declined")  # behind the rules' back
    assert money_problem(engine, engine.tx(int(order.orderid))) == problem


STEPS = ("approved", "declined", "chargeback", "capture", "void", "return") * 4
ROUNDS = int(os.environ.get("GATEKIT_FORCE_ROUNDS", "4"))  # (make test-reliability: 40)


def test_concurrent_forcing_chargebacks_and_follow_ups_keep_every_ledger_true(slow: SimulatorServer) -> None:
    """Forces of whatever is latest (final or not), chargebacks, captures, voids and returns from 24 threads at
    once on each of six orders, ``ROUNDS`` rounds; every ledger checked after each round."""
    with GatewayClient(slow.client_config()) as client, slow.control() as control:
        orders = []
        for _ in range(6):
            order = client.preauth(preauth_fields(amount=Decimal("100.00")))
            control.force_status(order.orderid, "approved")
            orders.append(order)
        for round_ in range(ROUNDS):
            for order in orders:
                all_at_once(slow, order, list(STEPS), one_step)
                assert_true(control, order.orderid, [f"round {round_}"])


def one_step(client: GatewayClient, control: SimulatorControl, order: AsyncResponse, step: str) -> None:
    """A force, a chargeback or a follow-up; a refusal is the state's (409) or the gateway's, never a failure."""
    try:
        if step in ("approved", "declined"):
            control.force_status(order.orderid, step)
        elif step == "chargeback":
            control.chargeback(order, Decimal("20.00"))
        elif step == "capture":
            client.capture(ids(order), amount=Decimal("40.00"), currency="EUR")
        elif step == "void":
            client.void(ids(order), comment="test")
        else:
            client.return_(ids(order), amount=Decimal("30.00"), currency="EUR")
    except SimulatorControlError as refused:  # the state refuses it: never a 500 or no answer
        assert refused.http_status == 409, refused
    except ValidationError:  # the gateway's refusals
        pass
