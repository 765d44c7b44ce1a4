"""Card references (v2 and v4), card information, rebills."""

from pytest_bdd import parsers, scenarios, then, when

from toolkit.flows import Merchant, Order
from toolkit.models import CardRefResponse

from .conftest import Scene

scenarios("../features/tokenization")
REBILLS = {"is approved": "approved", "gives insufficient funds": "insufficient-funds"}


@when(parsers.parse("the merchant creates a card reference with {version}"), target_fixture="card_ref")
def create_card_ref(merchant: Merchant, order: Order, version: str) -> CardRefResponse:
    return merchant.card_ref(order, version)


@then("the card information shows the BIN, brand, masked number and expiry of the card")
def card_info(merchant: Merchant, order: Order, card_ref: CardRefResponse) -> None:
    info = merchant.client.get_card_info(cardrefid=card_ref.card_ref_id)
    number = order.fields["credit_card_number"]
    assert (info.bin, info.last_four_digits) == (number[:6], number[-4:])
    assert info.card_type and info.masked_pan.startswith(info.bin) and "*" in info.masked_pan
    assert (info.card_exp_month, info.card_exp_year) == (order.fields["expire_month"], order.fields["expire_year"])


@when(parsers.parse("the merchant rebills an amount that {outcome}"), target_fixture="order")
def rebill(merchant: Merchant, card_ref: CardRefResponse, outcome: str) -> Order:
    return merchant.rebill(card_ref.card_ref_id, REBILLS[outcome])


@when(parsers.parse("the merchant tries to rebill card reference {cardrefid}"))
def rebill_unknown(merchant: Merchant, scene: Scene, cardrefid: str) -> None:
    scene.refuse(lambda: merchant.rebill(cardrefid))
