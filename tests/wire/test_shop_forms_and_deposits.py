"""Behaviour section 12 by hand-built requests (issue 36, points 5 to 7): deposits spend the payout balance, hosted
forms without ``redirect_url``, and ``transfer-form``.

Requests come from ``tests/wire/table.py`` and are signed by ``tests/independent.py``; the payer's browser is
plain ``requests`` posting what the page's form holds, and the balance is read from the simulator's control API
(``GET /_sim/merchants``).  The demo merchant's payout balance is 100.00 EUR here.

- [S12] "A deposit from the merchant's account to a card (``transfer-by-ref`` without a source reference, the v4
  ``transfer-by-ref``) spends the merchant's payout balance as a payout does: beyond it, it is declined
  'Insufficient funds', and an approved one lowers the balance."
- [S12] "``sale-form``, ``preauth-form``, ``account-verification-form`` and ``transfer-form`` take
  ``redirect_url`` as optional; without it the payer ends on the gateway's own result page."
- [S12] "``transfer-form`` (the PHP library's TransferFormQuery): the hosted form of a card-to-card transfer, with
  the fields and the control of ``sale-form``.  [sim] The gateway's page asks the payer for the source card and
  the destination card; the transaction type is ``transfer``."
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from decimal import Decimal
from html import unescape
from urllib.parse import urljoin

import pytest
import requests

from tests import independent
from tests.wire.build import minimal
from tests.wire.gateway import CONTROL_KEY, Answer, Gateway
from tests.wire.orders import FINAL, SAMPLE, Order, Orders, form_inputs, new_id
from tests.wire.table import wire
from toolkit.simulator import SimulatorServer
from toolkit.simulator.settings import SimulatorSettings, demo_merchant

BALANCE = Decimal("100.00")
DESTINATION = "4444555566661111"  # behaviour 6: a card seen in public examples
# What the payer types into the gateway's page, by the field names of the sale (behaviour 10).
PAYER_TYPES = {
    "credit_card_number": SAMPLE["credit_card_number"],
    "card_printed_name": SAMPLE["card_printed_name"],
    "expire_month": SAMPLE["expire_month"],
    "expire_year": SAMPLE["expire_year"],
    "cvv2": SAMPLE["cvv2"],
    "destination-card-no": DESTINATION,
}
SOURCE_CARD = ("credit_card_number", "card_printed_name", "expire_month", "expire_year", "cvv2")
FORMS = ("sale-form", "preauth-form", "account-verification-form", "transfer-form")


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorServer]:
    merchant = dataclasses.replace(demo_merchant(), payout_balance=BALANCE)
    with SimulatorServer(SimulatorSettings(merchants=(merchant,))) as running:
        yield running


def balance(simulator: SimulatorServer) -> Decimal:
    merchants = requests.get(f"{simulator.root_url}/_sim/merchants", timeout=10).json()["merchants"]
    return Decimal(next(m for m in merchants if m["login"] == "gatekit-demo")["payout_balance"])


@pytest.fixture
def reset(simulator: SimulatorServer) -> None:
    """The balance as configured again (each deposit test starts from 100.00)."""
    assert requests.post(f"{simulator.root_url}/_sim/reset", timeout=10).status_code == 200


def final(orders: Orders, order: Order) -> Answer:
    return orders.wait(order, lambda status: status["status"] in FINAL)


# --- 5: deposits spend the payout balance ------------------------------------------------------------------


def deposit(gateway: Gateway, orders: Orders, version: str, amount: str) -> Order:
    """A deposit from the merchant to a card: v2 ``transfer-by-ref`` without ``source-card-ref-id`` (to a stored
    card), or the v4 ``transfer-by-ref`` (to a card number) [S11]."""
    if version == "v2":
        op = wire("transfer-by-ref")
        fields = {
            "login": gateway.login,
            "client_orderid": new_id("deposit"),
            "amount": amount,
            "currency": "EUR",
            "ipaddress": SAMPLE["ipaddress"],
            "destination-card-ref-id": orders.card_ref().extra["cardrefid"],
        }
        client_orderid = fields["client_orderid"]
    else:
        op = wire("transfer-by-ref-v4")
        fields = {
            "client-order-id": new_id("deposit"),
            "amount": amount,
            "currency": "EUR",
            "order_desc": "deposit to a card",
            "destination-card-no": DESTINATION,
        }
        client_orderid = fields["client-order-id"]
    answer = gateway.post(op, gateway.with_control(op, fields))
    assert (answer.http_status, answer.type) == (200, "async-response"), answer.describe()
    return Order(client_orderid, answer["paynet-order-id"], answer)


@pytest.mark.usefixtures("reset")
@pytest.mark.parametrize("version", ["v2", "v4"])
def test_a_deposit_beyond_the_payout_balance_is_declined_and_moves_nothing(
    simulator: SimulatorServer, gateway: Gateway, orders: Orders, version: str
) -> None:
    status = final(orders, deposit(gateway, orders, version, "20000.00"))  # ends in 00: the amount rule approves
    assert (status["status"], status["transaction-type"]) == ("declined", "transfer"), status.describe()
    assert "Insufficient funds" in status.message, status.describe()
    assert balance(simulator) == BALANCE


@pytest.mark.usefixtures("reset")
@pytest.mark.parametrize("version", ["v2", "v4"])
def test_an_approved_deposit_lowers_the_payout_balance(
    simulator: SimulatorServer, gateway: Gateway, orders: Orders, version: str
) -> None:
    first = final(orders, deposit(gateway, orders, version, "60.00"))
    assert first["status"] == "approved", first.describe()
    assert balance(simulator) == Decimal("40.00")
    second = final(orders, deposit(gateway, orders, version, "60.00"))  # more than is left
    assert second["status"] == "declined" and "Insufficient funds" in second.message, second.describe()
    assert balance(simulator) == Decimal("40.00")


@pytest.mark.usefixtures("reset")
def test_a_transfer_between_two_stored_cards_leaves_the_payout_balance_alone(
    simulator: SimulatorServer, gateway: Gateway, orders: Orders
) -> None:
    op = wire("transfer-by-ref")
    fields = {
        "login": gateway.login,
        "client_orderid": new_id("card-to-card"),
        "amount": "500.00",
        "currency": "EUR",
        "ipaddress": SAMPLE["ipaddress"],
        "destination-card-ref-id": orders.card_ref().extra["cardrefid"],
        "source-card-ref-id": orders.card_ref().extra["cardrefid"],
    }
    answer = gateway.post(op, gateway.with_control(op, fields))
    assert answer.type == "async-response", answer.describe()
    status = final(orders, Order(fields["client_orderid"], answer["paynet-order-id"], answer))
    assert status["status"] == "approved", status.describe()
    assert balance(simulator) == BALANCE


# --- 6 and 7: hosted forms, transfer-form ------------------------------------------------------------------


def open_form(gateway: Gateway, orders: Orders, name: str, **extra: str) -> tuple[Order, str]:
    """The form operation with exactly its mandatory fields (and ``extra``): the order and its page address."""
    op = wire(name)
    answer = gateway.post(op, gateway.with_control(op, {**minimal(op, orders), **extra}))
    assert (answer.http_status, answer.type) == (200, "async-form-response"), answer.describe()
    assert answer["redirect-url"].startswith("http"), answer.describe()
    return Order(answer["merchant-order-id"], answer["paynet-order-id"], answer), answer["redirect-url"]


def page_form(html: str) -> tuple[str, dict[str, str]]:
    """The action and the named inputs of the page's (first) form."""
    found = re.search(r'<form[^>]*\saction="([^"]*)"', html)
    assert found, html[:600]
    return unescape(found.group(1)), form_inputs(html)


