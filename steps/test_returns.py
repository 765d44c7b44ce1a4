"""Partial returns, full reversals, and the release of a preauth's hold."""

from decimal import Decimal

from pytest_bdd import given, parsers, scenarios, then, when

from toolkit.certify.expect import Words, expect, expect_fields, fail
from toolkit.flows import Merchant, Order
from toolkit.models import Status

from .conftest import Scene, money

scenarios("../features/returns")


@given(money("the merchant has returned {amount:Money} EUR"))
def has_returned(merchant: Merchant, order: Order, scene: Scene, amount: Decimal) -> None:
    """A return that the gateway has approved (a precondition: the gateway decides later than it answers)."""
    scene.orders.append(merchant.return_(order, amount))
    status = merchant.final_status(scene.orders[-1])
    expect_fields("the return", status, about=scene.orders[-1], status=Status.APPROVED, amount=amount)


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
    if not scene.orders:
        fail("the returns", Words("at least one"), Words("none: no return was sent"))
    for child in scene.orders:
        expect("the return's status", Status.APPROVED, merchant.final_status(child).status, about=child)


@then(money("{amount:Money} EUR has been returned in total"))
def returned_total(merchant: Merchant, scene: Scene, amount: Decimal) -> None:
    total = sum((merchant.final_status(child).amount or Decimal(0) for child in scene.orders), Decimal(0))
    expect("the amount returned in total", amount, total)


@then(parsers.parse("the return is recorded as a {kind}"))
def recorded_as(merchant: Merchant, scene: Scene, kind: str) -> None:
    status = merchant.final_status(scene.orders[-1])
    expect("the return's transaction type", kind, status.transaction_type, about=scene.orders[-1])


@then(money("the status of the sale request, by its serial number, is an approved sale of {amount:Money} EUR"))
def request_status(merchant: Merchant, order: Order, amount: Decimal) -> None:
    status = merchant.request_status(order)
    expect_fields("the sale request's status", status, about=order, status=Status.APPROVED, transaction_type="sale",
                  amount=amount)  # fmt: skip
