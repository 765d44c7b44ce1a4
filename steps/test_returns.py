"""Partial returns, full reversals, and the release of a preauth's hold."""

from decimal import Decimal

from pytest_bdd import given, parsers, scenarios, then, when

from toolkit.flows import Merchant, Order
from toolkit.models import Status

from .conftest import Scene, money

scenarios("../features/returns")


@given(money("the merchant has returned {amount:Money} EUR"))
def has_returned(merchant: Merchant, order: Order, scene: Scene, amount: Decimal) -> None:
    """A return that the gateway has approved (a precondition: the gateway decides later than it answers)."""
    scene.orders.append(merchant.return_(order, amount))
    status = merchant.final_status(scene.orders[-1])
    assert (status.status, status.amount) == (Status.APPROVED, amount), status.raw


@when(money("the merchant returns {amount:Money} EUR"))
def returns(merchant: Merchant, order: Order, scene: Scene, amount: Decimal) -> None:
    scene.orders.append(merchant.return_(order, amount))


@when("the merchant returns the rest")
def returns_rest(merchant: Merchant, order: Order, scene: Scene) -> None:
    scene.orders.append(merchant.return_(order))


@when(money("the merchant tries to return {amount:Money} EUR"))
def tries_return(merchant: Merchant, order: Order, scene: Scene, amount: Decimal) -> None:
    scene.refuse(lambda: merchant.return_(order, amount))


@then("every return is approved")
def every_return_approved(merchant: Merchant, scene: Scene) -> None:
    assert scene.orders, "no return was sent"
    for child in scene.orders:
        assert merchant.final_status(child).status is Status.APPROVED, child


@then(money("{amount:Money} EUR has been returned in total"))
def returned_total(merchant: Merchant, scene: Scene, amount: Decimal) -> None:
    total = sum((merchant.final_status(child).amount or Decimal(0) for child in scene.orders), Decimal(0))
    assert total == amount


@then(parsers.parse("the return is recorded as a {kind}"))
def recorded_as(merchant: Merchant, scene: Scene, kind: str) -> None:
    assert merchant.final_status(scene.orders[-1]).transaction_type == kind


@then(money("the status of the sale request, by its serial number, is an approved sale of {amount:Money} EUR"))
def request_status(merchant: Merchant, order: Order, amount: Decimal) -> None:
    status = merchant.request_status(order)
    assert (status.status, status.transaction_type, status.amount) == (Status.APPROVED, "sale", amount), status.raw
