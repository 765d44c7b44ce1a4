"""Payouts through the client (spec 4.4): v2 HMAC-signed payout, the v4 two-step check and pay,
the merchant's payout balance (transfers and card-eligibility sends: ``test_api_transfers.py``).
"""

from __future__ import annotations

import pytest

from toolkit import demo
from toolkit.client import GatewayClient
from toolkit.errors import ValidationError
from toolkit.models import AsyncResponse, Status, StatusResponse
from toolkit.money import from_minor_units
from toolkit.simcontrol import SimulatorControl
from toolkit.simulator import SimulatorServer
from toolkit.simulator.rules import payouts
from toolkit.testdata import amount_for, payout_fields, random_card_number

AMOUNT_OUTCOMES = {"approved": Status.APPROVED, "insufficient-funds": Status.DECLINED, "unknown": Status.UNKNOWN}
AMOUNT_IDS = [f"{amount_for(o)} {o}" for o in AMOUNT_OUTCOMES]


def balance(server: SimulatorServer) -> int:
    """The demo merchant's payout balance in minor units."""
    return payouts.balance(server.app.state.engine, demo.LOGIN)


def decided(client: GatewayClient, ack: AsyncResponse) -> StatusResponse:
    """The status once it is not ``processing`` (``unknown`` is all the simulator will say for 17)."""
    return client.wait_for_status(ack, until=lambda r: r.status is not Status.PROCESSING)


@pytest.mark.parametrize("outcome", AMOUNT_OUTCOMES, ids=AMOUNT_IDS)
def test_a_payout_is_paid_from_the_balance_and_the_amount_chooses(
    server: SimulatorServer, client: GatewayClient, outcome: str
) -> None:
    before = balance(server)
    status = decided(client, client.payout(payout_fields(outcome)))
    assert (status.status, status.transaction_type, status.amount) == (
        AMOUNT_OUTCOMES[outcome],
        "payout",
        amount_for(outcome),
    )
    paid = 0 if outcome == "insufficient-funds" else int(amount_for(outcome) * 100)  # unknown: still reserved
    assert balance(server) == before - paid


def test_a_payout_above_the_balance_is_declined(server: SimulatorServer, client: GatewayClient) -> None:
    before = balance(server)
    too_much = from_minor_units(before + 100, "EUR")  # ends in 00: the amount rule would approve it
    status = client.wait_for_final_status(client.payout(payout_fields(amount=too_much)))
    assert status.status is Status.DECLINED
    assert status.get("error-message") == (
        f"Insufficient funds: payout {too_much} EUR exceeds the balance {from_minor_units(before, 'EUR')} EUR"
    )
    assert balance(server) == before


def test_a_payout_that_would_end_unknown_cannot_overdraw_either(server: SimulatorServer, client: GatewayClient) -> None:
    before = balance(server)
    too_much = from_minor_units(before + 117, "EUR")  # ends in 17: unknown, and would be reserved
    assert client.wait_for_final_status(client.payout(payout_fields(amount=too_much))).status is Status.DECLINED
    assert balance(server) == before


def test_a_payout_in_another_currency_than_the_balance_is_refused(client: GatewayClient) -> None:
    with pytest.raises(ValidationError, match="currency USD differs from the payout balance currency EUR"):
        client.payout(payout_fields(currency="USD"))


def test_a_payout_needs_a_destination(unchecked: GatewayClient) -> None:
    fields = payout_fields(credit_card_number=None, card_printed_name=None, expire_month=None, expire_year=None)
    with pytest.raises(ValidationError, match="credit_card_number: payout needs one of: credit_card_number, "):
        unchecked.payout(fields)


