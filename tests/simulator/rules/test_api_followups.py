"""Capture, void, return and chargeback through the client: the money rules of spec section 3 on one order.

A follow-up names the order by its ``orderid`` and the original's ``client_orderid``; its own
transaction keeps that orderid and is followed by its serial-number (``by-request-sn``); the
order's status is that of its latest transaction (behaviour section 10).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from decimal import Decimal

import pytest

from toolkit.client import GatewayClient
from toolkit.errors import ValidationError
from toolkit.models import Status, StatusResponse
from toolkit.simcontrol import SimulatorControl, SimulatorControlError
from toolkit.simulator import SimulatorServer, default_settings
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
    """capture/void/return of ``parent``'s order (partial with ``amount``): the final status of that request."""
    money = {"amount": Decimal(amount), "currency": "EUR"} if amount else {}
    comment = {"comment": "test"} if operation == "void" else {}
    ack = client.call(operation, ids(parent), **money, **comment)
    assert (ack.orderid, ack.client_orderid) == (parent.orderid, parent.client_orderid)  # the same order
    assert ack.serial_number and ack.serial_number != parent.serial_number
    return client.wait_for_final_status(ack)  # by its serial-number


def refused(
    client: GatewayClient, operation: str, parent: StatusResponse, match: str, amount: str | None = None
) -> None:
    with pytest.raises(ValidationError, match=match) as caught:
        follow_up(client, operation, parent, amount)
    assert caught.value.http_status == 400


def order_status(client: GatewayClient, parent: StatusResponse) -> StatusResponse:
    """``status`` of the order without ``by-request-sn``: its latest transaction."""
    return client.status(ids(parent))


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
    with pytest.raises(ValidationError, match="currency: USD differs from the order's EUR"):
        client.capture(ids(preauth), amount=Decimal("1.00"), currency="USD")


