"""Steps shared by every flow: cards, orders, outcomes, refusals.  Each step is a few lines over toolkit.

The ``merchant``, ``payer`` and ``gateway_*`` fixtures come from gatekit's pytest plugin
(``toolkit.certify.fixtures``).  Step modules import from here relatively (``from .conftest import
Scene``): the wheel ships this folder as ``toolkit.suite.steps`` (``toolkit/suite/__init__.py``).

Messages that only the simulator words (refusal reasons, decline texts) are checked against the
simulator; against a sandbox the step checks the kind of answer, whose wording is the gateway's.
Every comparison goes through ``toolkit.certify.expect``: a failure says what the feature expected
and what the gateway said.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from datetime import date
from decimal import Decimal
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from toolkit.callbacks import CallbackReceiver, Received
from toolkit.certify import reporting
from toolkit.certify.checkout import CheckoutPages
from toolkit.certify.choices import one_of
from toolkit.certify.expect import Words, expect, expect_fields, expect_in, expect_refusal, fail
from toolkit.certify.shared import moves_shared_state
from toolkit.certify.target import GatewayTarget
from toolkit.client import GatewayClient
from toolkit.errors import ApiError, AuthenticationError, ValidationError
from toolkit.exchange import Exchange
from toolkit.flows import Merchant, Order
from toolkit.hosted_fields import sdk_url_of
from toolkit.models import CardRefResponse, Status, StatusResponse
from toolkit.payer import Payer
from toolkit.payer.browser import BrowserPayer
from toolkit.recording import Recorder
from toolkit.testdata.cards import Card, card_for, three_ds_v1_card

MONEY = {"Money": Decimal}
# Business phrases for cards -> outcome names of toolkit.testdata.outcomes.
CARDS = {
    "is approved": "approved",
    "requires a 3-D Secure challenge": "3ds-challenge",
    "is not enrolled in 3-D Secure": "not-enrolled",
    "is unknown": "unknown",
    "is expired": "expired-card",
    "is insufficient-funds": "insufficient-funds",
    "is not-permitted": "not-permitted",
    "is stolen": "stolen-card",
    "is declined": "declined",
    # the simulator's own outcomes (behaviour section 11, [sim]): scenarios that use them are tagged @simulator
    "passes 3-D Secure without a challenge": "3ds-frictionless",
    "fails 3-D Secure without a challenge": "3ds-frictionless-declined",
}


def money(text: str) -> Any:
    return parsers.parse(text, extra_types=MONEY)


def told(order: Order, status: StatusResponse) -> str:
    """The order, and the gateway's reason when it gave one (a decline's message), for a failure to name."""
    return f"{order!r}: {status.error_message}" if status.error_message else repr(order)


class Scene:
    """What one scenario has done so far, for the Then steps to look at."""

    def __init__(self) -> None:
        self.orders: list[Order] = []
        self.refusal: ApiError | None = None
        self.status: StatusResponse | None = None

    def refuse(self, action: Callable[[], object]) -> ApiError | None:
        try:
            action()
        except ApiError as error:
            self.refusal = error
            return error
        self.refusal = None
        return None


@pytest.fixture
def scene() -> Scene:
    return Scene()


@pytest.fixture
def target(gateway_target: GatewayTarget) -> GatewayTarget:
    return gateway_target


@pytest.fixture(scope="session")
def checkout_pages(gateway_target: GatewayTarget) -> Iterator[CheckoutPages]:
    """The merchant's checkout pages for Hosted Fields (``toolkit.certify.checkout``), with the gateway's SDK at
    its ``SDK_URL``: the host of the profile's base URL (hosted-fields.md section 2)."""
    config = gateway_target.config
    with CheckoutPages(sdk_url_of(config.base_url), config.endpoint_id or "") as pages:
        yield pages


MerchantFactory = Callable[..., Merchant]


