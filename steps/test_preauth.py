"""Preauth, full and partial capture, void before and after settlement."""

from decimal import Decimal

from pytest_bdd import given, scenarios, then, when

from toolkit.certify.expect import expect, expect_fields
from toolkit.certify.target import GatewayTarget
from toolkit.flows import Merchant, Order
from toolkit.models import Status

from .conftest import Scene, money

scenarios("../features/preauth")


@when(money("the merchant captures {amount:Money} EUR"))
def captures(merchant: Merchant, order: Order, scene: Scene, amount: Decimal) -> None:
    scene.orders.append(merchant.capture(order, amount))


@when("the merchant captures the rest")
def captures_rest(merchant: Merchant, order: Order, scene: Scene) -> None:
    scene.orders.append(merchant.capture(order))


@when(money("the merchant tries to capture {amount:Money} EUR"))
def tries_capture(merchant: Merchant, order: Order, scene: Scene, amount: Decimal) -> None:
    scene.refuse(lambda: merchant.capture(order, amount))


@when("the merchant voids the order")
def voids(merchant: Merchant, order: Order, scene: Scene) -> None:
    scene.orders.append(merchant.void(order))


@when("the merchant tries to void the order")
def tries_void(merchant: Merchant, order: Order, scene: Scene) -> None:
    scene.refuse(lambda: merchant.void(order))


@when(money("the merchant tries to void {amount:Money} EUR of the order"))
def tries_partial_void(merchant: Merchant, order: Order, scene: Scene, amount: Decimal) -> None:
    scene.refuse(lambda: merchant.void(order, amount))


@given("the gateway has settled the sale")
def settled(target: GatewayTarget, order: Order) -> None:
    target.control.settle(order.orderid)


@then(money("the capture is approved for {amount:Money} EUR"))
def capture_approved_for(merchant: Merchant, scene: Scene, amount: Decimal) -> None:
    status = merchant.final_status(scene.orders[-1])
    expect_fields("the capture", status, about=scene.orders[-1], status=Status.APPROVED, amount=amount)


@then("every capture is approved")
@then("the void is approved")
def all_approved(merchant: Merchant, scene: Scene) -> None:
    for child in scene.orders:
        expect(f"the {child.operation}'s status", Status.APPROVED, merchant.final_status(child).status, about=child)
