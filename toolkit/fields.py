"""Request fields of the gateway: their wire names, formats and the rules that check them.

One registry, read by the catalogue (``operations.py``), by validation in the client and in the
simulator, by the OpenAPI document and by the notebook forms.  Names are the spec's (section 2.2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    """The format of a field's value."""

    TEXT = "text"
    ID = "id"
    DIGITS = "digits"
    AMOUNT = "amount"
    CURRENCY = "currency"
    EMAIL = "email"
    URL = "url"
    CARD_NUMBER = "card_number"
    CVV = "cvv"
    MONTH = "month"
    YEAR = "year"
    IP = "ip"
    BOOL = "bool"
    INT = "int"
    CHOICE = "choice"
    DATE = "date"


@dataclass(frozen=True)
class Field:
    """One request field: ``name`` as sent on the wire, its format, and what it means."""

    name: str
    kind: Kind
    doc: str
    max_length: int = 256
    choices: tuple[str, ...] = ()
    secret: bool = False  # card data: masked in every log, report and repr

    @property
    def python_name(self) -> str:
        """The keyword a Python caller uses (``destination-card-no`` -> ``destination_card_no``)."""
        return self.name.replace("-", "_")


def _f(name: str, kind: Kind, doc: str, **extra: object) -> tuple[str, Field]:
    return name, Field(name, kind, doc, **extra)  # type: ignore[arg-type]


FIELDS: dict[str, Field] = dict(
    [
        _f("client_orderid", Kind.ID, "Merchant's own order identifier", max_length=128),
        _f("client-order-id", Kind.ID, "Merchant's order identifier (hyphenated spelling)", max_length=128),
        _f("orderid", Kind.DIGITS, "Gateway's identifier of the transaction (paynet-order-id)", max_length=32),
        _f("order_desc", Kind.TEXT, "Order description", max_length=125),
        _f("amount", Kind.AMOUNT, "Amount in major units with a dot (10.42)"),
        _f("currency", Kind.CURRENCY, "ISO 4217 currency code"),
        _f("email", Kind.EMAIL, "Customer e-mail", max_length=128),
        _f("ipaddress", Kind.IP, "Customer IP address"),
        _f("first_name", Kind.TEXT, "Customer first name", max_length=50),
        _f("last_name", Kind.TEXT, "Customer last name", max_length=50),
        _f("address1", Kind.TEXT, "Customer street address", max_length=50),
        _f("city", Kind.TEXT, "Customer city", max_length=50),
        _f("state", Kind.TEXT, "Customer state or region", max_length=50),
        _f("zip_code", Kind.TEXT, "Customer postal code", max_length=10),
        _f("country", Kind.TEXT, "Customer country, ISO 3166 alpha-2", max_length=2),
        _f("phone", Kind.TEXT, "Customer phone number", max_length=15),
        _f("site_url", Kind.URL, "Merchant's site"),
        _f("purpose", Kind.TEXT, "Purpose of the payment", max_length=128),
        _f("comment", Kind.TEXT, "Free comment", max_length=255),
        _f("credit_card_number", Kind.CARD_NUMBER, "Card number (PAN)", secret=True),
        _f("card_printed_name", Kind.TEXT, "Cardholder name as printed on the card", max_length=128),
        _f("expire_month", Kind.MONTH, "Card expiry month, 01-12"),
        _f("expire_year", Kind.YEAR, "Card expiry year, four digits"),
        _f("cvv2", Kind.CVV, "Card verification value (3 or 4 digits)", secret=True),
        _f("redirect_url", Kind.URL, "Where the payer's browser goes back to", max_length=1024),
        _f("server_callback_url", Kind.URL, "Where the final outcome is called back", max_length=1024),
        _f("cardrefid", Kind.DIGITS, "Card reference identifier", max_length=32),
        _f("sending-card-ref-id", Kind.DIGITS, "Card reference of the sending card", max_length=32),
        _f("threeDSCompInd", Kind.CHOICE, "3DS Method result", choices=("Y", "N", "U")),
        _f("browser_accept_header", Kind.TEXT, "Payer browser Accept header", max_length=2048),
        _f("browser_user_agent", Kind.TEXT, "Payer browser User-Agent", max_length=2048),
        _f("browser_language", Kind.TEXT, "Payer browser language", max_length=8),
        _f("browser_color_depth", Kind.INT, "Payer screen colour depth"),
        _f("browser_screen_height", Kind.INT, "Payer screen height"),
        _f("browser_screen_width", Kind.INT, "Payer screen width"),
        _f("browser_tz", Kind.TEXT, "Payer time-zone offset in minutes", max_length=5),
        _f("browser_java_enabled", Kind.BOOL, "Payer browser runs Java"),
        _f("cres", Kind.TEXT, "Challenge response (CRes) from the ACS, base64url", max_length=8192),
        _f("pares", Kind.TEXT, "Payer authentication response (PaRes) of 3DS 1.0.2", max_length=8192),
        _f("md", Kind.TEXT, "Merchant data echoed by a 3DS 1.0.2 ACS", max_length=1024),
        _f("period", Kind.CHOICE, "Recurring period unit", choices=("day", "week", "month", "year")),
        _f("interval", Kind.INT, "Number of periods between charges"),
        _f("repeats", Kind.INT, "Number of charges (0 = until cancelled)"),
        _f("start_date", Kind.DATE, "First charge date, YYYY-MM-DD"),
        _f("deposit2card", Kind.BOOL, "Deposit the transfer to the destination card"),
        _f("destination-card-no", Kind.CARD_NUMBER, "Destination card number", secret=True),
        _f("card_recurring_payment_id", Kind.TEXT, "Source card reference of a transfer", max_length=32),
        _f("destination_card_recurring_payment_id", Kind.TEXT, "Destination card reference", max_length=32),
        _f("account_number", Kind.TEXT, "Destination bank account", max_length=64),
        _f("bank_code", Kind.TEXT, "Destination bank code (BIC, routing number)", max_length=32),
        _f("ewallet_id", Kind.TEXT, "Destination e-wallet", max_length=64),
        _f("payout_phone", Kind.TEXT, "Destination phone for fast payments", max_length=20),
    ]
)