@pytest.fixture
def merchant_with(
    target: GatewayTarget, exchange_observer: Callable[[Exchange], None], gateway_recorder: Recorder | None
) -> Iterator[MerchantFactory]:
    """A merchant whose client is configured otherwise (another key, clock or nonce); closed after the scenario."""
    clients: list[GatewayClient] = []

    def make(*, control_key: str | None = None, **client_options: Any) -> Merchant:
        config = target.config.with_overrides(control_key=control_key)
        clients.append(GatewayClient(config, observers=[exchange_observer], record=gateway_recorder, **client_options))
        if control_key is not None:  # (a recording says so: a replay signs with a wrong key too)
            clients[-1].recording_note = "another key"
        return Merchant(clients[-1])

    yield make
    for client in clients:
        client.close()


# --- Given ----------------------------------------------------------------------------------------


@given("the merchant's back end is listening for callbacks and payer redirects", target_fixture="receiver")
def listening(target: GatewayTarget) -> CallbackReceiver:
    """The target starts the receiver for the whole run; this names it for the scenario."""
    return target.receiver


@given(one_of("a card that {description}", description=CARDS, noun="card"), target_fixture="card")
def a_card(description: str) -> Card:
    return card_for(CARDS[description])


@given("a card whose expiry date has passed", target_fixture="card")
def an_expired_card() -> Card:
    """A card that would be approved (CVV2 123), but its last valid month was January of last year."""
    return dataclasses.replace(card_for("approved"), expire_month="01", expire_year=str(date.today().year - 1))


@given("an approved card whose expiry year is written with two digits", target_fixture="card")
def a_two_digit_year_card() -> Card:
    """What the family's public PHP library sends: ``expire_year=29`` for 2029 (behaviour section 10)."""
    card = card_for("approved")
    return dataclasses.replace(card, expire_year=card.expire_year[-2:])


@given("a 3-D Secure 1.0.2 test card", target_fixture="card")
def a_three_ds_v1_card() -> Card:
    return three_ds_v1_card()


@given(one_of("an approved {kind} of {amount:Money} {currency}", kind=("sale", "preauth"), noun="payment",
              extra_types=MONEY), target_fixture="order")  # fmt: skip
def an_approved(merchant: Merchant, kind: str, amount: Decimal, currency: str) -> Order:
    order = merchant.pay(kind, card_for("approved"), amount, currency)
    merchant.approved_status(order)  # FlowError, with the gateway's reason, if the precondition fails
    return order


@given("the merchant has a card reference of the sale", target_fixture="card_ref")
def has_card_ref(merchant: Merchant, order: Order) -> CardRefResponse:
    return merchant.card_ref(order)


# --- When -----------------------------------------------------------------------------------------


@when(money("the merchant sends a sale of {amount:Money} {currency}"), target_fixture="order")
def send_sale(merchant: Merchant, card: Card, amount: Decimal, currency: str) -> Order:
    return merchant.pay("sale", card, amount, currency)


@when(parsers.re(r"the payer answers the challenge with (?:the|a) (?P<which>right|wrong) password"))
def answer_challenge(merchant: Merchant, payer: Payer, order: Order, which: str) -> None:
    """API flows: the payer follows the status to the ACS; hosted pages, and the status page a merchant showed (the
    gateway-run road): the ACS page is already open."""
    page = payer.history[-1] if order.redirect_url else payer.at_challenge() or payer.follow(merchant.payer_step(order))
    payer.return_to_merchant(payer.answer_challenge(page, payer.settings.password(which)))


@given(money("the merchant has captured {amount:Money} EUR"))
def has_captured(merchant: Merchant, order: Order, amount: Decimal) -> None:
    status = merchant.final_status(merchant.capture(order, amount))
    expect_fields("the capture", status, about=order, status=Status.APPROVED, amount=amount)


@when(money("the merchant captures {amount:Money} EUR of the order"))
def captures_of_order(merchant: Merchant, order: Order, scene: Scene, amount: Decimal) -> None:
    scene.orders.append(merchant.capture(order, amount))


