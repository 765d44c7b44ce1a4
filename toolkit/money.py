"""Money: currencies, precision and minor units, always with ``Decimal``.

The control checksum carries amounts in minor units ("10.00 becomes 1000", spec section 2.2;
"0.94 becomes 94", behaviour section 7); requests carry them in major units with a dot.
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal

# Behaviour section 7: major units with a dot (10.42).  At most 15 digits before the dot, so that
# the minor units of every currency fit in a 64-bit integer.
WIRE_AMOUNT = re.compile(r"[0-9]{1,15}(\.[0-9]+)?")

# ISO 4217 minor-unit exponents of the currencies the toolkit knows.
CURRENCY_EXPONENTS: dict[str, int] = {
    **dict.fromkeys(
        (
            "AED ARS AUD BAM BGN BRL BYN CAD CHF CNY COP CZK DKK EGP EUR GBP GEL HKD HUF ILS INR KZT MAD MDL MXN "
            "MYR NGN NOK NZD PEN PHP PKR PLN QAR RON RSD RUB SAR SEK SGD THB TRY TWD UAH USD UZS ZAR AMD AZN KGS TJS"
        ).split(),
        2,
    ),
    **dict.fromkeys(["JPY", "KRW", "VND", "CLP", "ISK", "XOF", "XAF", "UGX", "PYG"], 0),
    **dict.fromkeys(["BHD", "JOD", "KWD", "OMR", "TND", "IQD", "LYD"], 3),
}


class MoneyError(ValueError):
    """An amount or currency that breaks a rule; ``field`` and ``rule`` say which."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule


def currency_exponent(currency: str) -> int:
    """Number of decimals of ``currency``; raises MoneyError for an unknown code."""
    try:
        return CURRENCY_EXPONENTS[currency]
    except KeyError:
        raise MoneyError("currency", f"unknown currency code {currency!r} (ISO 4217, upper case)") from None


def parse_amount(value: object, currency: str | None = None) -> Decimal:
    """Parse a positive major-unit amount, refusing floats and excess precision."""
    if type(value) is str:  # (a request's amount: the same few texts again and again)
        return _parse_text(value.strip(), currency)
    if isinstance(value, float):
        raise MoneyError("amount", "pass amounts as Decimal or str, never float")
    return _parse_text(format(value, "f") if isinstance(value, Decimal) else str(value).strip(), currency)


@functools.lru_cache(maxsize=1024)
def _parse_text(text: str, currency: str | None) -> Decimal:
    """``parse_amount`` of a text (cached: a Decimal is immutable; a refusal raises again each time)."""
    if text.startswith("-") and WIRE_AMOUNT.fullmatch(text[1:]):
        raise MoneyError("amount", f"{text} must be a positive decimal number")
    if not WIRE_AMOUNT.fullmatch(text):
        shown = text[:40] + ("..." if len(text) > 40 else "")
        raise MoneyError("amount", f"{shown!r} is not major units with a dot (e.g. 10.42), at most 15 digits before it")
    amount = Decimal(text)
    if not amount.is_finite() or amount <= 0:
        raise MoneyError("amount", f"{text} must be a positive decimal number")
    if currency is not None:
        allowed = currency_exponent(currency)
        exponent = amount.as_tuple().exponent
        decimals = -exponent if isinstance(exponent, int) and exponent < 0 else 0
        if decimals > allowed:
            raise MoneyError("amount", f"amount {text} has more decimals than {currency} allows ({allowed})")
    return amount


def to_minor_units(amount: object, currency: str) -> int:
    """``Decimal('10.42')`` in EUR -> ``1042``; exact, never through float."""
    exponent = currency_exponent(currency)
    value = parse_amount(amount, currency)
    return int(value.scaleb(exponent))


def from_minor_units(minor: int, currency: str) -> Decimal:
    """``1042`` in EUR -> ``Decimal('10.42')``."""
    exponent = currency_exponent(currency)
    return Decimal(minor).scaleb(-exponent).quantize(Decimal(1).scaleb(-exponent))


def format_amount(amount: object, currency: str) -> str:
    """The wire form of an amount: major units with the currency's decimals (``10.40``)."""
    exponent = currency_exponent(currency)
    return str(parse_amount(amount, currency).quantize(Decimal(1).scaleb(-exponent)))
