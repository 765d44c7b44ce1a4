"""Every order's ledger stays true whatever the order, outcomes and concurrency of its follow-ups (issue 19, #1):
what was charged covers what was returned and charged back, and captures never exceed the preauth.

The simulator runs with a latency of an hour, so that each follow-up stays ``processing`` until the test
decides it (``force_status``: approved or declined) or moves the clock; the invariant is checked the cautious
way after every step (a processing return counts as returned, a processing capture as not yet charged), and
once more when everything is decided.  ``GATEKIT_LEDGER_EXAMPLES`` (default 40) sets the examples per run.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.client import GatewayClient
from toolkit.errors import ValidationError
from toolkit.models import AsyncResponse
from toolkit.simcontrol import SimulatorControl, SimulatorControlError
from toolkit.simulator import SimulatorServer
from toolkit.simulator.settings import default_settings
from toolkit.testdata import preauth_fields, sale_fields

EXAMPLES = int(os.environ.get("GATEKIT_LEDGER_EXAMPLES", "40"))
HOUR = 3600
FAILED = ("declined", "filtered", "error")


@pytest.fixture(scope="module")
def slow() -> Iterator[SimulatorServer]:
    with SimulatorServer(default_settings(latency=HOUR)) as running:
        yield running


@pytest.fixture(scope="module")
def gateway(slow: SimulatorServer) -> Iterator[tuple[GatewayClient, SimulatorControl]]:
    with GatewayClient(slow.client_config()) as client, slow.control() as control:
        yield client, control


@dataclass(frozen=True)
class Ledger:
    """An order's money in minor units, counted from the simulator's own rows."""

    authorized: int  # a preauth's amount (0 for a sale)
    held_max: int  # captured or capturing, unless a void of the capture was approved
    charged_min: int  # charged for sure: the sale, or approved captures with no void approved or asked for
    charged_final: int  # charged once everything is decided as it stands
    back_max: int  # returned or charged back, approved or processing
    back_final: int  # returned or charged back, approved


def ledger(control: SimulatorControl, orderid: str) -> Ledger:
    rows = control.order(orderid)["transactions"]
    root = next(row for row in rows if row["id"] == row["orderid"] or str(row["id"]) == orderid)
    children = [row for row in rows if row is not root]

    def voids(row: dict[str, Any], states: tuple[str, ...]) -> bool:
        return any(v["kind"] == "void" and v["parent"] == row["id"] and v["status"] in states for v in children)

    amount = int(root["amount_minor"] or 0)
    live, approved = ("approved", "processing"), ("approved",)
    captures = [row for row in children if row["kind"] == "capture"]
    cancelled = any(row["kind"] == "cancel" and row["status"] in live for row in children)
    if root["kind"] == "preauth":
        held = sum(int(c["amount_minor"]) for c in captures if c["status"] in live and not voids(c, approved))
        charged_min = sum(int(c["amount_minor"]) for c in captures if c["status"] in approved and not voids(c, live))
        charged_final = sum(int(c["amount_minor"]) for c in captures if c["status"] in approved
                            and not voids(c, approved))  # fmt: skip
        authorized = 0 if cancelled or voids(root, approved) else amount
    else:
        sure = root["status"] == "approved" and not voids(root, live)
        charged_min = amount if sure else 0
        charged_final = amount if root["status"] == "approved" and not voids(root, approved) else 0
        held, authorized = 0, 0
    back = [row for row in children if row["kind"] in ("reversal", "chargeback")]
    return Ledger(
        authorized=authorized,
        held_max=held,
        charged_min=charged_min,
        charged_final=charged_final,
        back_max=sum(int(row["amount_minor"]) for row in back if row["status"] in live),
        back_final=sum(int(row["amount_minor"]) for row in back if row["status"] in approved),
    )


def assert_true(control: SimulatorControl, orderid: str, history: list[str]) -> None:
    money = ledger(control, orderid)
    assert money.charged_min >= money.back_max, (money, history)
    assert money.charged_final >= money.back_final, (money, history)
    if money.authorized:
        assert money.held_max <= money.authorized, (money, history)


Step = tuple[str, Any]
AMOUNTS = st.one_of(st.none(), st.integers(min_value=1, max_value=100))
STEPS = st.one_of(
    st.tuples(st.just("capture"), AMOUNTS),
    st.tuples(st.just("void"), st.none()),
    st.tuples(st.just("return"), AMOUNTS),
    st.tuples(st.just("chargeback"), AMOUNTS),
    st.tuples(st.just("decide"), st.sampled_from(["approved", "declined"])),
    st.tuples(st.just("advance"), st.none()),
    st.tuples(st.just("settle"), st.none()),
)


def run_step(client: GatewayClient, control: SimulatorControl, order: AsyncResponse, step: Step) -> str:
    name, value = step
    ids = {"client_orderid": order.client_orderid, "orderid": order.orderid}
    money = {} if value is None or name in ("decide",) else {"amount": Decimal(value), "currency": "EUR"}
    try:
        if name in ("capture", "return"):
            client.call(name, ids, **money)
        elif name == "void":
            client.void(ids, comment="test")
        elif name == "chargeback":
            control.chargeback(order, None if value is None else Decimal(value))
        elif name == "decide":
            latest = control.transaction(order.orderid)
            if latest["status"] != "processing":
                return f"decide: nothing processing ({latest['kind']} {latest['status']})"
            control.force_status(order.orderid, value)
        elif name == "advance":
            control.advance_clock(HOUR + 1)
        else:
            control.settle(order.orderid)
    except (ValidationError, SimulatorControlError) as refused:
        return f"{name} {value}: refused ({str(refused)[:90]})"
    return f"{name} {value}"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(kind=st.sampled_from(["preauth", "sale"]), steps=st.lists(STEPS, min_size=1, max_size=12))
def test_any_sequence_of_follow_ups_keeps_the_ledger_true(
    gateway: tuple[GatewayClient, SimulatorControl], kind: str, steps: list[Step]
) -> None:
    client, control = gateway
    build = preauth_fields if kind == "preauth" else sale_fields
    order = client.call(kind, build(amount=Decimal("100.00")))
    assert isinstance(order, AsyncResponse)
    control.force_status(order.orderid, "approved")
    history = [f"{kind} 100.00 approved"]
    for step in steps:
        history.append(run_step(client, control, order, step))
        assert_true(control, order.orderid, history)
    control.advance_clock(HOUR + 1)  # everything still processing is decided now
    history.append("every decision made")
    assert_true(control, order.orderid, history)


def test_a_refunded_capture_cannot_be_voided(gateway: tuple[GatewayClient, SimulatorControl]) -> None:
    """Issue 19's sequence: preauth 100, capture 100, return 100, void. Void was approved, giving back 200."""
    client, control = gateway
    order = client.preauth(preauth_fields(amount=Decimal("100.00")))
    control.force_status(order.orderid, "approved")
    ids = {"client_orderid": order.client_orderid, "orderid": order.orderid}
    client.capture(ids)
    control.force_status(order.orderid, "approved")
    client.return_(ids)
    control.force_status(order.orderid, "approved")
    with pytest.raises(ValidationError, match=r"cannot void the 100\.00 EUR capture .* was returned or charged back"):
        client.void(ids, comment="test")
    money = ledger(control, order.orderid)
    assert (money.charged_final, money.back_final) == (10000, 10000)