@when(money("the issuer charges back {amount:Money} EUR of the order"))
def charge_back(target: GatewayTarget, order: Order, amount: Decimal) -> None:
    target.control.chargeback(order, amount)


@when("the merchant asks for the status of the order")
def asks_order_status(merchant: Merchant, order: Order, scene: Scene) -> None:
    scene.status = merchant.order_status(order)


# --- hosted pages ---


@when(money("the merchant opens a {form} for {amount:Money} EUR"), target_fixture="order")
def open_form(merchant: Merchant, form: str, amount: Decimal) -> Order:
    return merchant.open_form(form.replace(" ", "-"), amount)


PAGE_CARDS = {"an approved card": "approved", "a card that requires a 3-D Secure challenge": "3ds-challenge"}


@when("the payer enters a card number that fails the Luhn check on the payment page")
def enter_mistyped_card(payer: Payer, order: Order) -> None:
    number = card_for("approved").number
    mistyped = number[:-1] + str((int(number[-1]) + 1) % 10)
    payer.fill_payment_page(payer.open(order.redirect_url), card_for("approved"), credit_card_number=mistyped)


@when(
    parsers.re(
        r"the payer enters (?P<description>an approved card|a card that requires a 3-D Secure challenge) "
        r"on the payment page"
    )
)
def enter_card(payer: Payer, order: Order, description: str) -> None:
    page = payer.enter_card(order.redirect_url, card_for(PAGE_CARDS[description]))  # PayerError if refused
    if not payer.shows_challenge(page):
        payer.return_to_merchant(page)


# --- the payer in a real browser (@browser: skipped, with the reason, without Chromium or with GATEKIT_BROWSER=off) ---


@when(
    parsers.re(
        r"the payer enters (?P<description>an approved card|a card that requires a 3-D Secure challenge) "
        r"on the payment page in a real browser"
    )
)
def enter_card_in_browser(browser_payer: BrowserPayer, order: Order, description: str) -> None:
    browser_payer.open(order.redirect_url)
    browser_payer.fill_payment_page(card_for(PAGE_CARDS[description]))


@when(parsers.re(r"the payer answers the challenge in a real browser with the (?P<which>right|wrong) password"))
def answer_challenge_in_browser(merchant: Merchant, browser_payer: BrowserPayer, order: Order, which: str) -> None:
    """API flows: the browser goes where the status sends it; hosted pages: it already shows the ACS page."""
    if not order.redirect_url:
        status = merchant.payer_step(order)
        if not status.redirect_to:
            fail("the status", Words("a redirect-to for the payer"), Words("none: it sends the payer nowhere"),
                 about=order)  # fmt: skip
        browser_payer.open(status.redirect_to)
    browser_payer.answer_challenge(browser_payer.settings.password(which))


CLOCK = "moves the gateway's clock"  # (every scenario's, on a team's simulator: those run alone under -n)


@when(parsers.parse("{amount:d} seconds pass on the gateway's clock"))
@moves_shared_state(CLOCK)
def seconds_pass(target: GatewayTarget, amount: int) -> None:
    target.control.advance_clock(amount)


@when(parsers.re(r"(?P<amount>\d+) days? pass(?:es)? on the gateway's clock"))
@moves_shared_state(CLOCK)
def days_pass(target: GatewayTarget, amount: str) -> None:
    target.control.advance_clock(int(amount) * 86400)


# --- Then -----------------------------------------------------------------------------------------


@then("the order is approved")
def order_approved(merchant: Merchant, order: Order, scene: Scene) -> None:
    scene.status = merchant.final_status(order)
    expect("the order's status", Status.APPROVED, scene.status.status, about=told(order, scene.status))