def pay(session: requests.Session, url: str, **changes: str) -> requests.Response:
    """The payer opens the page and sends what it asks for, typed as ``PAYER_TYPES`` (``changes`` win)."""
    page = session.get(url, timeout=10)
    assert page.status_code == 200, page.text[:600]
    action, inputs = page_form(page.text)
    typed = {name: {**PAYER_TYPES, **changes}.get(name, value) for name, value in inputs.items()}
    return session.post(urljoin(url, action), data=typed, timeout=10)


@pytest.mark.parametrize("name", FORMS)
def test_a_form_without_redirect_url_ends_on_the_gateways_result_page(
    gateway: Gateway, orders: Orders, name: str
) -> None:
    order, url = open_form(gateway, orders, name)
    assert "redirect_url" not in minimal(wire(name), orders)
    with requests.Session() as browser:
        result = pay(browser, url)
    assert result.status_code == 200, result.text[:600]
    assert not re.search(r"<form\b", result.text), f"the result page sends the payer on: {result.text[:600]}"
    assert order.orderid in result.text and re.search(r"\b(approved|processing)\b", result.text), result.text[:600]
    status = final(orders, order)
    assert status["status"] == "approved", status.describe()


def test_a_transfer_form_asks_for_the_source_and_the_destination_card(gateway: Gateway, orders: Orders) -> None:
    order, url = open_form(gateway, orders, "transfer-form", redirect_url=SAMPLE["redirect_url"])
    with requests.Session() as browser:
        _, inputs = page_form(browser.get(url, timeout=10).text)
        assert set(PAYER_TYPES) <= set(inputs), f"the transfer page asks for {sorted(inputs)}"
        back = pay(browser, url)
    assert back.status_code == 200, back.text[:600]
    action, sent = page_form(back.text)
    assert action == SAMPLE["redirect_url"], back.text[:600]
    expected = independent.control([sent["status"], sent["orderid"], sent["client_orderid"]], CONTROL_KEY)
    assert (sent["orderid"], sent["client_orderid"], sent["control"]) == (
        order.orderid,
        order.client_orderid,
        expected,
    ), sent  # behaviour 5: control = SHA-1(status + orderid + client_orderid + key)
    status = final(orders, order)
    assert (status["status"], status["transaction-type"], status["amount"]) == ("approved", "transfer", "10.00")
    assert status.fields.get("last-four-digits") == SAMPLE["credit_card_number"][-4:], status.describe()


def test_a_transfer_page_without_a_destination_card_says_so(gateway: Gateway, orders: Orders) -> None:
    order, url = open_form(gateway, orders, "transfer-form")
    with requests.Session() as browser:
        refused = pay(browser, url, **{"destination-card-no": ""})
        assert refused.status_code == 200 and "destination-card-no" in form_inputs(refused.text), refused.text[:600]
        assert re.search(r"receive[^<]*is required", refused.text, re.IGNORECASE), refused.text[:2000]
        wrong = pay(browser, url, **{"destination-card-no": DESTINATION[:-1] + "2"})
        assert re.search(r"fails the Luhn check", wrong.text), wrong.text[:2000]
    assert orders.status(order)["status"] == "processing"  # still waiting for the payer
