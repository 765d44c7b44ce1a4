"""The operations of behaviour section 11 through the client: make-rebill-sale, make-rebill-preauth (a hold
that capture, void and return treat as a preauth), transfer-by-ref (v2 and v4), the v4 one-step payout; the
v4 transfer and card-eligibility send with real card references; stored cards that expired on the clock.

Two merchants share the simulator, so that another merchant's card reference can be tried.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from decimal import Decimal

import pytest

from toolkit import demo
from toolkit.client import GatewayClient
from toolkit.config import GatewayConfig
from toolkit.errors import InvalidRequestError, ValidationError
from toolkit.masking import Secret
from toolkit.models import AsyncResponse, Status, StatusResponse
from toolkit.money import from_minor_units
from toolkit.simcontrol import SimulatorControl
from toolkit.simulator import SimulatorServer
from toolkit.simulator.rules import payouts
from toolkit.simulator.settings import Merchant, SimulatorSettings, demo_merchant
from toolkit.testdata import (
    EXAMPLE_CARDS,
    Card,
    amount_for,
    card_for,
    deposit_fields,
    payout_fields,
    rebill_fields,
    recurring_fields,
    sale_fields,
    transfer_by_ref_fields,
    transfer_fields,
)

GLOBEX = Merchant(
    login="globex",
    control_key=Secret("GLOBEX-CONTROL-KEY"),
    endpoint_ids=("51500",),
    rsa_public_key=demo_merchant().rsa_public_key,
)
EXPIRED = ("54", "Expired card")
DAY = 86400


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatorServer]:
    with SimulatorServer(SimulatorSettings(merchants=(demo_merchant(), GLOBEX))) as running:
        yield running


@pytest.fixture(autouse=True)
def control(server: SimulatorServer) -> Iterator[SimulatorControl]:
    """Every test starts from a reset simulator (some move its clock)."""
    with server.control() as running:
        running.reset()
        yield running


@pytest.fixture(scope="module")
def globex(server: SimulatorServer) -> Iterator[GatewayClient]:
    config = GatewayConfig(
        base_url=server.base_url,
        login=GLOBEX.login,
        control_key=GLOBEX.control_key,
        endpoint_id="51500",
        _private_key_pem=demo.private_key_pem(),
    )
    with GatewayClient(config) as client:
        yield client


def decided(client: GatewayClient, ack: AsyncResponse) -> StatusResponse:
    return client.wait_for_status(ack, until=lambda r: r.status is not Status.PROCESSING)


def stored_card(client: GatewayClient, card: Card | None = None) -> str:
    """A card reference made from an approved sale of ``card`` (default: an approving test card)."""
    sale = client.wait_for_final_status(client.sale(sale_fields(card=card or card_for("approved"))))
    assert sale.status is Status.APPROVED, sale
    return client.create_card_ref(client_orderid=sale.client_orderid, orderid=sale.orderid).card_ref_id


def expiring_this_month(server: SimulatorServer) -> Card:
    """An approving card whose last valid month is the simulator's current month."""
    today = time.gmtime(server.app.state.clock.now())
    return Card(EXAMPLE_CARDS[1], f"{today.tm_mon:02d}", str(today.tm_year), "123", "EXPIRING SOON")


def after_expiry(control: SimulatorControl) -> None:
    """Move the simulator's clock past the end of this month (and the next): the card has expired."""
    control.advance_clock(62 * DAY)


# --- make-rebill-sale and make-rebill-preauth -------------------------------------------------------


@pytest.mark.parametrize("outcome", ["approved", "insufficient-funds"])
def test_make_rebill_sale_charges_the_stored_card(client: GatewayClient, outcome: str) -> None:
    ack = client.make_rebill_sale(rebill_fields(stored_card(client), outcome, operation="make_rebill_sale"))
    status = decided(client, ack)
    assert (status.status, status.transaction_type, status.amount) == (
        Status.APPROVED if outcome == "approved" else Status.DECLINED,
        "rebill",
        amount_for(outcome),
    )