@then(parsers.parse('the order is declined with "{message}"'))
def order_declined(merchant: Merchant, order: Order, target: GatewayTarget, message: str) -> None:
    status = merchant.final_status(order)
    expect("the order's status", Status.DECLINED, status.status, about=order)
    if target.is_simulator:
        expect_in("the decline message", message, status.error_message, about=order)


@then("the status is unknown")
def status_unknown(merchant: Merchant, order: Order) -> None:
    expect("the order's status", Status.UNKNOWN, merchant.settled_status(order).status, about=order)


@then(parsers.parse('the gateway refuses the request saying "{text}"'))
def refused(scene: Scene, target: GatewayTarget, text: str) -> None:
    """The simulator's wording and kind (a validation error); a sandbox may say no with a 401/403 instead."""
    if target.is_simulator:
        refusal = expect_refusal("the gateway's answer", scene.refusal, ValidationError)
        expect_in("the refusal", text, refusal.error_message)
    else:
        expect_refusal("the gateway's answer", scene.refusal)


@then(money("a further return of {amount:Money} EUR is refused"))
def further_return_refused(merchant: Merchant, order: Order, scene: Scene, amount: Decimal) -> None:
    expect_refusal("the further return", scene.refuse(lambda: merchant.return_(order, amount)), about=order)


@then(money("the merchant can still return {amount:Money} EUR"))
def can_still_return(merchant: Merchant, order: Order, amount: Decimal) -> None:
    status = merchant.final_status(merchant.return_(order, amount))
    expect_fields("the return", status, about=order, status=Status.APPROVED, amount=amount)


@then(money("the order's latest transaction is an approved {kind} of {amount:Money} EUR"))
def latest_transaction(merchant: Merchant, order: Order, kind: str, amount: Decimal) -> None:
    """``status`` without ``by-request-sn``: the order's latest transaction (behaviour section 10)."""
    status = merchant.order_status(order)
    expect_fields("the order's latest transaction", status, about=order, status=Status.APPROVED,
                  transaction_type=kind, amount=amount)  # fmt: skip


@then(parsers.parse('the gateway calls the merchant back with a signed "{status}"'), target_fixture="callback")
def called_back(target: GatewayTarget, order: Order, status: str) -> Received:
    callback = target.receiver.wait_for_callback(orderid=order.orderid, status=status)
    reporting.record_arrival(callback)
    expect_fields("the callback", callback, about=callback.summary(), control_ok=True)
    return callback


@then(
    parsers.parse('the gateway calls the merchant back about the {kind} with a signed "{status}"'),
    target_fixture="callback",
)
def called_back_about(target: GatewayTarget, order: Order, kind: str, status: str) -> Received:
    """A later transaction of the order (capture, chargeback...): called back at the order's notify_url."""
    callback = target.receiver.wait_for_callback(orderid=order.orderid, type=kind, status=status)
    reporting.record_arrival(callback)
    expect_fields("the callback", callback, about=callback.summary(), control_ok=True)
    return callback


@then(money("a capture of {amount:Money} EUR is refused"))
def capture_refused(merchant: Merchant, order: Order, scene: Scene, amount: Decimal) -> None:
    expect_refusal("the capture", scene.refuse(lambda: merchant.capture(order, amount)), about=order)


@then(parsers.parse('the gateway refuses the signature saying "{text}"'))
def refused_signature(scene: Scene, target: GatewayTarget, text: str) -> None:
    refusal = expect_refusal("the gateway's answer", scene.refusal, AuthenticationError)
    if target.is_simulator:
        expect_in("the refusal", text, refusal.error_message)


@then("the payer's redirect to the merchant is signed by the gateway")
def redirect_signed(merchant: Merchant, order: Order, target: GatewayTarget) -> None:
    redirect = merchant.redirect_for(order)
    reporting.record_arrival(redirect)
    expect_fields("the payer's redirect", redirect, about=redirect.summary(), control_ok=True)
    expect("the payer's redirect's client_orderid", order.client_orderid, redirect.params.get("client_orderid"))
