"""Card payments through the client: sale, preauth, verification, hosted forms, status, 3-D Secure uploads.

The outcome comes from the sandbox table (``toolkit.testdata.outcomes``): CVV2 for card payments,
the amount for 3-D Secure 1.0.2 test cards.  The payer's 3-D Secure steps are played in-process
with the simulator's ACS functions (the pages have their own tests); the merchant's uploads go
through the client like every other operation.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from toolkit.client import GatewayClient
from toolkit.errors import ValidationError
from toolkit.models import AsyncResponse, FormResponse, Status, StatusResponse
from toolkit.simulator import SimulatorServer
from toolkit.simulator.rules import threeds
from toolkit.testdata import (
    CARD_OUTCOMES,
    CHALLENGE_PASSWORD,
    EXAMPLE_CARDS,
    FORM_OPERATIONS,
    GENERIC_DECLINE,
    THREE_DS_V1_AMOUNTS,
    CardOutcome,
    card_for,
    form_fields,
    preauth_fields,
    sale_fields,
    three_ds_v1_card,
    verification_fields,
)

PAN = EXAMPLE_CARDS[0]
ORDERS = {"sale": sale_fields, "preauth": preauth_fields, "account_verification": verification_fields}
# operation -> (transaction-type, order-stage once approved)
KINDS = {
    "sale": ("sale", "sale_approved"),
    "preauth": ("preauth", "auth_approved"),
    "account_verification": ("account-verification", "verify_approved"),
}


def until_payer_or_decided(response: StatusResponse) -> bool:
    return response.is_final or response.needs_payer or response.status is Status.UNKNOWN


def play_payer(server: SimulatorServer, client: GatewayClient, ack: AsyncResponse, password: str) -> StatusResponse:
    """Report each 3-D Secure step the status asks for, as merchant and payer would, until it is decided."""
    engine = server.app.state.engine
    ids = {"client_orderid": ack.client_orderid, "orderid": ack.orderid}
    status = client.wait_for_status(ack, until=until_payer_or_decided)
    while status.needs_payer:
        token = status.redirect_to.rsplit("/", 1)[-1]
        if status.get("three-ds-method-url"):
            client.upload_method_url_result(ids, threeDSCompInd="U")
        elif "/3ds/v2/acs/" in status.redirect_to:
            client.upload_cres_result(ids, cres=threeds.challenge_cres(engine, token, password)[1])
        elif "/3ds/v1/acs/" in status.redirect_to:
            client.upload_pares_result(ids, pares=threeds.v1_pares(engine, token)[1])
        else:
            pytest.fail(f"unexpected payer action in {status.raw}")
        status = client.wait_for_status(ack, until=until_payer_or_decided)
    return status


@pytest.mark.parametrize("operation", ORDERS, ids=ORDERS)
def test_a_card_payment_is_acknowledged_then_approved(client: GatewayClient, operation: str) -> None:
    fields = ORDERS[operation]()
    ack = client.call(operation, fields)
    assert isinstance(ack, AsyncResponse)
    assert ack.orderid.isdigit() and ack.client_orderid == fields["client_orderid"]
    assert ack.kind == "async-response" and ack.serial_number
    status = client.wait_for_final_status(ack)
    assert (status.status, (status.transaction_type, status.order_stage)) == (Status.APPROVED, KINDS[operation])


def test_the_status_shows_amount_and_masked_card_never_the_pan(client: GatewayClient) -> None:
    ack = client.sale(sale_fields(amount=Decimal("25.50"), currency="USD", card=card_for("approved", number=PAN)))
    status = client.wait_for_final_status(ack)
    assert (status.amount, status.currency) == (Decimal("25.50"), "USD")
    assert (status.bin, status.last_four_digits, status.card_type) == (PAN[:6], PAN[-4:], "VISA")
    assert status.card_exp_month and status.card_exp_year and status.cardholder_name and status.descriptor
    assert not any(PAN in value for value in status.raw.values())


def test_status_by_client_orderid_alone(client: GatewayClient) -> None:
    ack = client.sale(sale_fields())
    status = client.status(client_orderid=ack.client_orderid)
    assert (status.orderid, status.client_orderid, status.status) == (ack.orderid, ack.client_orderid, Status.APPROVED)


def test_status_of_an_unknown_order_is_refused(client: GatewayClient, fresh_id) -> None:
    orderid = fresh_id()
    with pytest.raises(ValidationError, match=f"no order with client_orderid {orderid}") as caught:
        client.status(client_orderid=orderid)
    assert caught.value.http_status == 400 and caught.value.error_code == "3"


SANDBOX_TABLE = (*CARD_OUTCOMES, GENERIC_DECLINE)


@pytest.mark.parametrize("outcome", SANDBOX_TABLE, ids=[f"cvv2 {o.cvv2} {o.name}" for o in SANDBOX_TABLE])
def test_every_cvv2_of_the_sandbox_table_gives_its_status(
    server: SimulatorServer, client: GatewayClient, outcome: CardOutcome
) -> None:
    fields = sale_fields(card=card_for(outcome.name))
    assert fields["cvv2"] == outcome.cvv2
    status = play_payer(server, client, client.sale(fields), CHALLENGE_PASSWORD)
    assert status.status is outcome.status
    assert (status.get("error-code"), status.get("error-message")) == (outcome.error_code, outcome.error_message)


def test_a_wrong_challenge_password_declines(server: SimulatorServer, client: GatewayClient) -> None:
    ack = client.sale(sale_fields(card=card_for("3ds-challenge")))
    first = client.wait_for_status(ack, until=until_payer_or_decided)
    assert first.status is Status.PROCESSING and "three-ds-method-url" in first.raw and first.html
    status = play_payer(server, client, ack, "not-the-password")
    assert (status.status, status.get("error-message")) == (Status.DECLINED, "3-D Secure authentication failed")


@pytest.mark.parametrize(
    "amount", THREE_DS_V1_AMOUNTS, ids=[f"{a} {r.description}" for a, r in THREE_DS_V1_AMOUNTS.items()]
)
def test_three_ds_v1_amounts_choose_the_result(server: SimulatorServer, client: GatewayClient, amount: str) -> None:
    result = THREE_DS_V1_AMOUNTS[amount]
    ack = client.sale(sale_fields(amount=Decimal(amount), card=three_ds_v1_card()))
    first = client.wait_for_status(ack, until=until_payer_or_decided)
    assert first.needs_payer and "/3ds/v1/acs/" in first.redirect_to
    status = play_payer(server, client, ack, CHALLENGE_PASSWORD)
    assert status.status is (Status.APPROVED if result.authenticated else Status.DECLINED)
    assert status.get("three-ds-version") == "1.0.2"
    if result.authenticated:
        assert status.get("eci") == result.eci


@pytest.mark.parametrize(
    "cres", ["eyJ0cmFuc1N0YXR1cyI6IlkifQ.0000", "no-signature", "a.\u00e9"], ids=["forged", "unsigned", "not ascii"]
)
def test_a_forged_cres_is_refused(client: GatewayClient, cres: str) -> None:
    ack = client.sale(sale_fields(card=card_for("3ds-challenge")))
    ids = {"client_orderid": ack.client_orderid, "orderid": ack.orderid}
    client.upload_method_url_result(ids, threeDSCompInd="N")
    with pytest.raises(ValidationError, match="cres is not one issued by the simulator's ACS"):
        client.upload_cres_result(ids, cres=cres)


def test_a_3ds_upload_without_a_pending_step_is_refused(client: GatewayClient) -> None:
    ack = client.sale(sale_fields())
    with pytest.raises(ValidationError, match="no 3-D Secure method step is pending"):
        client.upload_method_url_result(client_orderid=ack.client_orderid, orderid=ack.orderid, threeDSCompInd="Y")


@pytest.mark.parametrize("operation", FORM_OPERATIONS, ids=FORM_OPERATIONS)
def test_a_hosted_form_answers_a_redirect_and_waits_for_the_payer(
    server: SimulatorServer, client: GatewayClient, operation: str
) -> None:
    form = client.call(operation, form_fields(operation))
    assert isinstance(form, FormResponse) and form.kind == "async-form-response"
    assert form.redirect_url.startswith(server.base_url + "/form/")
    status = client.status(client_orderid=form.client_orderid, orderid=form.orderid)
    assert (status.status, status.redirect_to) == (Status.PROCESSING, form.redirect_url)


GROUP_ORDERS = {
    "sale": sale_fields,
    "preauth": preauth_fields,
    "account_verification": verification_fields,
    **{name: (lambda name=name: form_fields(name)) for name in FORM_OPERATIONS},
}


@pytest.mark.parametrize("operation", GROUP_ORDERS, ids=GROUP_ORDERS)
def test_group_addressing_names_the_concrete_endpoint(
    server: SimulatorServer, client: GatewayClient, operation: str
) -> None:
    ack = client.call(operation, GROUP_ORDERS[operation](), use_group=True)
    assert isinstance(ack, AsyncResponse) and ack.end_point_id == "1001"
    status = client.status(client_orderid=ack.client_orderid, orderid=ack.orderid)
    assert status.orderid == ack.orderid and not status.end_point_id


def test_a_blank_amount_of_a_verification_is_no_amount(client: GatewayClient, post, with_control) -> None:
    """``amount=`` (the gateway ignores blanks) once made the engine fail with HTTP 500."""
    fields = {name: str(value) for name, value in verification_fields().items()}
    answer = post("/api/v2/account-verification/1001", with_control("account_verification", {**fields, "amount": ""}))
    assert answer.status_code == 200, answer.text
    status = client.wait_for_final_status(client_orderid=fields["client_orderid"])
    assert (status.status, status.transaction_type, status.amount) == (Status.APPROVED, "account-verification", None)


# --- a repeated client_orderid (the idempotency rule) ----------------------------------------------


def test_a_repeat_with_another_amount_is_refused_naming_the_order(client: GatewayClient) -> None:
    first = client.sale(sale_fields(amount=Decimal("10.00")))
    with pytest.raises(ValidationError) as caught:
        client.sale(sale_fields(amount=Decimal("11.00"), client_orderid=first.client_orderid))
    assert caught.value.error_message == (
        f"client_orderid: {first.client_orderid} already names orderid {first.orderid} (sale 10.00 EUR with card "
        "453897******6732, approved); a repeated request carries the same operation, card, amount and currency, "
        "a new order a new client_orderid"
    )


def test_a_repeat_with_another_card_is_refused_naming_the_order(client: GatewayClient) -> None:
    """Issue 19, #7: another card with a declining CVV2 was answered with the first card's approved order."""
    first = client.sale(sale_fields(amount=Decimal("10.00")))
    other = sale_fields("insufficient-funds", amount=Decimal("10.00"), client_orderid=first.client_orderid)
    other["credit_card_number"] = "4444555566661111"
    with pytest.raises(
        ValidationError, match=rf"client_orderid: another card: .* already names orderid {first.orderid}"
    ):
        client.sale(other)


def test_a_repeat_with_the_same_card_and_another_cvv2_is_the_same_order(client: GatewayClient) -> None:
    """A CVV2 is never kept: the same card, amount and currency again is a repeat, answered with its order."""
    first = client.sale(sale_fields(amount=Decimal("10.00")))
    again = client.sale(sale_fields("insufficient-funds", amount=Decimal("10.00"), client_orderid=first.client_orderid))
    assert again.orderid == first.orderid


def test_a_retry_after_a_decline_is_a_new_order(client: GatewayClient) -> None:
    declined = client.wait_for_final_status(client.sale(sale_fields("insufficient-funds")))
    retry = client.sale(sale_fields(client_orderid=declined.client_orderid))
    assert retry.orderid != declined.orderid
    assert client.wait_for_final_status(retry).status is Status.APPROVED
