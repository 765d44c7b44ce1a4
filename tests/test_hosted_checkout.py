"""The suite's side of a Hosted Fields checkout: the merchant's checkout pages (``toolkit.certify.checkout``), the
merchant's calls (``Merchant.ephemeral_ticket``, ``pay_with_token``, its waits on ``status_v4``), the sale's fields,
the HTTP payer on the checkout page, the return after 3-D Secure as the receiver reads it, the failure category."""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal

import pytest
import requests

from toolkit import demo
from toolkit.callbacks import CallbackReceiver
from toolkit.certify.categories import category_of
from toolkit.certify.checkout import CheckoutPages
from toolkit.client import GatewayClient
from toolkit.exchange import Exchange
from toolkit.flows import Merchant
from toolkit.hosted_fields import content_security_policy, sdk_url_of
from toolkit.models import HostedSaleResponse, HostedStatusResponse, Status
from toolkit.operations import get_operation
from toolkit.payer import Payer
from toolkit.simulator import SimulatorServer
from toolkit.testdata import card_for, hosted_sale_fields
from toolkit.validation import request_problems

SDK = "http://gateway.test:8000/sdk/hosted-fields/latest/index.js?segment=paynet"


@pytest.fixture(scope="module")
def pages() -> Iterator[CheckoutPages]:
    with CheckoutPages(SDK, "1001") as running:
        yield running


def test_sdk_url_is_on_the_api_s_host_outside_its_prefix():
    assert (
        sdk_url_of("https://gw.example/paynet") == "https://gw.example/sdk/hosted-fields/latest/index.js?segment=paynet"
    )
    assert sdk_url_of("http://127.0.0.1:8080/paynet/") == (
        "http://127.0.0.1:8080/sdk/hosted-fields/latest/index.js?segment=paynet"
    )


def test_a_checkout_page_holds_its_ticket_under_the_examples_policy_with_no_inline_script_or_style(
    pages: CheckoutPages,
):
    url = pages.page_for('tkt_"<x>&', "10.42", "EUR")
    answer = requests.get(url, timeout=10)
    assert answer.status_code == 200 and answer.headers["Cache-Control"] == "no-store"
    assert answer.headers["Content-Security-Policy"] == content_security_policy("http://gateway.test:8000")
    page = answer.text
    assert 'data-ticket="tkt_&quot;&lt;x&gt;&amp;"' in page and f'data-sdk-url="{SDK}"' in page
    assert 'data-endpoint-id="1001"' in page and "Pay 10.42 EUR" in page
    assert re.findall(r"<script\b[^>]*>", page) == ['<script src="/checkout.js">'], "no inline script"
    assert "<style" not in page and " style=" not in page, "no inline style"
    assert [f'id="{box}"' in page for box in ("cardNumber", "expiryDate", "cvv")] == [True] * 3
    assert pages.page_for("tkt_2", "1.00", "USD") != url, "one page per ticket, as per page load"


def test_the_page_s_script_and_style_come_from_its_own_origin_and_nothing_else_is_there(pages: CheckoutPages):
    script = requests.get(pages.base_url + "/checkout.js", timeout=10)
    assert script.headers["Content-Type"].startswith("text/javascript") and "onHostedFieldsReady" in script.text
    assert "sdk.tokenize(form.getAttribute('data-ticket'))" in script.text
    assert requests.get(pages.base_url + "/checkout.css", timeout=10).headers["Content-Type"].startswith("text/css")
    assert requests.get(pages.base_url + "/checkout/999", timeout=10).status_code == 404
    assert requests.get(pages.base_url + "/config.js", timeout=10).status_code == 404


def test_the_sale_fields_are_what_sale_v4_requires_and_carry_no_card():
    fields = hosted_sale_fields("hf_1", Decimal("10.42"), "EUR")
    assert request_problems(get_operation("sale_v4"), {name: str(value) for name, value in fields.items()}) == []
    assert fields["hosted_fields_token"] == "hf_1" and fields["card_printed_name"].isupper()
    assert not {"credit_card_number", "cvv2", "expire_month", "expire_year"} & set(fields)


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatorServer]:
    with SimulatorServer() as running:
        yield running


@pytest.fixture
def seen() -> list[Exchange]:
    return []


@pytest.fixture
def merchant(server: SimulatorServer, seen: list[Exchange]) -> Iterator[Merchant]:
    with CallbackReceiver(demo.CONTROL_KEY) as receiver, GatewayClient(server.client_config(),
                                                                       observers=[seen.append]) as client:  # fmt: skip
        yield Merchant(client, receiver, callback_url=receiver.callback_url)


def test_the_merchant_charges_a_token_and_follows_it_with_the_v4_status(
    server: SimulatorServer, merchant: Merchant, seen: list[Exchange]
):
    card = card_for("3ds-challenge")
    payer = Payer(merchant_urls=[merchant.receiver.redirect_url])  # type: ignore[union-attr]
    with CheckoutPages(sdk_url_of(server.base_url), "1001") as pages:
        ticket = merchant.ephemeral_ticket()
        url = pages.page_for(ticket, "10.42", "EUR")
        page = payer.open_checkout(url)
        token = payer.tokenize_hosted_fields(ticket, card, sdk_url=pages.sdk_url, origin=url)
    assert not payer.shows_challenge(page), "its Pay button is no ACS's"
    opened = payer.visits[0]
    title = "Checkout · the merchant's page with the gateway's Hosted Fields"
    assert (opened.step, opened.to, opened.shows) == ("open the merchant's checkout page", "merchant", title)
    order = merchant.pay_with_token(token.token, Decimal("10.42"), "EUR", card)
    assert isinstance(order.ack, HostedSaleResponse) and order.card == card and order.operation == "sale_v4"
    assert order.fields["redirect_url"] == merchant.receiver.redirect_url_for("sale_v4")  # type: ignore[union-attr]
    asks = merchant.payer_step(order)
    assert isinstance(asks, HostedStatusResponse) and asks.status is Status.PROCESSING and asks.redirect_to
    payer.follow_challenge(asks)
    final = merchant.final_status(order)
    assert final.status is Status.APPROVED and final.last_four_digits == card.number[-4:]
    polled = {exchange.operation for exchange in seen} - {"create_ephemeral_ticket", "sale_v4"}
    assert polled == {"status_v4"}, "a Hosted Fields order is followed with the v4 status only"
    redirect = merchant.redirect_for(order)
    assert redirect.client_orderid == order.client_orderid and redirect.control_ok
    assert redirect.summary() == f"redirect orderid={order.orderid} client_orderid={order.client_orderid} " \
                                 "status=approved"  # fmt: skip


def test_a_tokenize_refusal_is_filed_with_the_payer_s_problems():
    message = ("toolkit.payer.hosted_fields.TokenizeRefused: the gateway refused the card typed into its Hosted "
               "Fields: 4003 the ephemeral ticket is unknown or already spent")  # fmt: skip
    assert category_of("failed", message) == "The payer lost its way"
    assert category_of("broken", message.replace("toolkit.payer.hosted_fields.", "")) == "The payer lost its way"
