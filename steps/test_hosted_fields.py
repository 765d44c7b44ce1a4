"""Hosted Fields checkout (hosted-fields.md): the merchant's own page with the gateway's card iframes, a ticket per
page load, the card tokenized by the payer (over HTTP as the SDK does it, or typed in a real browser), the token
charged with a v4 sale, the v4 status followed, and 3-D Secure by redirect-to with the return POST verified."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from pytest_bdd import parsers, scenarios, then, when

from toolkit.certify import reporting
from toolkit.certify.checkout import CheckoutPages
from toolkit.certify.expect import Words, expect, expect_fields, fail
from toolkit.flows import Merchant, Order
from toolkit.models import StatusResponse
from toolkit.payer import HostedFieldsToken, Payer, TokenizeRefused
from toolkit.payer.browser import BrowserPayer
from toolkit.testdata.cards import Card

from .conftest import Scene, money

scenarios("../features/hosted_fields")

RETURN_FIELDS = ("status", "orderid", "merchant_order", "control")  # the return POST after 3-D Secure (section 8)


@dataclass
class Checkout:
    """One load of the merchant's checkout page: its ticket, its address, and what the payer's typing gave."""

    ticket: str
    url: str
    amount: Decimal
    currency: str
    token: HostedFieldsToken | None = None
    refused: TokenizeRefused | None = None
    violations: int = 0

    def the_token(self) -> str:
        if self.token is None:
            raise LookupError("no hosted fields token: the payer has not typed a card into the Hosted Fields yet")
        return self.token.token


@when(money("the merchant's checkout page for {amount:Money} {currency} gets a fresh ephemeral ticket"),
      target_fixture="checkout")  # fmt: skip
def checkout_page(merchant: Merchant, checkout_pages: CheckoutPages, amount: Decimal, currency: str) -> Checkout:
    ticket = merchant.ephemeral_ticket()
    return Checkout(ticket, checkout_pages.page_for(ticket, str(amount), currency), amount, currency)


@when("the payer types the card into the Hosted Fields")
def tokenize(payer: Payer, checkout: Checkout, checkout_pages: CheckoutPages, card: Card) -> None:
    """Over HTTP: the payer's browser loads the page, and the SDK's call is made as the SDK makes it."""
    payer.open_checkout(checkout.url)
    checkout.token = payer.tokenize_hosted_fields(checkout.ticket, card, sdk_url=checkout_pages.sdk_url,
                                                  origin=checkout.url)  # fmt: skip


@when("the payer types the card into the Hosted Fields again on the same page")
def tokenize_again(payer: Payer, checkout: Checkout, checkout_pages: CheckoutPages, card: Card) -> None:
    try:
        payer.tokenize_hosted_fields(checkout.ticket, card, sdk_url=checkout_pages.sdk_url, origin=checkout.url)
    except TokenizeRefused as refused:
        checkout.refused = refused


@when("the payer types the card into the Hosted Fields in a real browser")
def tokenize_in_browser(browser_payer: BrowserPayer, checkout: Checkout, card: Card) -> None:
    """The page opened (its screenshot: the gateway's iframes, ready and empty), the card typed into them, Pay."""
    browser_payer.open_checkout(checkout.url)
    checkout.token = browser_payer.fill_hosted_fields(card)
    violations = browser_payer.driver.execute_script("return document.forms[0].getAttribute('data-violations');")
    checkout.violations = int(violations or 0)


@when("the merchant charges the hosted fields token", target_fixture="order")
def charge(merchant: Merchant, checkout: Checkout, card: Card) -> Order:
    return merchant.pay_with_token(checkout.the_token(), checkout.amount, checkout.currency, card)


@when("the merchant charges the same hosted fields token for another order")
def charge_again(merchant: Merchant, checkout: Checkout, scene: Scene) -> None:
    scene.refuse(lambda: merchant.pay_with_token(checkout.the_token(), checkout.amount, checkout.currency))


def sent_to_issuer(merchant: Merchant, order: Order) -> StatusResponse:
    """The v4 status that sends the payer to 3-D Secure (``redirect-to``: the page sets ``location.href`` once)."""
    status = merchant.payer_step(order)
    if not status.redirect_to:
        said = Words(f"{status.status.value} and no redirect-to")
        fail("the v4 status", Words("a redirect-to for the payer"), said, about=order)
    return status


@when(parsers.re(r"the payer's browser follows redirect-to and answers the challenge with (?:the|a) "
                 r"(?P<which>right|wrong) password"))  # fmt: skip
def follow_challenge(merchant: Merchant, payer: Payer, order: Order, which: str) -> None:
    payer.follow_challenge(sent_to_issuer(merchant, order), payer.settings.password(which))


@when(parsers.re(r"the payer's browser follows redirect-to and answers the challenge in a real browser with (?:the|a) "
                 r"(?P<which>right|wrong) password"))  # fmt: skip
def follow_challenge_in_browser(merchant: Merchant, browser_payer: BrowserPayer, order: Order, which: str) -> None:
    browser_payer.follow(sent_to_issuer(merchant, order))
    browser_payer.answer_challenge(browser_payer.settings.password(which))


@then(parsers.parse("the gateway refuses the card typed into the Hosted Fields with code {code:d}"))
def tokenize_refused(checkout: Checkout, code: int) -> None:
    if checkout.refused is None:
        fail("the tokenize call", Words(f"a refusal with code {code}"), Words("a hosted fields token"))
    expect("the tokenize refusal's code", code, checkout.refused.code, about=checkout.refused)


@then("the status shows the last four digits of the card the payer typed")
def status_shows_card(merchant: Merchant, order: Order, card: Card) -> None:
    expect("the status's last four digits", card.number[-4:], merchant.final_status(order).last_four_digits,
           about=order)  # fmt: skip


@then(parsers.parse("the payer's browser posts a signed \"{status}\" back to the merchant's redirect_url"))
def posted_back(merchant: Merchant, order: Order, status: str) -> None:
    """The return after 3-D Secure (section 8): a POST to the sale's redirect_url with at least ``status``,
    ``orderid``, ``merchant_order`` (the sale's client_orderid) and ``control``, which verifies."""
    redirect = merchant.redirect_for(order)
    reporting.record_arrival(redirect)
    missing = [name for name in RETURN_FIELDS if name not in redirect.params]
    if missing:
        fail("the payer's return", Words(", ".join(RETURN_FIELDS)), Words(f"no {', '.join(missing)}"),
             about=redirect.summary())  # fmt: skip
    expect_fields("the payer's return", redirect, about=redirect.summary(), method="POST", status=status,
                  orderid=order.orderid, control_ok=True)  # fmt: skip
    expect("the return's merchant_order", order.client_orderid, redirect.params["merchant_order"])


@then("the checkout page kept to its Content-Security-Policy")
def kept_policy(checkout: Checkout) -> None:
    expect("the checkout page's Content-Security-Policy violations", 0, checkout.violations)
