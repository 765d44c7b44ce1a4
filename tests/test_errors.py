"""The exception tree and the one mapping from a gateway answer to an exception."""

from __future__ import annotations

import pytest

from toolkit.errors import (
    ApiError,
    AuthenticationError,
    GatewayError,
    InvalidRequestError,
    ProtocolError,
    ServerError,
    TransportError,
    ValidationError,
    WaitTimeout,
    error_from_response,
)
from toolkit.operations import get_operation
from toolkit.validation import Problem

SERIAL = "7f6f6d9c-6b41-4d55-9a3a-1b2c3d4e5f60"
SALE = get_operation("sale")


@pytest.mark.parametrize(
    ("status", "kind", "cls"),
    [
        (400, "validation-error", ValidationError),
        (401, "validation-error", AuthenticationError),
        (403, "", AuthenticationError),
        (500, "error", ServerError),
        (502, "", ServerError),
        (200, "validation-error", ValidationError),
        (200, "error", ServerError),
        (200, "Validation-Error", ValidationError),
        (404, "", ValidationError),
    ],
    ids=["400", "401", "403", "500", "502", "legacy validation", "legacy error", "type case", "other 4xx"],
)
def test_answers_map_to_one_exception_class(status, kind, cls):
    error = error_from_response(SALE, status, {"type": kind, "error-message": "x"})
    assert type(error) is cls
    assert isinstance(error, ApiError) and isinstance(error, GatewayError)
    assert error.http_status == status


@pytest.mark.parametrize(
    "kind", ["async-response", "status-response", "async-form-response", ""], ids=["async", "status", "form", "none"]
)
def test_a_200_that_is_not_an_error_is_a_success(kind):
    assert error_from_response(SALE, 200, {"type": kind}) is None


def test_message_names_operation_field_and_serial_number():
    body = {
        "type": "validation-error",
        "serial-number": SERIAL,
        "error-message": "amount must be positive",
        "error-code": 2,
    }
    error = error_from_response(SALE, 400, body)
    assert str(error) == f"sale: amount must be positive [serial-number {SERIAL}]"
    assert (error.operation, error.field, error.serial_number) == ("sale", "amount", SERIAL)
    assert (error.error_message, error.error_code) == ("amount must be positive", 2)
    assert error.response == body


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ("Invalid control", "control"),
        ("client_orderid and orderid do not match", "client_orderid"),
        ("orderid is unknown, client_orderid given", "orderid"),
        ("Signature invalid", None),
    ],
    ids=["control", "first of two", "orderid before client_orderid", "no field"],
)
def test_field_is_the_first_one_the_gateway_names(message, field):
    assert error_from_response(get_operation("capture"), 400, {"error-message": message}).field == field


def test_field_not_in_the_message_is_appended():
    error = GatewayError("must be positive", operation="sale", field="amount", serial_number=SERIAL)
    assert str(error) == f"sale: must be positive (field amount) [serial-number {SERIAL}]"


def test_an_error_without_a_message_says_status_and_type():
    assert str(error_from_response(SALE, 500, {})) == "sale: HTTP 500, type=missing"
    assert str(error_from_response(None, 500, {"type": "error"})) == "HTTP 500, type=error"


def test_card_numbers_in_gateway_messages_are_masked():
    error = error_from_response(SALE, 400, {"error-message": "credit_card_number 4444555566661111 refused, cvv2=123"})
    assert "4444555566661111" not in str(error) and "cvv2=123" not in str(error)
    assert "444455******1111" in str(error)


def test_invalid_request_names_every_problem_and_the_first_field():
    error = InvalidRequestError("sale", [Problem("amount", "must be positive"), Problem("email", "is required")])
    assert str(error) == "sale: request refused before sending: amount: must be positive; email: is required"
    assert error.field == "amount" and isinstance(error, ValueError)
    assert [p.field for p in error.problems] == ["amount", "email"]


def test_wait_timeout_keeps_its_attempts():
    error = WaitTimeout("order 1: no final status", operation="status", attempts=[1, 2])
    assert error.attempts == [1, 2] and str(error) == "status: order 1: no final status"


@pytest.mark.parametrize(
    "cls",
    [TransportError, ProtocolError, ApiError, ValidationError, AuthenticationError, ServerError, WaitTimeout],
    ids=lambda cls: cls.__name__,
)
def test_everything_is_a_gateway_error(cls):
    assert issubclass(cls, GatewayError)
