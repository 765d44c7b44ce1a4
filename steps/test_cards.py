"""Account verification, recurring payments, status by client_orderid, the sandbox outcomes."""

from decimal import Decimal

from pytest_bdd import parsers, scenarios, then, when

from toolkit.flows import Merchant, Order
from toolkit.models import CardRefResponse, RecurringPaymentResponse, Status
from toolkit.testdata.cards import Card

from .conftest import Scene, money

scenarios("../features/cards")
PERIODS = {"daily": "day", "weekly": "week", "monthly": "month", "yearly": "year"}


@when("the merchant verifies the card account", target_fixture="order")
def verify(merchant: Merchant, card: Card) -> Order:
    return merchant.verify_account(card)


@when(money("the merchant creates a {period} recurring payment of {amount:Money} EUR"), target_fixture="recurring")
def create_recurring(
    merchant: Merchant, card_ref: CardRefResponse, period: str, amount: Decimal
) -> RecurringPaymentResponse:
    return merchant.recurring(card_ref.card_ref_id, amount, PERIODS[period])


@then("the recurring payment has an id")
def recurring_id(recurring: RecurringPaymentResponse) -> None:
    assert recurring.recurring_payment_id.isdigit(), recurring


@then(parsers.parse("the recurring payment has been charged {times}"))
def recurring_charged(merchant: Merchant, recurring: RecurringPaymentResponse, times: str) -> None:
    """The simulator names the n-th charge ``<client_orderid>-<n>``."""
    count = {"once": 1, "twice": 2}[times]
    charges = [merchant.client.status(client_orderid=f"{recurring.client_orderid}-{n}") for n in range(1, count + 1)]
    assert [charge.status for charge in charges] == [Status.APPROVED] * count
    assert all(charge.transaction_type == "recurring-charge" for charge in charges)


@when("the merchant asks for the status by its own order id only")
def status_by_client_orderid(merchant: Merchant, order: Order, scene: Scene) -> None:
    scene.status = merchant.status_by_client_orderid(order)


@then(money("the status is approved for {amount:Money} EUR"))
def status_approved_for(scene: Scene, order: Order, amount: Decimal) -> None:
    assert scene.status is not None
    assert (scene.status.status, scene.status.amount, scene.status.orderid) == (Status.APPROVED, amount, order.orderid)
