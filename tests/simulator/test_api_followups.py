"""Capture, void and return through the client: the money rules of spec section 3."""

from __future__ import annotations

from decimal import Decimal

import pytest

from toolkit.client import GatewayClient
from toolkit.errors import ValidationError
from toolkit.models import Status, StatusResponse
from toolkit.simcontrol import SimulatorControl
from toolkit.simulator import SimulatorServer
from toolkit.testdata import card_for, preauth_fields, sale_fields

TEN = Decimal("10.00")


def order(client: GatewayClient, operation: str = "sale", outcome: str = "approved") -> StatusResponse:
    """A sale or preauth of 10.00 EUR, decided."""
    build = sale_fields if operation == "sale" else preauth_fields
    status = client.wait_for_final_status(client.call(operation, build(amount=TEN, card=card_for(outcome))))
    assert status.status is (Status.APPROVED if outcome == "approved" else Status.DECLINED)
    return status


def ids(status: StatusResponse) -> dict[str, str]:
    return {"client_orderid": status.client_orderid, "orderid": status.orderid}


def follow_up(
    client: GatewayClient, operation: str, parent: StatusResponse, amount: str | None = None
) -> StatusResponse:
    """capture/void/return of ``parent`` (partial when ``amount`` is given); returns the child's final status."""
    money = {"amount": Decimal(amount), "currency": "EUR"} if amount else {}
    ack = client.call(operation, ids(parent), **money)
    assert ack.orderid != parent.orderid
    status = client.wait_for_final_status(ack)
    assert status.get("original-paynet-order-id") == parent.orderid
    return status


def refused(
    client: GatewayClient, operation: str, parent: StatusResponse, match: str, amount: str | None = None
) -> None:
    with pytest.raises(ValidationError, match=match) as caught:
        follow_up(client, operation, parent, amount)
    assert caught.value.http_status == 400


# --- capture ---------------------------------------------------------------------------------------


def test_a_capture_without_amount_settles_the_whole_preauth(client: GatewayClient) -> None:
    captured = follow_up(client, "capture", order(client, "preauth"))
    assert (captured.status, captured.transaction_type, captured.amount) == (Status.APPROVED, "capture", TEN)


def test_partial_captures_up_to_the_authorized_amount(client: GatewayClient) -> None:
    preauth = order(client, "preauth")
    amounts = [follow_up(client, "capture", preauth, amount).amount for amount in ("4.00", "5.99", "0.01")]
    assert amounts == [Decimal("4.00"), Decimal("5.99"), Decimal("0.01")]
    refused(client, "capture", preauth, "capture of 0.01 EUR exceeds the 0.00 EUR still available", "0.01")
    refused(client, "capture", preauth, f"nothing left to capture on orderid {preauth.orderid}")


def test_a_capture_above_the_authorized_amount_is_refused(client: GatewayClient) -> None:
    preauth = order(client, "preauth")
    message = f"capture of 10.01 EUR exceeds the 10.00 EUR still available on orderid {preauth.orderid}"
    refused(client, "capture", preauth, message, "10.01")


def test_a_capture_in_another_currency_is_refused(client: GatewayClient) -> None:
    preauth = order(client, "preauth")
    with pytest.raises(ValidationError, match="currency USD differs from the original EUR"):
        client.capture(ids(preauth), amount=Decimal("1.00"), currency="USD")


@pytest.mark.parametrize(
    ("operation", "outcome", "match"),
    [
        ("sale", "approved", "cannot capture a sale .*; capture applies to preauth"),
        ("preauth", "insufficient-funds", "its status is declined, not a final approved one"),
    ],
    ids=["of a sale", "of a declined preauth"],
)
def test_capture_applies_only_to_an_approved_preauth(
    client: GatewayClient, operation: str, outcome: str, match: str
) -> None:
    refused(client, "capture", order(client, operation, outcome), match)


# --- void ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("operation", ["sale", "preauth"])
def test_void_cancels_an_authorized_unsettled_transaction(client: GatewayClient, operation: str) -> None:
    parent = order(client, operation)
    voided = follow_up(client, "void", parent)
    assert (voided.status, voided.transaction_type) == (Status.APPROVED, "void")
    refused(client, "void", parent, f"cannot void orderid {parent.orderid}: it was voided")
    refused(client, "return", parent, "it was voided")


def test_void_after_settlement_is_refused_and_return_is_the_way(server: SimulatorServer, client: GatewayClient) -> None:
    sale = order(client)
    with server.control() as control:
        assert control.settle(sale.orderid) == 1
    refused(client, "void", sale, f"cannot void orderid {sale.orderid}: it is already settled; use return")
    assert follow_up(client, "return", sale).status is Status.APPROVED