def test_a_return_waits_for_its_capture_and_a_capture_for_its_void(
    gateway: tuple[GatewayClient, SimulatorControl],
) -> None:
    """A capture still processing is not yet money to return; a void still processing gives nothing back yet."""
    client, control = gateway
    order = client.preauth(preauth_fields(amount=Decimal("100.00")))
    control.force_status(order.orderid, "approved")
    ids = {"client_orderid": order.client_orderid, "orderid": order.orderid}
    client.capture(ids, amount=Decimal("100.00"), currency="EUR")  # processing
    with pytest.raises(ValidationError, match="its capture is still processing"):
        client.return_(ids)
    control.force_status(order.orderid, "approved")
    client.void(ids, comment="test")  # processing
    with pytest.raises(ValidationError, match="exceeds"):
        client.capture(ids, amount=Decimal("1.00"), currency="EUR")
    control.force_status(order.orderid, "approved")  # the void: the preauth holds 100.00 again
    assert client.capture(ids, amount=Decimal("1.00"), currency="EUR").orderid == order.orderid


CONCURRENT_STEPS: list[Step] = [("capture", 40), ("capture", None), ("return", 30), ("return", None), ("void", None),
                                ("chargeback", 20), ("decide", "approved"), ("decide", "declined")] * 3  # fmt: skip


Runner = Callable[[GatewayClient, SimulatorControl, AsyncResponse, Any], object]


def all_at_once(server: SimulatorServer, order: AsyncResponse, steps: list[Any], run: Runner | None = None) -> None:
    """Each step from a client of its own (``run``: ``run_step`` by default), all released together; an error of a
    thread fails the test."""
    barrier = threading.Barrier(len(steps))
    errors: list[BaseException] = []
    run = run or run_step

    def hit(step: Any) -> None:
        try:
            with GatewayClient(server.client_config()) as own, server.control() as own_control:
                barrier.wait(timeout=30)
                run(own, own_control, order, step)
        except BaseException as exc:  # (reported below, not lost in a thread)
            errors.append(exc)

    threads = [threading.Thread(target=hit, args=(step,)) for step in steps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [], errors


def test_concurrent_captures_returns_voids_and_chargebacks_keep_every_ledger_true(slow: SimulatorServer) -> None:
    """Eight orders, each hit at once by captures, returns, voids, chargebacks and decisions from 24 threads,
    three rounds; every ledger checked after each round, and once everything is decided."""
    with GatewayClient(slow.client_config()) as client, slow.control() as control:
        orders = []
        for _ in range(8):
            order = client.preauth(preauth_fields(amount=Decimal("100.00")))
            control.force_status(order.orderid, "approved")
            orders.append(order)
        for round_ in range(3):
            for order in orders:
                all_at_once(slow, order, CONCURRENT_STEPS)
                assert_true(control, order.orderid, [f"round {round_}"])
        control.advance_clock(HOUR + 1)
        for order in orders:
            assert_true(control, order.orderid, ["every decision made"])
