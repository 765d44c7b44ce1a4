"""Card references, card info, rebills and recurring payments through the client (spec 4.3).

Card-less charges (rebill, recurring) take their outcome from the amount: minor units ending in
13 decline, in 17 end ``unknown`` (``toolkit.testdata.outcomes.AMOUNT_RULES``).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from toolkit.client import GatewayClient
from toolkit.errors import ValidationError
from toolkit.models import Status, StatusResponse
from toolkit.simulator.rules import cards
from toolkit.testdata import (
    EXAMPLE_CARDS,
    amount_for,
    card_for,
    preauth_fields,
    rebill_fields,
    recurring_fields,
    sale_fields,
    verification_fields,
)

PAN = EXAMPLE_CARDS[0]
ORDERS = {"sale": sale_fields, "preauth": preauth_fields, "account_verification": verification_fields}
AMOUNT_OUTCOMES = {"approved": Status.APPROVED, "insufficient-funds": Status.DECLINED, "unknown": Status.UNKNOWN}


def approved(client: GatewayClient, operation: str = "sale") -> StatusResponse:
    fields = ORDERS[operation](card=card_for("approved", number=PAN))
    status = client.wait_for_final_status(client.call(operation, fields))
    assert status.status is Status.APPROVED
    return status


def card_ref(client: GatewayClient, operation: str = "sale") -> str:
    source = approved(client, operation)
    return client.create_card_ref(client_orderid=source.client_orderid, orderid=source.orderid).card_ref_id


def settled_on(client: GatewayClient, client_orderid: str) -> StatusResponse:
    """The status of a card-less charge once decided (``unknown`` counts: it is all the simulator will say)."""
    return client.wait_for_status(client_orderid=client_orderid, until=lambda r: r.status is not Status.PROCESSING)


@pytest.mark.parametrize("operation", ORDERS, ids=ORDERS)
def test_a_card_reference_comes_from_a_final_approved_transaction(client: GatewayClient, operation: str) -> None:
    source = approved(client, operation)
    reference = client.create_card_ref(client_orderid=source.client_orderid, orderid=source.orderid)
    assert reference.kind == "create-card-ref-response" and reference.card_ref_id.isdigit()
    assert (reference.status, reference.orderid) == (Status.APPROVED, source.orderid)
    again = client.create_card_ref(client_orderid=source.client_orderid, orderid=source.orderid)
    assert again.card_ref_id == reference.card_ref_id


def test_a_card_reference_by_the_v4_operation(client: GatewayClient) -> None:
    source = approved(client)
    reference = client.create_card_ref_v4(client_orderid=source.client_orderid, orderid=source.orderid)
    assert reference.card_ref_id.isdigit() and reference.status is Status.APPROVED


@pytest.mark.parametrize(
    ("outcome", "match"),
    [("insufficient-funds", "is a sale with status declined"), ("3ds-challenge", "is a sale with status processing")],
    ids=["declined", "processing"],
)
def test_no_card_reference_from_a_transaction_that_is_not_final_approved(
    client: GatewayClient, outcome: str, match: str
) -> None:
    ack = client.sale(sale_fields(card=card_for(outcome)))
    client.wait_for_status(ack, until=lambda r: r.is_final or r.needs_payer)
    with pytest.raises(ValidationError, match=f"a card reference needs a final approved card transaction; .*{match}"):
        client.create_card_ref(client_orderid=ack.client_orderid, orderid=ack.orderid)


def test_a_captured_preauth_still_names_its_card(client: GatewayClient) -> None:
    preauth = approved(client, "preauth")
    capture = client.capture(client_orderid=preauth.client_orderid, orderid=preauth.orderid)
    assert capture.orderid == preauth.orderid  # a capture is a transaction of the preauth's order
    ref = client.create_card_ref(client_orderid=preauth.client_orderid, orderid=preauth.orderid)
    assert client.get_card_info(cardrefid=ref.card_ref_id).last_four_digits == PAN[-4:]


def test_card_info_answers_the_gateways_fields(client: GatewayClient) -> None:
    """``get-card-info-response``: card-printed-name, bin, last-four-digits, expire-year, expire-month (section 10)."""
    cardrefid = card_ref(client)
    info = client.get_card_info(cardrefid=cardrefid)
    card = card_for("approved", number=PAN)
    assert (info.kind, info.card_ref_id, info.bin, info.last_four_digits) == (
        "get-card-info-response",
        cardrefid,
        PAN[:6],
        PAN[-4:],
    )
    assert (info.card_printed_name, info.expire_month, info.expire_year) == (
        card.holder,
        card.expire_month,
        card.expire_year,
    )
    assert (info.masked_pan, info.card_type, info.missing) == (f"{PAN[:6]}******{PAN[-4:]}", "VISA", ())
    assert not any(PAN in value for value in info.raw.values())


@pytest.mark.parametrize("operation", ["get_card_info", "make_rebill", "create_recurring_payment"])
def test_an_unknown_cardrefid_is_refused(client: GatewayClient, operation: str) -> None:
    fields = {
        "get_card_info": {"cardrefid": "1"},
        "make_rebill": rebill_fields("1"),
        "create_recurring_payment": recurring_fields("1"),
    }[operation]
    with pytest.raises(ValidationError, match="cardrefid: 1 is not a card reference of this merchant") as caught:
        client.call(operation, fields)
    assert caught.value.error_code == "3"


@pytest.mark.parametrize("outcome", AMOUNT_OUTCOMES, ids=[f"{amount_for(o)} {o}" for o in AMOUNT_OUTCOMES])
def test_a_rebill_charges_the_stored_card_and_the_amount_chooses(client: GatewayClient, outcome: str) -> None:
    cardrefid = card_ref(client)
    ack = client.make_rebill(rebill_fields(cardrefid, outcome))
    status = settled_on(client, ack.client_orderid)
    assert (status.status, status.transaction_type, status.card_ref_id) == (
        AMOUNT_OUTCOMES[outcome],
        "rebill",
        cardrefid,
    )
    assert (status.bin, status.last_four_digits, status.amount) == (PAN[:6], PAN[-4:], amount_for(outcome))


def test_a_rebill_by_endpoint_group(client: GatewayClient) -> None:
    ack = client.make_rebill(rebill_fields(card_ref(client)), use_group=True)
    assert ack.end_point_id == "1001"
    assert client.wait_for_final_status(ack).status is Status.APPROVED


@pytest.mark.parametrize("outcome", AMOUNT_OUTCOMES, ids=[f"{amount_for(o)} {o}" for o in AMOUNT_OUTCOMES])
def test_a_recurring_payment_is_created_and_charged_at_once(client: GatewayClient, outcome: str) -> None:
    fields = recurring_fields(card_ref(client), outcome, period="week", interval=2)
    created = client.create_recurring_payment(fields)
    assert created.kind == "create-recurring-payment-response" and created.recurring_payment_id.isdigit()
    assert created.client_orderid == fields["client_orderid"]
    charge = settled_on(client, f"{fields['client_orderid']}-1")
    assert (charge.status, charge.transaction_type, charge.amount) == (
        AMOUNT_OUTCOMES[outcome],
        "recurring-charge",
        amount_for(outcome),
    )


def test_a_recurring_payment_starting_later_charges_nothing_yet(client: GatewayClient) -> None:
    fields = recurring_fields(card_ref(client), start_date="2999-01-01", amount=Decimal("5.00"))
    assert client.create_recurring_payment(fields).recurring_payment_id
    with pytest.raises(ValidationError, match="no order with client_orderid"):
        client.status(client_orderid=f"{fields['client_orderid']}-1")


@pytest.mark.parametrize(("period", "interval"), [("year", 8000), ("month", 96000), ("day", 2**31 - 1)])
def test_a_recurring_schedule_beyond_the_calendar_is_refused(client: GatewayClient, period: str, interval: int) -> None:
    """A charge after year 9999 cannot be computed: refused at creation, instead of failing every tick."""
    fields = recurring_fields(card_ref(client), period=period, interval=interval)
    with pytest.raises(ValidationError, match=f"interval: {interval} {period}s after the first charge is beyond"):
        client.create_recurring_payment(fields)


@pytest.mark.parametrize(("period", "interval"), [("year", 1), ("month", 12), ("week", 60), ("day", 400)])
def test_a_schedule_ends_at_the_end_of_the_calendar(period: str, interval: int) -> None:
    last_year = dt.datetime(dt.MAXYEAR, 6, 1, tzinfo=dt.UTC).timestamp()
    assert cards.next_charge(last_year, period, interval) is None
    assert cards.next_charge(last_year - 2 * 366 * 86400, period, interval) is not None


def test_a_rebill_with_a_zero_among_its_amounts_is_refused_naming_the_field(client: GatewayClient) -> None:
    """Found by the fuzzer (enumerate_amounts=0 was a 500): the client and the simulator both refuse it."""
    import requests

    from toolkit.errors import InvalidRequestError
    from toolkit.operations import get_operation
    from toolkit.signing import control_for

    fields = {"client_orderid": "rb-0", "cardrefid": "1", "amount": "10.00", "currency": "EUR",
              "login": client.config.login, "enumerate_amounts": "0"}  # fmt: skip
    with pytest.raises(InvalidRequestError, match="enumerate_amounts: each amount must be more than 0"):
        client.call("make_rebill", fields)
    operation = get_operation("make_rebill")
    config = client.config
    key = config.control_key.reveal() if hasattr(config.control_key, "reveal") else str(config.control_key)
    control = control_for(operation, fields, endpoint_id=str(config.endpoint_id), login=config.login, control_key=key)
    signed = {**fields, "control": control}
    answer = requests.post(f"{client.config.base_url}/api/v2/make-rebill/{client.config.endpoint_id}", data=signed,
                           headers={"Accept": "application/vnd.pay+json"}, timeout=10)  # fmt: skip
    assert answer.status_code == 400 and answer.json()["type"] == "validation-error", answer.text
    assert "enumerate_amounts" in answer.json()["error-message"], answer.text
