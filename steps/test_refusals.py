"""What the production gateway refuses: follow-ups without the merchant's login or with another order's
client_orderid, and expired cards (behaviour section 10)."""

from decimal import Decimal

from pytest_bdd import parsers, scenarios, when

from steps.conftest import Scene
from toolkit.flows import Merchant, Order
from toolkit.testdata.cards import card_for

scenarios("../features/refusals")


@when("the merchant tries to capture the order without its login")
def capture_without_login(merchant: Merchant, order: Order, scene: Scene) -> None:
    scene.refuse(lambda: merchant.attempt("capture", order, login=""))


@when(parsers.parse('the merchant tries to return the order with the login "{login}"'))
def return_with_login(merchant: Merchant, order: Order, scene: Scene, login: str) -> None:
    scene.refuse(lambda: merchant.attempt("return", order, login=login))


@when("the merchant tries to return the order with the client_orderid of another order")
def return_with_other_client_orderid(merchant: Merchant, order: Order, scene: Scene) -> None:
    other = merchant.pay("sale", card_for("approved"), Decimal("1.00"))
    scene.refuse(lambda: merchant.attempt("return", order, client_orderid=other.client_orderid))
