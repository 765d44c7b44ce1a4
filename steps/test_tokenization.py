"""Card references (v2 and v4), card information, rebills (make-rebill, -sale, -preauth), transfers by reference."""

import time
from decimal import Decimal

from pytest_bdd import given, parsers, scenarios, then, when

from toolkit.certify.choices import one_of
from toolkit.certify.expect import Words, expect, expect_fields, fail
from toolkit.certify.target import GatewayTarget
from toolkit.flows import Merchant, Order
from toolkit.models import CardRefResponse, Status
from toolkit.testdata.cards import Card, card_for

from .conftest import Scene, money

scenarios("../features/tokenization")
REBILLS = {"is approved": "approved", "gives insufficient funds": "insufficient-funds"}


@when(one_of("the merchant creates a card reference with {version}", version=("v2", "v4"), noun="version"),
      target_fixture="card_ref")  # fmt: skip
def create_card_ref(merchant: Merchant, order: Order, version: str) -> CardRefResponse:
    return merchant.card_ref(order, version)


@then("the card information shows the holder, BIN, last four digits and expiry of the card")
def card_info(merchant: Merchant, order: Order, card_ref: CardRefResponse) -> None:
    info = merchant.client.get_card_info(cardrefid=card_ref.card_ref_id)
    if info.missing:
        fail("the card information", Words("every field"), Words(f"none of {', '.join(info.missing)}"))
    number, card = order.fields["credit_card_number"], order.card
    expect_fields("the card information", info, bin=number[:6], last_four_digits=number[-4:],
                  card_printed_name=card.holder if card else None)  # fmt: skip
    expiry = f"{int(info.expire_month):02d}/{info.expire_year[-2:]}"
    expect("the card information's expiry", f"{int(card.expire_month):02d}/{card.expire_year[-2:]}" if card else None,
           expiry)  # fmt: skip


@when(
    parsers.re(
        r"the merchant rebills an amount that (?P<outcome>is approved|gives insufficient funds)"
        r"(?: with (?P<operation>make-rebill-sale|make-rebill))?$"
    ),
    target_fixture="order",
)
def rebill(merchant: Merchant, card_ref: CardRefResponse, outcome: str, operation: str | None) -> Order:
    return merchant.rebill(
        card_ref.card_ref_id, REBILLS[outcome], operation=(operation or "make-rebill").replace("-", "_")
    )


@when(
    money("the merchant holds {amount:Money} EUR on the stored card with make-rebill-preauth"), target_fixture="order"
)
def rebill_preauth(merchant: Merchant, card_ref: CardRefResponse, amount: Decimal) -> Order:
    return merchant.rebill(card_ref.card_ref_id, amount=amount, operation="make_rebill_preauth")


@then(money("the hold is approved as a preauth of {amount:Money} EUR"))
def hold_approved(merchant: Merchant, order: Order, amount: Decimal) -> None:
    status = merchant.final_status(order)
    expect_fields("the hold", status, about=order, status=Status.APPROVED, transaction_type="preauth", amount=amount)


@then(money("the capture is approved for {amount:Money} EUR"))
def capture_approved(merchant: Merchant, scene: Scene, amount: Decimal) -> None:
    status = merchant.final_status(scene.orders[-1])
    expect_fields("the capture", status, about=scene.orders[-1], status=Status.APPROVED, transaction_type="capture",
                  amount=amount)  # fmt: skip


@given("the merchant has a card reference of another approved sale", target_fixture="other_card_ref")
def other_card_ref(merchant: Merchant) -> CardRefResponse:
    other = merchant.pay("sale", card_for("approved"), Decimal("3.00"))
    merchant.approved_status(other)
    return merchant.card_ref(other)


@when(
    money("the merchant transfers {amount:Money} EUR from the stored card of the sale to the other one"),
    target_fixture="order",
)
def transfer_by_ref(
    merchant: Merchant, card_ref: CardRefResponse, other_card_ref: CardRefResponse, amount: Decimal
) -> Order:
    return merchant.transfer_by_ref(other_card_ref.card_ref_id, card_ref.card_ref_id, amount)


@given("the merchant has a card reference of a card that expires this month", target_fixture="card_ref")
def expiring_card_ref(merchant: Merchant, target: GatewayTarget) -> CardRefResponse:
    """A card whose last valid month is the month on the gateway's clock (the simulator's, moved by scenarios)."""
    today = time.gmtime(float(target.control.clock()["now"]))
    card = Card(card_for("approved").number, f"{today.tm_mon:02d}", str(today.tm_year), "123", "EXPIRING SOON")
    sale = merchant.pay("sale", card, Decimal("2.00"))
    merchant.approved_status(sale)
    return merchant.card_ref(sale)


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
    if target.is_simulator:
        expect("the amount charged", amount, charged, about=order)
    elif charged not in tried:
        fail("the amount charged", Words(" or ".join(map(str, sorted(tried)))), charged, about=order)


@when(parsers.parse("the merchant tries to rebill card reference {cardrefid}"))
def rebill_unknown(merchant: Merchant, scene: Scene, cardrefid: str) -> None:
    scene.refuse(lambda: merchant.rebill(cardrefid))
