"""Account verification, recurring payments, status by client_orderid, the sandbox outcomes."""

from decimal import Decimal

import pytest
from pytest_bdd import scenarios, then, when

from toolkit.certify.choices import one_of
from toolkit.certify.expect import Words, expect, expect_fields, fail
from toolkit.certify.target import GatewayTarget
from toolkit.flows import Merchant, Order
from toolkit.models import CardRefResponse, RecurringPaymentResponse, Status
from toolkit.testdata.cards import Card

from .conftest import MONEY, Scene, money

scenarios("../features/cards")
PERIODS = {"daily": "day", "weekly": "week", "monthly": "month", "yearly": "year"}


@when("the merchant verifies the card account", target_fixture="order")
def verify(merchant: Merchant, card: Card) -> Order:
    return merchant.verify_account(card)


@when(one_of("the merchant creates a {period} recurring payment of {amount:Money} EUR", period=PERIODS,
            noun="period", extra_types=MONEY), target_fixture="recurring")  # fmt: skip
def create_recurring(
    merchant: Merchant, card_ref: CardRefResponse, period: str, amount: Decimal
) -> RecurringPaymentResponse:
    return merchant.recurring(card_ref.card_ref_id, amount, PERIODS[period])


@then("the recurring payment has an id")
def recurring_id(recurring: RecurringPaymentResponse) -> None:
    if not recurring.recurring_payment_id.isdigit():
        fail("the recurring payment's id", Words("a number"), recurring.recurring_payment_id, about=recurring)


@then(one_of("the recurring payment has been charged {times}", times=("once", "twice")))
def recurring_charged(merchant: Merchant, recurring: RecurringPaymentResponse, times: str) -> None:
    """The simulator names the n-th charge ``<client_orderid>-<n>``."""
    count = {"once": 1, "twice": 2}[times]
    for n in range(1, count + 1):
        charge = merchant.client.status(client_orderid=f"{recurring.client_orderid}-{n}")
        expect_fields(f"charge {n} of the recurring payment", charge, status=Status.APPROVED,
                      transaction_type="recurring-charge")  # fmt: skip


@when("the merchant asks for the status by its own order id only")
def status_by_client_orderid(merchant: Merchant, order: Order, scene: Scene) -> None:
    scene.status = merchant.status_by_client_orderid(order)


@then(money("the status is approved for {amount:Money} EUR"))
def status_approved_for(scene: Scene, order: Order, amount: Decimal) -> None:
    expect_fields("the status", scene.status, status=Status.APPROVED, amount=amount, orderid=order.orderid)


@when("the merchant asks for the status of the order by its endpoint group")
def status_by_group(merchant: Merchant, order: Order, target: GatewayTarget, scene: Scene) -> None:
    if not target.config.endpoint_group_id:
        pytest.skip(
            f"profile {target.profile} sets no endpoint group id (endpoint_group_id, GATEWAY_ENDPOINT_GROUP_ID)"
        )
    scene.status = merchant.order_status(order, by_group=True)


@then("the merchant first sees the order processing")
def first_sees_processing(merchant: Merchant, order: Order, target: GatewayTarget) -> None:
    """A gateway decides later than it answers (behaviour 3): the first status says ``processing``, and the
    merchant waits on.  Against a simulator that decides at once (latency 0) there is nothing to see."""
    if target.is_simulator and not target.latency:
        how = "set [simulator] latency in the profile" if target.server else "start gatekit simulate with --latency"
        pytest.skip(f"the simulator decides at once (latency 0): {how}")
    first = merchant.order_status(order)
    if not target.is_simulator and first.is_final:  # a gateway may decide before the first poll: nothing to see
        pytest.skip(f"the gateway decided {order} before the first status ({first.status.value}): no processing")
    expect("the first status", Status.PROCESSING, first.status, about=order)