def test_make_rebill_preauth_leaves_a_hold_that_is_captured_in_part_then_returned(client: GatewayClient) -> None:
    fields = rebill_fields(stored_card(client), amount=Decimal("30.00"), operation="make_rebill_preauth")
    hold = client.wait_for_final_status(client.make_rebill_preauth(fields))
    assert (hold.status, hold.transaction_type, hold.amount) == (Status.APPROVED, "preauth", Decimal("30.00"))
    capture = client.capture(client_orderid=hold.client_orderid, orderid=hold.orderid, amount="12.50", currency="EUR")
    captured = client.wait_for_final_status(capture)
    assert (captured.status, captured.transaction_type, captured.amount) == (
        Status.APPROVED,
        "capture",
        Decimal("12.50"),
    )
    with pytest.raises(ValidationError, match=r"capture of 20\.00 EUR exceeds the 17\.50 EUR still available"):
        client.capture(client_orderid=hold.client_orderid, orderid=hold.orderid, amount="20.00", currency="EUR")
    refund = client.wait_for_final_status(
        client.return_(client_orderid=hold.client_orderid, orderid=hold.orderid, amount="12.50", currency="EUR")
    )
    assert (refund.status, refund.transaction_type) == (Status.APPROVED, "reversal")


def test_make_rebill_preauth_is_voided_or_cancelled_as_a_preauth(client: GatewayClient) -> None:
    voided = client.wait_for_final_status(
        client.make_rebill_preauth(rebill_fields(stored_card(client), operation="make_rebill_preauth"))
    )
    void = client.wait_for_final_status(
        client.void(client_orderid=voided.client_orderid, orderid=voided.orderid, comment="not shipped")
    )
    assert (void.status, void.transaction_type) == (Status.APPROVED, "void")
    cancelled = client.wait_for_final_status(
        client.make_rebill_preauth(rebill_fields(stored_card(client), operation="make_rebill_preauth"))
    )
    cancel = client.wait_for_final_status(
        client.return_(client_orderid=cancelled.client_orderid, orderid=cancelled.orderid)
    )
    assert (cancel.status, cancel.transaction_type) == (Status.APPROVED, "cancel")


# --- transfer-by-ref (v2) ---------------------------------------------------------------------------


@pytest.mark.parametrize("outcome", ["approved", "insufficient-funds", "unknown"])
def test_a_transfer_by_ref_moves_money_between_stored_cards(client: GatewayClient, outcome: str) -> None:
    source, destination = stored_card(client), stored_card(client, card_for("approved", number=EXAMPLE_CARDS[1]))
    status = decided(client, client.transfer_by_ref(transfer_by_ref_fields(destination, source, outcome)))
    expected = {"approved": Status.APPROVED, "insufficient-funds": Status.DECLINED, "unknown": Status.UNKNOWN}
    assert (status.status, status.transaction_type, status.card_ref_id) == (expected[outcome], "transfer", source)
    assert status.get("last-four-digits") == EXAMPLE_CARDS[0][-4:]  # the source card's


def test_a_transfer_by_ref_without_a_source_comes_from_the_merchant(client: GatewayClient) -> None:
    destination = stored_card(client, card_for("approved", number=EXAMPLE_CARDS[1]))
    status = decided(client, client.transfer_by_ref(transfer_by_ref_fields(destination)))
    assert (status.status, status.card_ref_id, status.get("last-four-digits")) == (
        Status.APPROVED,
        destination,
        EXAMPLE_CARDS[1][-4:],
    )


@pytest.mark.parametrize("field", ["destination-card-ref-id", "source-card-ref-id"])
def test_a_transfer_by_ref_refuses_an_unknown_or_foreign_card_reference(
    client: GatewayClient, globex: GatewayClient, field: str
) -> None:
    mine, theirs = stored_card(client), stored_card(globex)
    for wrong in ("99999999", theirs):
        fields = transfer_by_ref_fields(mine, mine, **{field.replace("-", "_"): wrong})
        with pytest.raises(ValidationError, match=rf"{field}: {wrong} is not a card reference of this merchant"):
            client.transfer_by_ref(fields)


# --- transfer (v4) and transfer-by-ref (v4): deposit to a card -------------------------------------


@pytest.mark.parametrize("outcome", ["approved", "insufficient-funds"])
def test_a_v4_transfer_takes_a_card_and_a_destination(client: GatewayClient, outcome: str) -> None:
    status = decided(client, client.transfer(transfer_fields(outcome)))
    assert (status.status, status.transaction_type, status.get("last-four-digits")) == (
        Status.APPROVED if outcome == "approved" else Status.DECLINED,
        "transfer",
        EXAMPLE_CARDS[0][-4:],
    )