_WIRE_NAMES = {spec.python_name: name for name, spec in FIELDS.items()}


def wire_name(name: str) -> str:
    """The wire name of a field written as a Python keyword (``destination_card_no`` -> ``destination-card-no``).

    Any other name (a wire name already, or a field the registry does not know) is returned as it is.
    """
    return _WIRE_NAMES.get(name, name)


# Other spellings the gateway family accepts for a canonical field (conformance warnings name them).
LEGACY_SPELLINGS: dict[str, str] = {
    "client-order-id": "client_orderid",
    "client_order_id": "client_orderid",
    "card-ref-id": "cardrefid",
    "card_ref_id": "cardrefid",
    "order_id": "orderid",
    "paynet-order-id": "orderid",
    "cvv": "cvv2",
}

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_URL = re.compile(r"^https?://[^\s/?#]+[^\s]*$")
_IP4 = re.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$")
_DATE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$")


def ascii_digits(value: str) -> bool:
    """Digits 0-9 only: ``str.isdigit`` also accepts '²' and other scripts' digits, which int() refuses."""
    return value.isascii() and value.isdigit()


def luhn_ok(number: str) -> bool:
    """The Luhn (mod 10) check of a card number made of digits."""
    total = 0
    for index, char in enumerate(reversed(number)):
        digit = int(char)
        if index % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


_BRANDS = (
    ("AMEX", ("34", "37")),
    ("DISCOVER", ("6011", "65")),
    ("JCB", ("35",)),
    ("UNIONPAY", ("62",)),
    ("MASTERCARD", tuple(str(n) for n in (*range(51, 56), *range(2221, 2721)))),
    ("MAESTRO", ("50", "56", "57", "58", "6")),
    ("VISA", ("4",)),
)


def card_brand(number: str) -> str:
    """The card scheme from the leading digits (``VISA``, ``MASTERCARD``...), ``UNKNOWN`` otherwise."""
    for brand, prefixes in _BRANDS:
        if number.startswith(prefixes):
            return brand
    return "UNKNOWN"


def _ip_ok(value: str) -> bool:
    if ":" in value:  # IPv6: leave the detail to the network stack
        return bool(re.fullmatch(r"[0-9A-Fa-f:.]+", value))
    match = _IP4.match(value)
    return match is not None and all(int(part) <= 255 for part in match.groups())


def format_problem(field: Field, value: str) -> str | None:
    """Why ``value`` is not a valid ``field``, or None.  Amount and currency live in money.py."""
    if len(value) > field.max_length:
        return f"longer than {field.max_length} characters"
    kind = field.kind
    if kind is Kind.DIGITS and not ascii_digits(value):
        return "must be digits only"
    if kind is Kind.ID and not value:
        return "must not be empty"
    if kind is Kind.EMAIL and not _EMAIL.match(value):
        return f"{value!r} is not an e-mail address"
    if kind is Kind.URL and not _URL.match(value):
        return "must be an absolute http(s) URL"
    if kind is Kind.CARD_NUMBER:
        if not ascii_digits(value) or not 12 <= len(value) <= 19:
            return "must be 12 to 19 digits"
        if not luhn_ok(value):
            return "fails the Luhn check"
    if kind is Kind.CVV and not (ascii_digits(value) and len(value) in (3, 4)):
        return "must be 3 or 4 digits"
    if kind is Kind.MONTH and not (len(value) == 2 and ascii_digits(value) and 1 <= int(value) <= 12):
        return "must be two digits, 01 to 12"
    if kind is Kind.YEAR and not (len(value) == 4 and ascii_digits(value)):
        return "must be four digits"
    if kind is Kind.IP and not _ip_ok(value):
        return f"{value!r} is not an IP address"
    if kind is Kind.BOOL and value not in ("true", "false"):
        return "must be true or false"
    if kind is Kind.INT and not (ascii_digits(value) and int(value) < 2**31):
        return "must be a non-negative integer"
    if kind is Kind.CHOICE and value not in field.choices:
        return f"must be one of {', '.join(field.choices)}"
    if kind is Kind.DATE and not _DATE.match(value):
        return "must be a date YYYY-MM-DD"
    return None
