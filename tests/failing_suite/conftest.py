"""The steps of the failing suite, beside gatekit's own (a merchant's suite with ``gatekit certify --suite``)."""

from __future__ import annotations

import socket
from decimal import Decimal

import pytest
from pytest_bdd import given, then, when

from toolkit.certify import reporting
from toolkit.certify.target import GatewayTarget
from toolkit.client import GatewayClient
from toolkit.config import PollSchedule
from toolkit.flows import Merchant, Order
from toolkit.payer import Payer
from toolkit.testdata.cards import Card, card_for

pytest_plugins = ["toolkit.steps"]


@given("a step whose own code is wrong")
def wrong_code() -> None:
    """A defect of the test itself (Broken, "Test defects"): an unknown phrase is refused before the run."""
    {}[[]] = 1  # TypeError: unhashable type: 'list'


@given("the gateway will fail the next sale")
def fail_next_sale(gateway_target: GatewayTarget) -> None:
    gateway_target.control.add_fault("sale", "error")


@when("the merchant sends a sale of 10.00 EUR signed with the wrong control key", target_fixture="order")
def sale_with_wrong_key(gateway_target: GatewayTarget, card: Card) -> Order:
    config = gateway_target.config.with_overrides(control_key="not-the-merchant-control-key")
    with GatewayClient(config, observers=[reporting.attach_exchange]) as client:
        return Merchant(client).pay("sale", card, Decimal("10.00"))


@when("the merchant asks a gateway where nothing listens for a status")
def status_from_nowhere(gateway_target: GatewayTarget) -> None:
    with socket.socket() as closed:  # a port that was free a moment ago: nothing listens there
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    config = gateway_target.config.with_overrides(base_url=f"http://127.0.0.1:{port}/paynet")
    with GatewayClient(config, observers=[reporting.attach_exchange]) as client:
        client.status(client_orderid="inv-1", orderid="1")


@then("the order is final within half a second")
def final_soon(merchant: Merchant, order: Order) -> None:
    merchant.client.wait_for_final_status(order.ack, schedule=PollSchedule(intervals=(0.05,), deadline=0.5))


@when("the payer is sent to a page that is not the payment page and tries to pay there")
def pay_on_the_wrong_page(gateway_target: GatewayTarget, payer: Payer, card_for_test: Card) -> None:
    payer.fill_payment_page(payer.open(gateway_target.config.base_url + "/form/no-such-page"), card_for_test)


@pytest.fixture
def card_for_test() -> Card:
    return card_for("approved")
