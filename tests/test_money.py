"""Money: Decimal only, the currency's precision, minor units for the control."""

from __future__ import annotations

from decimal import Decimal

import pytest

from toolkit.money import (
    MoneyError,
    currency_exponent,
    format_amount,
    from_minor_units,
    parse_amount,
    to_minor_units,
)


@pytest.mark.parametrize(
    ("amount", "currency", "minor"),
    [
        ("10.42", "EUR", 1042),
        ("10.00", "EUR", 1000),
        ("10", "EUR", 1000),
        ("0.94", "EUR", 94),
        ("0.29", "USD", 29),  # int(0.29 * 100) == 28 with floats
        ("1.15", "USD", 115),  # int(1.15 * 100) == 114 with floats
        (Decimal("19.99"), "EUR", 1999),
        ("1000", "JPY", 1000),
        ("1.234", "KWD", 1234),
        (" 2.50 ", "EUR", 250),
    ],
    ids=["10.42", "10.00", "integer", "0.94", "0.29 float trap", "1.15 float trap", "Decimal", "JPY", "KWD", "blanks"],
)
def test_minor_units_are_exact(amount, currency, minor):
    assert to_minor_units(amount, currency) == minor


@pytest.mark.parametrize(
    ("minor", "currency", "major"),
    [(1042, "EUR", "10.42"), (94, "EUR", "0.94"), (1000, "JPY", "1000"), (1234, "KWD", "1.234")],
    ids=["EUR", "cents", "JPY", "KWD"],
)
def test_from_minor_units_keeps_the_currency_decimals(minor, currency, major):
    assert str(from_minor_units(minor, currency)) == major


@pytest.mark.parametrize(
    ("amount", "currency", "wire"),
    [("10.4", "EUR", "10.40"), ("10", "USD", "10.00"), ("7", "JPY", "7"), (Decimal("0.5"), "BHD", "0.500")],
    ids=["pads cents", "adds cents", "JPY", "BHD"],
)
def test_format_amount_writes_the_currency_decimals(amount, currency, wire):
    assert format_amount(amount, currency) == wire


@pytest.mark.parametrize(
    ("amount", "currency", "message"),
    [
        ("10.005", "EUR", "more decimals than EUR allows \\(2\\)"),
        ("10.5", "JPY", "more decimals than JPY allows \\(0\\)"),
        ("0", "EUR", "must be a positive decimal"),
        ("-1.00", "EUR", "must be a positive decimal"),
        ("ten", "EUR", "'ten' is not major units with a dot"),
        ("NaN", "EUR", "is not major units with a dot"),
        ("Infinity", "EUR", "is not major units with a dot"),
        ("", "EUR", "is not major units with a dot"),
    ],
    ids=["EUR 10.005", "JPY 10.5", "zero", "negative", "words", "NaN", "infinity", "empty"],
)
def test_bad_amounts_are_refused_naming_the_amount(amount, currency, message):
    with pytest.raises(MoneyError, match=message) as refused:
        parse_amount(amount, currency)
    assert refused.value.field == "amount"


def test_floats_are_refused():
    with pytest.raises(MoneyError, match="never float") as refused:
        parse_amount(10.42, "EUR")
    assert refused.value.field == "amount"
    with pytest.raises(MoneyError, match="never float"):
        to_minor_units(0.29, "USD")


@pytest.mark.parametrize("code", ["XXX", "eur", "", "EURO"], ids=["unknown", "lower case", "empty", "four letters"])
def test_unknown_currencies_are_refused_naming_the_currency(code):
    with pytest.raises(MoneyError, match="unknown currency code") as refused:
        currency_exponent(code)
    assert refused.value.field == "currency"
    with pytest.raises(MoneyError, match="currency"):
        to_minor_units("1", code)


def test_amount_without_currency_is_checked_for_sign_only():
    assert parse_amount("10.005") == Decimal("10.005")