def test_a_v4_transfer_with_no_card_data_is_refused_by_client_and_simulator(
    client: GatewayClient, server: SimulatorServer
) -> None:
    bare = {"client_orderid": "bare-transfer-1", "amount": "10.00", "currency": "EUR", "deposit2card": "true"}
    with pytest.raises(InvalidRequestError, match="transfer needs one of: credit_card_number"):
        client.transfer(bare)
    with GatewayClient(client.config, validate=False) as unchecked, pytest.raises(ValidationError) as refused:
        unchecked.transfer(bare)
    assert "credit_card_number: transfer needs one of: credit_card_number, card_recurring_payment_id" in str(
        refused.value
    )
    assert "destination-card-no: transfer needs one of" in str(refused.value)


def test_a_v4_transfer_from_another_merchants_stored_card_is_refused(
    client: GatewayClient, globex: GatewayClient
) -> None:
    fields = transfer_fields(source_ref=stored_card(globex))
    with pytest.raises(
        ValidationError, match=r"card_recurring_payment_id: \d+ is not a card reference of this merchant"
    ):
        client.transfer(fields)


def test_a_deposit_to_a_card_sends_client_order_id(client: GatewayClient) -> None:
    prepared = client.prepare("transfer_by_ref_v4", deposit_fields())
    assert "client-order-id" in dict(prepared.fields) and "client_orderid" not in dict(prepared.fields)
    status = decided(client, client.transfer_by_ref_v4(deposit_fields("insufficient-funds")))
    assert (status.status, status.transaction_type) == (Status.DECLINED, "transfer")


def balance(server: SimulatorServer) -> int:
    return payouts.balance(server.app.state.engine, demo.LOGIN)


# --- deposits spend the payout balance (behaviour section 12) ---------------------------------------


def deposit(client: GatewayClient, version: str, amount: Decimal, currency: str = "EUR") -> AsyncResponse:
    """A deposit from the merchant: the v2 transfer-by-ref without a source, or the v4 transfer-by-ref."""
    if version == "v2":
        destination = stored_card(client, card_for("approved", number=EXAMPLE_CARDS[1]))
        return client.transfer_by_ref(transfer_by_ref_fields(destination, amount=amount, currency=currency))
    return client.transfer_by_ref_v4(deposit_fields(amount=amount, currency=currency))


@pytest.mark.parametrize("version", ["v2", "v4"])
def test_a_deposit_is_paid_from_the_payout_balance(
    server: SimulatorServer, client: GatewayClient, version: str
) -> None:
    before = balance(server)
    status = client.wait_for_final_status(deposit(client, version, Decimal("25.00")))
    assert (status.status, status.transaction_type) == (Status.APPROVED, "transfer")
    assert balance(server) == before - 2500
    too_much = from_minor_units(balance(server) + 100, "EUR")  # ends in 00: the amount rule would approve it
    declined = client.wait_for_final_status(deposit(client, version, too_much))
    assert (declined.status, declined.get("error-message")) == (
        Status.DECLINED,
        f"Insufficient funds: deposit {too_much} EUR exceeds the balance {from_minor_units(before - 2500, 'EUR')} EUR",
    )
    assert balance(server) == before - 2500


@pytest.mark.parametrize("version", ["v2", "v4"])
def test_a_deposit_in_another_currency_than_the_balance_is_refused(client: GatewayClient, version: str) -> None:
    with pytest.raises(ValidationError, match="currency USD differs from the payout balance currency EUR"):
        deposit(client, version, Decimal("5.00"), "USD")


def test_a_declined_deposit_gives_its_hold_back_when_forced(
    server: SimulatorServer, client: GatewayClient, control: SimulatorControl
) -> None:
    """The amount is held when the deposit is planned; a status forced to declined gives it back, once."""
    before = balance(server)
    status = client.wait_for_final_status(deposit(client, "v4", Decimal("30.00")))
    assert balance(server) == before - 3000
    control.force_status(status.orderid, "declined", "05", "forced")
    assert balance(server) == before


# --- payout (v4, one step) --------------------------------------------------------------------------