@pytest.mark.parametrize(
    "destination",
    [{"destination_card_no": random_card_number()}, {"account_number": "DE89370400440532013000"}],
    ids=["destination card", "bank account"],
)
def test_a_payout_to_other_destinations(client: GatewayClient, destination: dict[str, str]) -> None:
    fields = payout_fields(credit_card_number=None, card_printed_name=None, expire_month=None, expire_year=None)
    ack = client.payout({**fields, **destination})
    assert client.wait_for_final_status(ack).status is Status.APPROVED


def test_a_payout_by_endpoint_group(client: GatewayClient) -> None:
    ack = client.payout(payout_fields(), use_group=True)
    assert ack.end_point_id == demo.ENDPOINT_ID
    assert client.wait_for_final_status(ack).status is Status.APPROVED


# --- v4: check, then pay -----------------------------------------------------------------------------


def checked(client: GatewayClient, outcome: str = "approved") -> StatusResponse:
    return decided(client, client.payout_check(payout_fields(outcome, operation="payout_check")))


def pay(client: GatewayClient, check: StatusResponse) -> AsyncResponse:
    return client.payout_pay(client_orderid=check.client_orderid, orderid=check.orderid)


def test_check_registers_without_moving_funds_then_pay_executes(server: SimulatorServer, client: GatewayClient) -> None:
    before = balance(server)
    check = checked(client)
    assert (check.status, check.transaction_type) == (Status.APPROVED, "payout-check")
    assert balance(server) == before
    paid = client.wait_for_final_status(pay(client, check))
    assert (paid.status, paid.transaction_type, paid.amount) == (Status.APPROVED, "payout-pay", check.amount)
    assert paid.orderid == check.orderid  # payout-pay is a transaction of the check's order
    assert balance(server) == before - int((check.amount or 0) * 100)


def test_a_check_is_paid_once(client: GatewayClient) -> None:
    check = checked(client)
    first = pay(client, check)
    with pytest.raises(
        ValidationError, match=rf"this payout-check was already paid \(by request {first.serial_number}\)"
    ):
        pay(client, check)


def test_pay_needs_a_payout_check(client: GatewayClient) -> None:
    payout = client.wait_for_final_status(client.payout(payout_fields()))
    with pytest.raises(
        ValidationError, match=f"needs the orderid of a payout-check; orderid {payout.orderid} is a payout"
    ):
        pay(client, payout)


@pytest.mark.parametrize(("outcome", "status"), [("insufficient-funds", "declined"), ("unknown", "unknown")])
def test_pay_needs_an_approved_check(client: GatewayClient, outcome: str, status: str) -> None:
    check = checked(client, outcome)
    with pytest.raises(ValidationError, match=f"payout-check orderid {check.orderid} is {status}, not approved"):
        pay(client, check)


def test_a_check_above_the_balance_is_declined(server: SimulatorServer, client: GatewayClient) -> None:
    too_much = from_minor_units(balance(server) + 100, "EUR")
    check = decided(client, client.payout_check(payout_fields(amount=too_much, operation="payout_check")))
    assert (check.status, check.get("error-code")) == (Status.DECLINED, "51")


# --- forced statuses (control API) and the balance ---------------------------------------------------


def test_a_forced_status_moves_a_held_payout_once(
    server: SimulatorServer, client: GatewayClient, control: SimulatorControl
) -> None:
    before = balance(server)
    status = client.wait_for_final_status(client.payout(payout_fields()))
    amount = int((status.amount or 0) * 100)
    steps = [("declined", before), ("error", before), ("filtered", before), ("approved", before - amount)]
    for forced, expected in steps:
        control.force_status(status.orderid, forced)
        assert balance(server) == expected, f"after forcing {forced}"


def test_a_payout_declined_when_planned_moves_nothing_when_forced(
    server: SimulatorServer, client: GatewayClient, control: SimulatorControl
) -> None:
    before = balance(server)
    status = client.wait_for_final_status(client.payout(payout_fields("insufficient-funds")))
    for forced in ("error", "approved", "declined"):
        control.force_status(status.orderid, forced)
        assert balance(server) == before, f"after forcing {forced}"
