"""Typed responses: parsed fields beside the raw mapping; statuses; Decimal money."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

from toolkit.models import (
    FINAL_STATUSES,
    RESPONSE_MODELS,
    AsyncResponse,
    CardInfoResponse,
    CardRefResponse,
    FormResponse,
    RecurringPaymentResponse,
    Status,
    StatusResponse,
)
from toolkit.operations import ResponseKind

SERIAL = "7f6f6d9c-6b41-4d55-9a3a-1b2c3d4e5f60"


def test_async_response_reads_hyphenated_wire_names():
    raw = {
        "type": "async-response",
        "serial-number": SERIAL,
        "paynet-order-id": "8056020",
        "merchant-order-id": "inv-1",
        "end-point-id": "1001",
        "extra": "kept",
    }
    ack = AsyncResponse.from_mapping(raw)
    assert (ack.kind, ack.serial_number, ack.orderid, ack.client_orderid, ack.end_point_id) == (
        "async-response",
        SERIAL,
        "8056020",
        "inv-1",
        "1001",
    )
    assert ack.raw == raw and ack.get("extra") == "kept" and ack.get("missing", "-") == "-"
    assert "extra" not in repr(ack)  # raw stays out of the repr


def test_form_response_carries_the_redirect_address():
    form = FormResponse.from_mapping({"type": "async-form-response", "redirect-url": "https://gw.example/form/1"})
    assert form.redirect_url == "https://gw.example/form/1"
    assert form.orderid == ""


def test_status_response_parses_status_amount_and_card_fields():
    status = StatusResponse.from_mapping(
        {
            "type": "status-response",
            "status": "Approved",
            "amount": "10.42",
            "currency": "EUR",
            "transaction-type": "sale",
            "bin": "444455",
            "last-four-digits": "1111",
            "card-exp-month": "12",
        }
    )
    assert status.status is Status.APPROVED and status.is_final
    assert status.amount == Decimal("10.42") and isinstance(status.amount, Decimal)
    assert (status.transaction_type, status.bin, status.last_four_digits, status.card_exp_month) == (
        "sale",
        "444455",
        "1111",
        "12",
    )


@pytest.mark.parametrize(
    ("value", "status", "final"),
    [
        ("approved", Status.APPROVED, True),
        ("DECLINED", Status.DECLINED, True),
        ("filtered", Status.FILTERED, True),
        ("error", Status.ERROR, True),
        ("processing", Status.PROCESSING, False),
        ("unknown", Status.UNKNOWN, False),
        ("something-new", Status.UNKNOWN, False),
        ("", Status.UNKNOWN, False),
    ],
    ids=["approved", "upper case", "filtered", "error", "processing", "unknown", "unheard of", "missing"],
)
def test_status_values_and_finality(value, status, final):
    parsed = StatusResponse.from_mapping({"status": value})
    assert parsed.status is status
    assert parsed.is_final is final
    assert (status in FINAL_STATUSES) is final


@pytest.mark.parametrize(
    ("raw", "needs_payer"),
    [
        ({"status": "processing", "html": "<form></form>"}, True),
        ({"status": "processing", "redirect-to": "https://acs.example"}, True),
        ({"status": "processing"}, False),
        ({"status": "approved", "html": "<p>done</p>"}, False),
    ],
    ids=["html", "redirect-to", "nothing to do", "final"],
)
def test_needs_payer(raw, needs_payer):
    assert StatusResponse.from_mapping(raw).needs_payer is needs_payer


def test_bad_amount_becomes_none_not_an_exception():
    assert StatusResponse.from_mapping({"amount": "ten"}).amount is None
    assert StatusResponse.from_mapping({}).amount is None


def test_card_ref_card_info_and_recurring_responses():
    card_ref = CardRefResponse.from_mapping({"card-ref-id": "1679215", "status": "approved"})
    assert (card_ref.card_ref_id, card_ref.status) == ("1679215", Status.APPROVED)
    info = CardInfoResponse.from_mapping(
        {"card-ref-id": "1", "bin": "444455", "last-four-digits": "1111", "expire-month": "12", "expire-year": "2099"}
    )
    assert (info.card_ref_id, info.bin, info.masked_pan) == ("1", "444455", "444455******1111")
    assert (info.expire_month, info.expire_year, info.missing) == ("12", "2099", ("card-printed-name",))
    recurring = RecurringPaymentResponse.from_mapping({"recurring-payment-id": "rp-9", "merchant-order-id": "inv-1"})
    assert (recurring.recurring_payment_id, recurring.client_orderid) == ("rp-9", "inv-1")


def test_every_response_kind_has_a_model():
    assert set(RESPONSE_MODELS) == set(ResponseKind)


def test_responses_are_frozen():
    ack = AsyncResponse.from_mapping({"paynet-order-id": "1"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        ack.orderid = "2"  # type: ignore[misc]
