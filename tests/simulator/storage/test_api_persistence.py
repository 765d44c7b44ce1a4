"""State in a file database survives a restart of the simulator: orders, card references,
payout balances and used OAuth nonces.  In memory, nothing does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path

import pytest

from toolkit import demo
from toolkit.client import GatewayClient
from toolkit.errors import AuthenticationError, ValidationError
from toolkit.models import Status
from toolkit.simulator import SimulatorServer
from toolkit.simulator.rules import payouts
from toolkit.testdata import payout_fields, rebill_fields, sale_fields


@contextmanager
def running(db: str | Path, **client_options: Callable[[], str]) -> Iterator[tuple[SimulatorServer, GatewayClient]]:
    with SimulatorServer(db=db) as server, GatewayClient(server.client_config(), **client_options) as client:
        yield server, client


def test_an_acknowledged_sale_survives_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "sim.db"
    with running(db) as (_, client):
        ack = client.sale(sale_fields())
    with running(db) as (_, client):
        status = client.status(client_orderid=ack.client_orderid)
        assert (status.orderid, status.status, status.amount) == (ack.orderid, Status.APPROVED, Decimal("10.42"))
        assert int(client.sale(sale_fields()).orderid) == int(ack.orderid) + 1  # ids are never reused


def test_card_references_and_balances_survive_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "sim.db"
    with running(db) as (server, client):
        sale = client.wait_for_final_status(client.sale(sale_fields()))
        cardrefid = client.create_card_ref(client_orderid=sale.client_orderid, orderid=sale.orderid).card_ref_id
        client.wait_for_final_status(client.payout(payout_fields(amount=Decimal("100.00"))))
        balance = payouts.balance(server.app.state.engine, demo.LOGIN)
    with running(db) as (server, client):
        assert payouts.balance(server.app.state.engine, demo.LOGIN) == balance == 1_000_000 - 10_000
        rebill = client.wait_for_final_status(client.make_rebill(rebill_fields(cardrefid)))
        assert (rebill.status, rebill.card_ref_id) == (Status.APPROVED, cardrefid)


def test_a_used_nonce_is_remembered_across_a_restart(tmp_path: Path, fresh_id) -> None:
    db, nonce = tmp_path / "sim.db", f"fixed-{fresh_id()}"
    with running(db, nonce=lambda: nonce) as (_, client):
        client.payout(payout_fields())
    with running(db, nonce=lambda: nonce) as (_, client), pytest.raises(AuthenticationError, match="already used"):
        client.payout(payout_fields())


def test_an_in_memory_simulator_forgets_at_a_restart() -> None:
    with running(":memory:") as (_, client):
        ack = client.sale(sale_fields())
    with running(":memory:") as (_, client), pytest.raises(ValidationError, match="no order with client_orderid"):
        client.status(client_orderid=ack.client_orderid)
