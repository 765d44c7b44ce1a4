"""Card references (v2 and v4), card information, rebills."""

from decimal import Decimal

from pytest_bdd import parsers, scenarios, then, when

from steps.conftest import Scene, money
from toolkit.certify.target import GatewayTarget
from toolkit.flows import Merchant, Order
from toolkit.models import CardRefResponse

scenarios("../features/tokenization")
REBILLS = {"is approved": "approved", "gives insufficient funds": "insufficient-funds"}


@when(parsers.parse("the merchant creates a card reference with {version}"), target_fixture="card_ref")
def create_card_ref(merchant: Merchant, order: Order, version: str) -> CardRefResponse:
    return merchant.card_ref(order, version)


@then("the card information shows the holder, BIN, last four digits and expiry of the card")
def card_info(merchant: Merchant, order: Order, card_ref: CardRefResponse) -> None:
    info = merchant.client.get_card_info(cardrefid=card_ref.card_ref_id)
    assert info.missing == (), f"get-card-info-response without {', '.join(info.missing)}"
    number, card = order.fields["credit_card_number"], order.card
    assert (info.bin, info.last_four_digits) == (number[:6], number[-4:])
    assert card is not None and info.card_printed_name == card.holder
    assert (int(info.expire_month), info.expire_year[-2:]) == (int(card.expire_month), card.expire_year[-2:])


@when(
    parsers.re(r"the merchant rebills an amount that (?P<outcome>is approved|gives insufficient funds)"),
    target_fixture="order",
)
def rebill(merchant: Merchant, card_ref: CardRefResponse, outcome: str) -> Order:
    return merchant.rebill(card_ref.card_ref_id, REBILLS[outcome])


@when(
    money("the merchant rebills an amount that gives insufficient funds, then {amount:Money} EUR"),
    target_fixture="order",
)
def rebill_then(merchant: Merchant, card_ref: CardRefResponse, amount: Decimal) -> Order:
    return merchant.rebill(card_ref.card_ref_id, "insufficient-funds", then_try=(amount,))


@then(money("the rebill charged {amount:Money} EUR"))
def rebill_charged(merchant: Merchant, order: Order, target: GatewayTarget, amount: Decimal) -> None:
    """The simulator declines the first amount by its amount rule; a sandbox may take either amount."""
    charged = merchant.final_status(order).amount
    tried = {Decimal(str(order.fields["amount"])), amount}
    assert charged == amount if target.is_simulator else charged in tried, charged


@when(parsers.parse("the merchant tries to rebill card reference {cardrefid}"))
def rebill_unknown(merchant: Merchant, scene: Scene, cardrefid: str) -> None:
    scene.refuse(lambda: merchant.rebill(cardrefid))