def test_void_has_no_partial_amount(client: GatewayClient) -> None:
    sale = order(client)
    with pytest.raises(ValidationError, match=r"amount: void does not support a partial amount \(spec section 3"):
        client.void(ids(sale), amount=Decimal("1.00"), currency="EUR")


def test_a_preauth_with_a_capture_cannot_be_voided(client: GatewayClient) -> None:
    preauth = order(client, "preauth")
    follow_up(client, "capture", preauth, "1.00")
    refused(client, "void", preauth, "it has captures or returns")


# --- return ----------------------------------------------------------------------------------------


def test_a_return_without_amount_is_a_full_reversal(client: GatewayClient) -> None:
    sale = order(client)
    returned = follow_up(client, "return", sale)
    assert (returned.status, returned.transaction_type, returned.amount) == (Status.APPROVED, "return", TEN)
    refused(client, "return", sale, f"nothing left to return on orderid {sale.orderid}")


def test_partial_returns_never_exceed_what_was_charged(client: GatewayClient) -> None:
    sale = order(client)
    refused(client, "return", sale, "return of 10.01 EUR exceeds the 10.00 EUR still available", "10.01")
    assert follow_up(client, "return", sale, "3.00").amount == Decimal("3.00")
    refused(client, "return", sale, "return of 7.01 EUR exceeds the 7.00 EUR still available", "7.01")
    assert follow_up(client, "return", sale, "7.00").amount == Decimal("7.00")
    refused(client, "return", sale, "return of 0.01 EUR exceeds the 0.00 EUR still available", "0.01")


def test_a_return_of_a_preauth_releases_the_hold(client: GatewayClient) -> None:
    preauth = order(client, "preauth")
    released = follow_up(client, "return", preauth)
    assert (released.status, released.transaction_type, released.amount) == (Status.APPROVED, "reversal", TEN)
    refused(client, "capture", preauth, f"nothing left to capture on orderid {preauth.orderid}")


def test_a_partial_release_leaves_the_rest_to_capture(client: GatewayClient) -> None:
    preauth = order(client, "preauth")
    assert follow_up(client, "return", preauth, "4.00").transaction_type == "reversal"
    refused(client, "capture", preauth, "capture of 6.01 EUR exceeds the 6.00 EUR still available", "6.01")
    assert follow_up(client, "capture", preauth).amount == Decimal("6.00")


def test_a_capture_can_be_refunded(client: GatewayClient) -> None:
    capture = follow_up(client, "capture", order(client, "preauth"), "2.50")
    refund = follow_up(client, "return", capture, "2.50")
    assert (refund.status, refund.transaction_type) == (Status.APPROVED, "return")


def test_return_needs_a_final_approved_transaction(client: GatewayClient) -> None:
    refused(client, "return", order(client, outcome="expired-card"), "its status is declined, not a final approved")
    pending = client.sale(sale_fields(card=card_for("3ds-challenge")))  # waits for the payer: processing
    with pytest.raises(ValidationError, match="its status is processing, not a final approved one"):
        client.return_(client_orderid=pending.client_orderid, orderid=pending.orderid)


def test_a_follow_up_of_an_unknown_orderid_is_refused(client: GatewayClient, fresh_id) -> None:
    with pytest.raises(ValidationError, match="orderid 1 is unknown for this merchant"):
        client.return_(client_orderid=fresh_id(), orderid="1")


# --- what is left after a failed follow-up, and blank fields -------------------------------------------


def test_a_failed_void_leaves_the_order_open(client: GatewayClient, control: SimulatorControl) -> None:
    preauth = order(client, "preauth")
    void = follow_up(client, "void", preauth)
    control.force_status(void.orderid, "filtered")  # a void that did not go through holds nothing back
    captured = follow_up(client, "capture", preauth)
    assert (captured.status, captured.amount) == (Status.APPROVED, TEN)


@pytest.mark.parametrize(
    ("operation", "blank", "kind"),
    [
        ("capture", {"amount": "", "currency": ""}, "capture"),
        ("return", {"amount": " ", "currency": ""}, "reversal"),
        ("void", {"amount": ""}, "void"),
    ],
    ids=["capture", "return", "void"],
)
def test_a_blank_amount_is_no_amount(
    client: GatewayClient, post, with_control, operation: str, blank: dict[str, str], kind: str
) -> None:
    """The gateway ignores blanks: ``amount=`` is the whole amount, not a partial one of nothing."""
    preauth = order(client, "preauth")
    answer = post(f"/api/v2/{operation}/1001", with_control(operation, {**ids(preauth), **blank}))
    assert answer.status_code == 200, answer.text
    child = client.wait_for_final_status(
        client_orderid=preauth.client_orderid, orderid=answer.json()["paynet-order-id"]
    )
    assert (child.status, child.transaction_type, child.amount) == (Status.APPROVED, kind, TEN)
