"""The Node port (PredokMiF/node-payneteasy) against the strict simulator, legacy form and JSON.

The port only has preauth-form, capture, return, status, create-card-ref and make-rebill(-preauth).
Its preauth goes through the hosted form, so the approved orders it captures, returns and tokenises
are made by hand-built requests (tests/wire/orders.py) as another system of the merchant would.
"""

from __future__ import annotations

import time

import pytest

from tests.interop.node_library import NodeEndpoint, NodeLibrary
from tests.interop.transport import Transport
from tests.wire.gateway import CONTROL_KEY, ENDPOINT_ID, LOGIN
from tests.wire.orders import FINAL, SAMPLE, Orders, new_id
from toolkit.simulator import SimulatorServer


@pytest.fixture
def node(node_transport: Transport, simulator: SimulatorServer) -> NodeLibrary:
    return NodeLibrary(node_transport, simulator.base_url, NodeEndpoint(ENDPOINT_ID, LOGIN, CONTROL_KEY))


def final_status(node: NodeLibrary, client_orderid: str, orderid: str, timeout: float = 10.0) -> dict[str, str]:
    deadline = time.monotonic() + timeout
    while True:
        answer = node.status(client_orderid, orderid)
        if answer.get("status") in FINAL:
            return answer
        assert time.monotonic() < deadline, f"no final status within {timeout} s: {answer}"
        time.sleep(0.02)


def sent(node: NodeLibrary) -> list[tuple[str, str]]:
    return node.transport.sent[-1][1]


def test_a_preauth_through_the_hosted_form(node: NodeLibrary) -> None:
    order = {
        "client_orderid": new_id("node"),
        "amount": 10,
        "currency": "EUR",
        "order_desc": "Node test order",
        "first_name": "John",
        "last_name": "Smith",
        "email": SAMPLE["email"],
        "phone": SAMPLE["phone"],
        "country": SAMPLE["country"],
        "city": SAMPLE["city"],
        "zip_code": SAMPLE["zip_code"],
        "address1": SAMPLE["address1"],
        "ipaddress": SAMPLE["ipaddress"],
        "redirect_url": SAMPLE["redirect_url"],
        "state": "",  # the port sends only non-empty strings: this one stays out
    }
    answer = node.preauth_form(order)
    body = dict(sent(node))
    assert answer["redirect-url"] and answer["merchant-order-id"] == order["client_orderid"]
    assert body["amount"] == "10" and "state" not in body and sent(node)[-1][0] == "control"


def test_a_preauth_is_captured_with_amount_and_currency(node: NodeLibrary, orders: Orders) -> None:
    preauth = orders.approved("preauth")
    answer = node.capture(preauth.client_orderid, preauth.orderid, 10.0, "EUR")
    assert answer["merchant-order-id"] == preauth.client_orderid
    status = final_status(node, preauth.client_orderid, answer["paynet-order-id"])
    assert status["status"] == "approved" and status.get("transaction-type") == "capture", status


def test_a_sale_is_partly_returned(node: NodeLibrary, orders: Orders) -> None:
    sale = orders.approved()
    answer = node.return_(sale.client_orderid, sale.orderid, 4.5, "EUR", "node return")
    assert dict(sent(node))["amount"] == "4.5"
    status = final_status(node, sale.client_orderid, answer["paynet-order-id"])
    assert status["status"] == "approved" and status.get("amount") == "4.50", status


def test_a_card_is_registered_and_rebilled(node: NodeLibrary, orders: Orders) -> None:
    sale = orders.approved()
    card = node.register_card(sale.client_orderid, sale.orderid)["card-ref-id"]
    rebill = {
        "client_orderid": new_id("node"),
        "amount": 7,
        "currency": "EUR",
        "order_desc": "Node rebill",
        "comment": "",
        "cardrefid": card,
        "ipaddress": SAMPLE["ipaddress"],
    }
    answer = node.make_rebill(rebill)  # the port's own path: make-rebill-preauth, a hold
    hold = final_status(node, rebill["client_orderid"], answer["paynet-order-id"])
    assert (hold["status"], hold.get("transaction-type"), hold.get("amount")) == ("approved", "preauth", "7.00"), hold
    captured = node.capture(rebill["client_orderid"], answer["paynet-order-id"], 7.0, "EUR")
    status = final_status(node, rebill["client_orderid"], captured["paynet-order-id"])
    assert (status["status"], status.get("transaction-type")) == ("approved", "capture"), status
