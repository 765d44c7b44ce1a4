"""Money rules under concurrency: 50 clients at once on one order never spend more than it holds.

Each thread has its own client (its own connection); a barrier releases them together.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import TypeVar

import pytest

from toolkit.client import GatewayClient
from toolkit.config import GatewayConfig
from toolkit.errors import ValidationError
from toolkit.masking import Secret
from toolkit.models import AsyncResponse, Status, StatusResponse
from toolkit.simulator import Merchant, SimulatorServer, SimulatorSettings
from toolkit.simulator.rules import payouts
from toolkit.simulator.settings import demo_merchant
from toolkit.testdata import payout_fields, preauth_fields, sale_fields

THREADS = 50
T = TypeVar("T")
LEAN = Merchant("lean", Secret("LEAN-CONTROL-KEY"), ("1002",), payout_balance=Decimal("100.00"), currency="EUR")


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatorServer]:
    """The demo merchant, and a lean one with a payout balance of 100.00 EUR."""
    with SimulatorServer(SimulatorSettings(merchants=(demo_merchant(), LEAN))) as running:
        yield running


@pytest.fixture(scope="module")
def lean(server: SimulatorServer) -> GatewayConfig:
    return GatewayConfig(server.base_url, LEAN.login, LEAN.control_key, endpoint_id=LEAN.endpoint_ids[0])


def all_at_once(config: GatewayConfig, request: Callable[[GatewayClient], T]) -> list[T | ValidationError]:
    """``request`` from THREADS clients released together; a refusal is returned, not raised."""
    barrier = threading.Barrier(THREADS)

    def one(_: int) -> T | ValidationError:
        with GatewayClient(config) as client:
            client.session.get(config.base_url + "/openapi.json", timeout=30)  # connected before the barrier
            barrier.wait(timeout=30)
            try:
                return request(client)
            except ValidationError as refusal:
                return refusal

    with ThreadPoolExecutor(THREADS) as pool:
        return list(pool.map(one, range(THREADS)))


def settled(client: GatewayClient, results: Sequence[object]) -> list[StatusResponse]:
    return [client.wait_for_final_status(r) for r in results if isinstance(r, AsyncResponse)]


@pytest.mark.parametrize(
    ("parent_operation", "operation", "fields"),
    [("sale", "return", sale_fields), ("preauth", "capture", preauth_fields)],
    ids=["partial returns on a sale", "partial captures on a preauth"],
)
def test_fifty_partial_amounts_never_exceed_the_order(
    client: GatewayClient,
    config: GatewayConfig,
    parent_operation: str,
    operation: str,
    fields: Callable[..., dict[str, str | Decimal]],
) -> None:
    parent = client.wait_for_final_status(client.call(parent_operation, fields(amount=Decimal("10.00"))))
    ids = {"client_orderid": parent.client_orderid, "orderid": parent.orderid}
    results = all_at_once(config, lambda c: c.call(operation, ids, amount=Decimal("0.50"), currency="EUR"))
    children = settled(client, results)
    refusals = [r for r in results if isinstance(r, ValidationError)]
    assert (len(children), len(refusals)) == (20, 30)
    assert all(child.status is Status.APPROVED for child in children)
    assert sum(child.amount or 0 for child in children) == Decimal("10.00")
    assert all("exceeds the 0.00 EUR still available" in r.error_message for r in refusals)


def test_concurrent_payouts_never_overdraw_the_balance(server: SimulatorServer, lean: GatewayConfig) -> None:
    engine = server.app.state.engine
    assert payouts.balance(engine, LEAN.login) == 10000
    with GatewayClient(lean) as client:
        acks = all_at_once(lean, lambda c: c.payout(payout_fields(amount=Decimal("5.00"))))
        statuses = settled(client, acks)
    approved = [s for s in statuses if s.status is Status.APPROVED]
    declined = [s for s in statuses if s.status is Status.DECLINED]
    assert (len(approved), len(declined)) == (20, 30)
    assert all(s.get("error-code") == "51" for s in declined)
    assert payouts.balance(engine, LEAN.login) == 0


def test_a_check_is_paid_once_under_concurrency(client: GatewayClient, config: GatewayConfig) -> None:
    check = client.wait_for_final_status(client.payout_check(payout_fields(operation="payout_check")))
    assert check.status is Status.APPROVED
    results = all_at_once(config, lambda c: c.payout_pay(client_orderid=check.client_orderid, orderid=check.orderid))
    paid = [r for r in results if isinstance(r, AsyncResponse)]
    assert len(paid) == 1
    assert all("was already paid" in r.error_message for r in results if isinstance(r, ValidationError))


def test_void_and_capture_race_never_both_win(client: GatewayClient, config: GatewayConfig) -> None:
    preauth = client.wait_for_final_status(client.preauth(preauth_fields(amount=Decimal("10.00"))))
    ids = {"client_orderid": preauth.client_orderid, "orderid": preauth.orderid}
    counter = iter(range(THREADS))
    lock = threading.Lock()

    def void_or_capture(c: GatewayClient) -> AsyncResponse:
        with lock:
            turn = next(counter)
        return c.void(ids, comment="race") if turn % 2 else c.capture(ids, amount=Decimal("1.00"), currency="EUR")

    results = all_at_once(config, void_or_capture)
    kinds = {client.wait_for_final_status(r).transaction_type for r in results if isinstance(r, AsyncResponse)}
    assert kinds in ({"void"}, {"capture"})


def test_fifty_concurrent_repeats_of_one_order_charge_once(
    server: SimulatorServer, client: GatewayClient, config: GatewayConfig
) -> None:
    """Idempotency (issue 9): one client_orderid sent 50 times at once makes one order; every answer names it."""
    fields = sale_fields(amount=Decimal("10.00"))
    results = all_at_once(config, lambda c: c.sale(fields))  # THREADS = 50
    orderids = {r.orderid for r in results if isinstance(r, AsyncResponse)}
    assert len(orderids) == 1 and all(isinstance(r, AsyncResponse) for r in results), results
    with server.control() as control:
        order = control.order(orderids.pop())
    assert [t["kind"] for t in order["transactions"]] == ["sale"]
