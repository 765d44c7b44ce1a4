"""The shop's steps beside gatekit's: every phrase of gatekit's suite comes from ``toolkit.steps``."""

from decimal import Decimal

from pytest_bdd import parsers, then

from toolkit.flows import Merchant, Order

pytest_plugins = ["toolkit.steps"]


@then(parsers.parse("the shop keeps {kept} EUR of the order"))
def shop_keeps(merchant: Merchant, order: Order, scene, kept: str) -> None:
    charged = Decimal(order.fields["amount"])
    returned = sum(merchant.final_status(child).amount for child in scene.orders)
    assert charged - returned == Decimal(kept)
