"""The merchant's side of the flows (toolkit.flows) against the simulator: waiting, preconditions, errors."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest

from toolkit import demo
from toolkit.callbacks import CallbackReceiver
from toolkit.client import GatewayClient
from toolkit.flows import FlowError, Merchant
from toolkit.models import Status
from toolkit.simulator import SimulatorServer
from toolkit.testdata import card_for


@pytest.fixture(scope="module")
def merchant() -> Iterator[Merchant]:
    with (
        SimulatorServer() as server,
        CallbackReceiver(demo.CONTROL_KEY) as receiver,
        GatewayClient(server.client_config()) as client,
    ):
        yield Merchant(client, receiver, callback_url=receiver.callback_url)


def test_approved_status_returns_the_approved_status(merchant: Merchant) -> None:
    order = merchant.pay("sale", card_for("approved"), Decimal("4.00"))

    assert merchant.approved_status(order).status is Status.APPROVED


def test_approved_status_says_what_the_order_is_and_why(merchant: Merchant) -> None:
    order = merchant.pay("sale", card_for("insufficient-funds"), Decimal("4.00"))

    with pytest.raises(FlowError, match=rf"orderid={order.orderid}.* is declined, not approved: Insufficient funds"):
        merchant.approved_status(order)


def test_current_status_stops_where_the_payer_must_act(merchant: Merchant) -> None:
    order = merchant.pay("sale", card_for("3ds-challenge"), Decimal("4.00"))

    status = merchant.current_status(order)

    assert status.needs_payer and not status.is_final, status.raw


def test_a_merchant_without_a_receiver_cannot_see_the_payer_come_back(merchant: Merchant) -> None:
    order = merchant.pay("sale", card_for("approved"), Decimal("4.00"))
    blind = Merchant(merchant.client)

    with pytest.raises(FlowError, match=rf"orderid={order.orderid}.*no callback receiver"):
        blind.redirect_for(order)