def test_a_v4_payout_to_a_card_is_paid_from_the_balance(server: SimulatorServer, client: GatewayClient) -> None:
    before = balance(server)
    status = client.wait_for_final_status(client.payout_v4(payout_fields(operation="payout_v4")))
    assert (status.status, status.transaction_type, status.amount) == (
        Status.APPROVED,
        "payout",
        amount_for("approved"),
    )
    assert balance(server) == before - int(amount_for("approved") * 100)


def test_a_v4_payout_to_a_bank_account_needs_every_bank_field(client: GatewayClient) -> None:
    bank = {"account_number": "DE89370400440532013000", "bank_name": "Acme Bank", "bank_branch": "Main"}
    bank.update(bank_province="Berlin", bank_city="Berlin")
    fields = payout_fields(operation="payout_v4", credit_card_number=None, expire_month=None, expire_year=None)
    fields.pop("card_printed_name", None)
    status = client.wait_for_final_status(client.payout_v4({**fields, **bank}))
    assert status.status is Status.APPROVED and not status.last_four_digits
    with pytest.raises(InvalidRequestError, match="bank_city: goes together with account_number"):
        client.payout_v4({**fields, **{k: v for k, v in bank.items() if k != "bank_city"}})


# --- card-eligibility send ----------------------------------------------------------------------------


def test_a_card_eligibility_send_checks_a_stored_card(client: GatewayClient, globex: GatewayClient) -> None:
    mine = stored_card(client)
    ack = client.pan_eligibility_send(client_order_id="eligible-1", sending_card_ref_id=mine)
    status = client.wait_for_final_status(ack)
    assert (status.status, status.transaction_type, status.card_ref_id) == (Status.APPROVED, "pan-eligibility", mine)
    for wrong in ("7654321", stored_card(globex)):
        with pytest.raises(ValidationError, match=f"sending-card-ref-id: {wrong} is not a card reference"):
            client.pan_eligibility_send(client_order_id=f"eligible-{wrong}", sending_card_ref_id=wrong)


# --- stored cards that expired on the simulator's clock ----------------------------------------------


def test_an_expired_stored_card_is_declined_like_a_direct_sale(
    server: SimulatorServer, client: GatewayClient, control: SimulatorControl
) -> None:
    card = expiring_this_month(server)
    ref, other = stored_card(client, card), stored_card(client)
    after_expiry(control)
    direct = client.wait_for_final_status(client.sale(sale_fields(card=card)))
    assert (direct.status, direct.get("error-code"), direct.get("error-message")) == (Status.DECLINED, *EXPIRED)
    charges = {
        name: client.call(name, rebill_fields(ref, operation=name))
        for name in ("make_rebill", "make_rebill_sale", "make_rebill_preauth")
    }
    charges["transfer_by_ref (source)"] = client.transfer_by_ref(transfer_by_ref_fields(other, ref))
    charges["transfer_by_ref (destination)"] = client.transfer_by_ref(transfer_by_ref_fields(ref, other))
    charges["transfer (v4)"] = client.transfer(transfer_fields(source_ref=ref))
    charges["pan_eligibility_send"] = client.pan_eligibility_send(client_order_id="exp-1", sending_card_ref_id=ref)
    for name, ack in charges.items():
        status = client.wait_for_final_status(ack)
        assert (status.status, status.get("error-code"), status.get("error-message")) == (
            Status.DECLINED,
            *EXPIRED,
        ), name
    still = client.wait_for_final_status(client.make_rebill(rebill_fields(other)))  # a valid card still charges
    assert still.status is Status.APPROVED


def test_a_recurring_charge_of_a_card_that_expired_is_declined(
    server: SimulatorServer, client: GatewayClient, control: SimulatorControl
) -> None:
    ref = stored_card(client, expiring_this_month(server))
    fields = recurring_fields(ref, period="month", interval=1)
    client.create_recurring_payment(fields)
    first = client.wait_for_final_status(client_orderid=f"{fields['client_orderid']}-1")  # charged at once
    assert first.status is Status.APPROVED  # the card is still valid this month
    after_expiry(control)  # the next charges fall after the expiry
    second = client.wait_for_final_status(client_orderid=f"{fields['client_orderid']}-2")
    assert (second.status, second.get("error-code"), second.get("error-message")) == (Status.DECLINED, *EXPIRED)