@pytest.mark.parametrize(
    ("operation", "outcome", "match"),
    [
        ("sale", "approved", "cannot capture a sale .*; capture applies to preauth"),
        ("preauth", "insufficient-funds", "its preauth is declined, not a final approved one"),
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
    assert order_status(client, parent).transaction_type == "void"
    refused(client, "void", parent, f"cannot void orderid {parent.orderid}: it was voided")
    refused(client, "return", parent, "it was voided")


def test_a_voided_capture_gives_its_amount_back_to_the_preauth(client: GatewayClient) -> None:
    preauth = order(client, "preauth", "approved")
    follow_up(client, "capture", preauth, "3.00")
    voided = follow_up(client, "void", preauth)  # the order's latest capture
    assert (voided.transaction_type, voided.amount) == ("void", Decimal("3.00"))
    captured = follow_up(client, "capture", preauth, "10.00")
    assert (captured.status, captured.amount) == (Status.APPROVED, TEN)


def test_a_voided_sale_never_settles(client: GatewayClient, control: SimulatorControl) -> None:
    sale = order(client)
    follow_up(client, "void", sale)
    control.advance_clock(10 * 86400)
    assert not control.order(sale.orderid)["transactions"][0]["settled"]
    assert control.settle(sale.orderid) == 0


def test_void_after_settlement_is_refused_and_return_is_the_way(server: SimulatorServer, client: GatewayClient) -> None:
    sale = order(client)
    with server.control() as control:
        assert control.settle(sale.orderid) == 1
    refused(client, "void", sale, f"cannot void orderid {sale.orderid}: it is already settled; use return")
    assert follow_up(client, "return", sale).status is Status.APPROVED


def test_void_has_no_partial_amount(client: GatewayClient) -> None:
    sale = order(client)
    with pytest.raises(ValidationError, match=r"amount: void does not support a partial amount \(spec section 3"):
        client.call("void", ids(sale), comment="x", amount=Decimal("1.00"), currency="EUR", validate=False)


def test_a_sale_with_a_reversal_cannot_be_voided(client: GatewayClient) -> None:
    sale = order(client)
    follow_up(client, "return", sale, "1.00")
    refused(client, "void", sale, "it has reversals or chargebacks; use return")


# --- return ----------------------------------------------------------------------------------------


def test_a_return_without_amount_is_a_full_reversal(client: GatewayClient) -> None:
    sale = order(client)
    returned = follow_up(client, "return", sale)
    assert (returned.status, returned.transaction_type, returned.amount) == (Status.APPROVED, "reversal", TEN)
    refused(client, "return", sale, f"nothing left to return on orderid {sale.orderid}")


def test_partial_returns_never_exceed_what_was_charged(client: GatewayClient) -> None:
    sale = order(client)
    refused(client, "return", sale, "return of 10.01 EUR exceeds the 10.00 EUR still available", "10.01")
    assert follow_up(client, "return", sale, "3.00").amount == Decimal("3.00")
    refused(client, "return", sale, "return of 7.01 EUR exceeds the 7.00 EUR still available", "7.01")
    assert follow_up(client, "return", sale, "7.00").amount == Decimal("7.00")
    refused(client, "return", sale, "return of 0.01 EUR exceeds the 0.00 EUR still available", "0.01")


def test_the_order_status_is_its_latest_transaction_and_a_request_keeps_its_own(client: GatewayClient) -> None:
    ack = client.sale(sale_fields(amount=TEN))
    sale = client.wait_for_final_status(ack)
    follow_up(client, "return", sale, "2.50")
    latest = order_status(client, sale)
    assert (latest.transaction_type, latest.amount, latest.orderid) == ("reversal", Decimal("2.50"), sale.orderid)
    first = client.status(ids(sale), by_request_sn=ack.serial_number)
    assert (first.transaction_type, first.amount, first.status) == ("sale", TEN, Status.APPROVED)


def test_a_status_by_an_unknown_request_is_refused(client: GatewayClient) -> None:
    sale = order(client)
    with pytest.raises(ValidationError, match=f"by-request-sn: no request nope on orderid {sale.orderid}"):
        client.status(ids(sale), by_request_sn="nope")


def test_a_return_of_an_uncaptured_preauth_cancels_the_whole_hold(client: GatewayClient) -> None:
    preauth = order(client, "preauth")
    refused(client, "return", preauth, "a preauth with nothing captured is cancelled as a whole", "4.00")
    cancelled = follow_up(client, "return", preauth)
    assert (cancelled.status, cancelled.transaction_type, cancelled.amount) == (Status.APPROVED, "cancel", TEN)
    refused(client, "capture", preauth, f"cannot capture orderid {preauth.orderid}: its preauth was cancelled")


def test_what_was_captured_is_reversed(client: GatewayClient) -> None:
    preauth = order(client, "preauth")
    follow_up(client, "capture", preauth, "2.50")
    refused(client, "return", preauth, "return of 2.51 EUR exceeds the 2.50 EUR still available", "2.51")
    refund = follow_up(client, "return", preauth, "2.50")
    assert (refund.status, refund.transaction_type) == (Status.APPROVED, "reversal")


def test_return_needs_a_final_approved_transaction(client: GatewayClient) -> None:
    refused(client, "return", order(client, outcome="insufficient-funds"), "its sale is declined, not a final approved")
    pending = client.sale(sale_fields(card=card_for("3ds-challenge")))  # waits for the payer: processing
    with pytest.raises(ValidationError, match="its sale is processing, not a final approved one"):
        client.return_(client_orderid=pending.client_orderid, orderid=pending.orderid)


def test_a_follow_up_of_an_unknown_orderid_is_refused(client: GatewayClient, fresh_id) -> None:
    with pytest.raises(ValidationError, match="orderid 1 is unknown for this merchant"):
        client.return_(client_orderid=fresh_id(), orderid="1")


def test_a_follow_up_with_another_orders_client_orderid_is_refused(client: GatewayClient) -> None:
    sale, other = order(client), order(client)
    with pytest.raises(ValidationError, match=f"client_orderid: {other.client_orderid} is not the client_orderid of"):
        client.return_(client_orderid=other.client_orderid, orderid=sale.orderid)


# --- chargeback ------------------------------------------------------------------------------------


def test_a_chargeback_counts_against_what_may_still_be_returned(
    client: GatewayClient, control: SimulatorControl
) -> None:
    sale = order(client)
    back = control.chargeback(sale, Decimal("4.00"))
    assert (back["kind"], back["status"], back["amount"], back["orderid"]) == (
        "chargeback",
        "approved",
        "4.00",
        sale.orderid,
    )
    latest = order_status(client, sale)
    assert (latest.transaction_type, latest.status, latest.amount) == ("chargeback", Status.APPROVED, Decimal("4.00"))
    refused(client, "return", sale, "return of 6.01 EUR exceeds the 6.00 EUR still available", "6.01")
    assert follow_up(client, "return", sale).amount == Decimal("6.00")
    with pytest.raises(SimulatorControlError, match=r"does not fit the 0\.00 EUR still charged"):
        control.chargeback(sale)


def test_nothing_charged_cannot_be_charged_back(client: GatewayClient, control: SimulatorControl) -> None:
    preauth = order(client, "preauth")
    with pytest.raises(SimulatorControlError, match=r"does not fit the 0\.00 EUR still charged"):
        control.chargeback(preauth.orderid)


# --- what is left after a failed follow-up, and blank fields -------------------------------------------


def test_a_failed_void_leaves_the_order_open(client: GatewayClient, control: SimulatorControl) -> None:
    preauth = order(client, "preauth")
    follow_up(client, "void", preauth)
    control.force_status(preauth.orderid, "filtered")  # the order's latest: a void that did not go through
    captured = follow_up(client, "capture", preauth)
    assert (captured.status, captured.amount) == (Status.APPROVED, TEN)


@pytest.mark.parametrize(
    ("operation", "blank", "kind"),
    [
        ("capture", {"amount": "", "currency": ""}, "capture"),
        ("return", {"amount": " ", "currency": ""}, "cancel"),
        ("void", {"amount": "", "comment": "blank amount"}, "void"),
    ],
    ids=["capture", "return", "void"],
)
def test_a_blank_amount_is_no_amount(
    client: GatewayClient, post, with_control, operation: str, blank: dict[str, str], kind: str
) -> None:
    """The gateway ignores blanks: ``amount=`` is the whole amount, not a partial one of nothing."""
    preauth = order(client, "preauth")
    answer = post(
        f"/api/v2/{operation}/1001", with_control(operation, {"login": "gatekit-demo", **ids(preauth), **blank})
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["paynet-order-id"] == preauth.orderid
    child = client.status(ids(preauth), by_request_sn=answer.json()["serial-number"])
    assert (child.status, child.transaction_type, child.amount) == (Status.APPROVED, kind, TEN)


# --- a lenient simulator -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lenient() -> Iterator[SimulatorServer]:
    with SimulatorServer(dataclasses.replace(default_settings(), lenient=True)) as running:
        yield running


def test_a_lenient_simulator_takes_another_client_orderid_with_a_warning(lenient: SimulatorServer) -> None:
    with GatewayClient(lenient.client_config()) as client, lenient.control() as control:
        sale, other = order(client), order(client)
        assert client.return_(client_orderid=other.client_orderid, orderid=sale.orderid).orderid == sale.orderid
        warnings = control.journal(limit=1)[0]["warnings"]
        assert any("is not the client_orderid of orderid" in w and "(lenient: accepted)" in w for w in warnings)


@pytest.mark.parametrize(("signed", "accepted"), [("10.00", True), ("9.99", False)], ids=["order's", "another"])
def test_a_capture_signing_an_amount_it_does_not_send(
    client: GatewayClient, post, with_control, signed: str, accepted: bool
) -> None:
    """The family's PHP library signs the order's amount and currency on a full capture without sending
    them: taken, with a journal warning; any other amount signed that way is a control mismatch."""
    preauth = order(client, "preauth")
    fields = {"login": "gatekit-demo", **ids(preauth)}
    control = with_control("capture", {**fields, "amount": signed, "currency": "EUR"})["control"]
    answer = post("/api/v2/capture/1001", {**fields, "control": control})
    assert (answer.status_code == 200) is accepted, answer.text
    if not accepted:
        assert answer.json()["error-message"].startswith("control mismatch: capture expects")
