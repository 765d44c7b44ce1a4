"""Two-step v4 payouts, v2 payouts signed with HMAC-SHA1, and the payout form."""

from decimal import Decimal

from pytest_bdd import parsers, scenarios, then, when

from toolkit.certify.expect import expect, expect_in
from toolkit.certify.target import GatewayTarget
from toolkit.flows import Merchant, Order
from toolkit.models import Status
from toolkit.testdata.cards import card_for

from .conftest import Scene, money

scenarios("../features/payouts")


@when(money("the merchant checks a payout of {amount:Money} EUR to an approved card"), target_fixture="check")
def check_payout(merchant: Merchant, amount: Decimal) -> Order:
    return merchant.payout("payout_check", amount, card_for("approved"))


@then("the payout check is approved")
def check_approved(merchant: Merchant, check: Order) -> None:
    expect("the payout check's status", Status.APPROVED, merchant.final_status(check).status, about=check)


@then(parsers.parse('the payout check is declined with "{message}"'))
def check_declined(merchant: Merchant, check: Order, target: GatewayTarget, message: str) -> None:
    status = merchant.final_status(check)
    expect("the payout check's status", Status.DECLINED, status.status, about=check)
    if target.is_simulator:
        expect_in("the decline message", message, status.error_message, about=check)


@when("the merchant pays the checked payout", target_fixture="order")
def pay(merchant: Merchant, check: Order) -> Order:
    merchant.approved_status(check)  # a payout-pay needs an approved check: FlowError otherwise
    return merchant.payout_pay(check)


@when("the merchant tries to pay the checked payout again")
def pay_again(merchant: Merchant, check: Order, scene: Scene) -> None:
    scene.refuse(lambda: merchant.payout_pay(check))


@when("the merchant tries to pay out that order")
def pay_not_a_check(merchant: Merchant, order: Order, scene: Scene) -> None:
    scene.refuse(lambda: merchant.payout_pay(order))


@when(money("the merchant sends a v2 payout of {amount:Money} EUR to an approved card"), target_fixture="order")
def v2_payout(merchant: Merchant, amount: Decimal) -> Order:
    return merchant.payout("payout", amount, card_for("approved"))


@when("the merchant sends a v2 payout of an amount that gives insufficient funds", target_fixture="order")
def v2_payout_declined(merchant: Merchant) -> Order:
    return merchant.payout("payout", None, card_for("approved"), outcome="insufficient-funds")


@when(
    money("the merchant sends a one-step v4 payout of {amount:Money} EUR to an approved card"), target_fixture="order"
)
def v4_payout(merchant: Merchant, amount: Decimal) -> Order:
    return merchant.payout("payout_v4", amount, card_for("approved"))


@when(money("the merchant deposits {amount:Money} EUR to an approved card"), target_fixture="order")
def deposit(merchant: Merchant, amount: Decimal) -> Order:
    return merchant.deposit(card_for("approved"), amount)
