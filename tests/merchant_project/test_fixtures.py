"""One short test per fixture of gatekit's pytest plugin: the examples of the README ("The pytest plugin").

Order matters once: the first test leaves a sale in the simulator, which the reset of
``gateway_simulator`` must have forgotten by ``test_gateway_simulator``.
"""

import os
from decimal import Decimal

import pytest

from toolkit import Status
from toolkit.testdata import card_for, sale_fields


def test_gateway_client(gateway_client):
    ack = gateway_client.sale(sale_fields("approved", amount=Decimal("10.00")))
    final = gateway_client.wait_for_final_status(ack)
    assert final.status is Status.APPROVED and final.amount == Decimal("10.00")


def test_gateway_config(gateway_config):
    assert gateway_config.profile == "simulator"  # --gateway-profile, else GATEKIT_PROFILE, else simulator
    assert gateway_config.base_url.startswith("http://127.0.0.1:")


def test_gateway_simulator(gateway_simulator, simulator_control):
    assert simulator_control.journal() == []  # reset: the sale of test_gateway_client is forgotten
    assert gateway_simulator.base_url.endswith("/paynet")


def test_simulator_control(merchant, simulator_control):
    order = merchant.pay("sale", card_for("approved"), Decimal("7.00"))
    simulator_control.force_status(order.orderid, "declined", "05", "Do not honor")
    assert merchant.final_status(order).status is Status.DECLINED


def test_callback_receiver(merchant, callback_receiver):
    order = merchant.pay("sale", card_for("approved"), Decimal("8.00"))  # carries the receiver's callback URL
    callback = callback_receiver.wait_for_callback(orderid=order.orderid, status="approved")
    assert callback.control_ok is True and callback.params["amount"] == "8.00"


def test_merchant(merchant):
    order = merchant.pay("preauth", card_for("approved"), Decimal("30.00"))
    merchant.approved_status(order)  # the gateway decides later than it answers: capture once it is approved
    capture = merchant.capture(order, Decimal("12.50"))
    assert merchant.final_status(capture).amount == Decimal("12.50")


def test_payer(merchant, payer):
    order = merchant.open_form("sale-form", Decimal("9.00"))
    delivered = payer.pay_on_hosted_page(order.redirect_url, card_for("3ds-challenge"))
    assert delivered.status_code == 200 and delivered.fields["orderid"] == order.orderid
    assert merchant.final_status(order).status is Status.APPROVED  # the redirect is not the final word: status is


@pytest.mark.skipif(os.environ.get("GATEKIT_BROWSER") == "off", reason="GATEKIT_BROWSER=off")
def test_browser_payer(merchant, browser_payer):
    order = merchant.open_form("sale-form", Decimal("11.00"))
    browser_payer.open(order.redirect_url)
    browser_payer.fill_payment_page(card_for("approved"))
    assert merchant.redirect_for(order).control_ok
    assert merchant.final_status(order).status is Status.APPROVED
