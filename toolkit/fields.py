"""Request fields of the gateway: their wire names, formats and the rules that check them.

One registry, read by the catalogue (``operations.py``), by validation in the client and in the
simulator, by the OpenAPI document and by the notebook forms.  Names are the spec's (section 2.2).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    """The format of a field's value."""

    TEXT = "text"
    ID = "id"
    DIGITS = "digits"
    AMOUNT = "amount"
    AMOUNTS = "amounts"
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
    BIRTHDAY = "birthday"
    COUNTRY = "country"


@dataclass(frozen=True)
class Field:
    """One request field: ``name`` as sent on the wire, its format, and what it means.

    ``aliases`` are the other names a Python caller may use for it (``cres`` for ``cRes``,
    ``client_orderid`` for ``client-order-id``); the client always sends ``name``.
    """

    name: str
    kind: Kind
    doc: str
    max_length: int = 256
    choices: tuple[str, ...] = ()
    secret: bool = False  # card data: masked in every log, report and repr
    aliases: tuple[str, ...] = ()

    @property
    def python_name(self) -> str:
        """The keyword a Python caller uses (``destination-card-no`` -> ``destination_card_no``)."""
        return self.aliases[0] if self.aliases else self.name.replace("-", "_")

    @property
    def names(self) -> tuple[str, ...]:
        """Every name that stands for this field in a caller's mapping: the wire name first."""
        return tuple(dict.fromkeys((self.name, self.name.replace("-", "_"), *self.aliases)))


def _f(name: str, kind: Kind, doc: str, **extra: object) -> tuple[str, Field]:
    return name, Field(name, kind, doc, **extra)  # type: ignore[arg-type]


# Lengths are those of the gateway family's documentation (behaviour section 10) where it gives one.
FIELDS: dict[str, Field] = dict(
    [
        _f("login", Kind.TEXT, "Merchant login (the OAuth consumer key)", max_length=20),
        _f("client_orderid", Kind.ID, "Merchant's own order identifier", max_length=128),
        _f(
            "client-order-id",
            Kind.ID,
            "Merchant's order identifier, hyphenated (3-D Secure uploads, v4 payouts)",
            max_length=128,
            aliases=("client_orderid",),
        ),
        _f("orderid", Kind.DIGITS, "Gateway's identifier of the order (paynet-order-id)", max_length=20),
        _f("by-request-sn", Kind.TEXT, "Serial number of one request: the status of that request", max_length=64),
        _f("order_desc", Kind.TEXT, "Order description", max_length=65536),
        _f("amount", Kind.AMOUNT, "Amount in major units with a dot (10.42)"),
        _f("currency", Kind.CURRENCY, "ISO 4217 currency code", max_length=3),
        _f("email", Kind.EMAIL, "Customer e-mail", max_length=50),
        _f("ipaddress", Kind.IP, "Customer IP address", max_length=45),
        _f("first_name", Kind.TEXT, "Customer first name", max_length=50),
        _f("last_name", Kind.TEXT, "Customer last name", max_length=50),
        _f("address1", Kind.TEXT, "Customer street address", max_length=50),
        _f("city", Kind.TEXT, "Customer city", max_length=50),
        _f("state", Kind.TEXT, "Customer state or province (2 letters; required for US, CA, AU)", max_length=2),
        _f("zip_code", Kind.TEXT, "Customer postal code", max_length=10),
        _f("country", Kind.COUNTRY, "Customer country, ISO 3166-1 alpha-2", max_length=2),
        _f("phone", Kind.TEXT, "Customer phone number", max_length=15),
        _f("cell_phone", Kind.TEXT, "Customer mobile phone number", max_length=15),
        _f("birthday", Kind.BIRTHDAY, "Customer date of birth, YYYYMMDD", max_length=8),
        _f("ssn", Kind.DIGITS, "Last four digits of the customer's social security number", max_length=4),
        _f("site_url", Kind.URL, "Merchant's site"),
        _f("purpose", Kind.TEXT, "Purpose of the payment", max_length=128),
        _f("merchant_data", Kind.TEXT, "Merchant's own data, echoed back", max_length=4096),
        _f("comment", Kind.TEXT, "Free comment", max_length=50),
        _f("credit_card_number", Kind.CARD_NUMBER, "Card number (PAN)", secret=True),
        _f("card_printed_name", Kind.TEXT, "Cardholder name as printed on the card", max_length=128),
        _f("expire_month", Kind.MONTH, "Card expiry month, 1-12 (01-12)"),
        _f("expire_year", Kind.YEAR, "Card expiry year: four digits, or two (99 is 2099)", max_length=4),
        _f("cvv2", Kind.CVV, "Card verification value (3 or 4 digits)", secret=True),
        _f("redirect_url", Kind.URL, "Where the payer's browser goes back to", max_length=1024),
        _f("server_callback_url", Kind.URL, "Called with the outcome of the initial transaction", max_length=1024),
        _f("notify_url", Kind.URL, "Called with the outcome of every transaction of the order", max_length=1024),
        _f("cardrefid", Kind.DIGITS, "Card reference identifier", max_length=32),
        _f("sending-card-ref-id", Kind.DIGITS, "Card reference of the sending card", max_length=32),
        _f("source-card-ref-id", Kind.DIGITS, "Card reference the transfer takes the money from", max_length=32),
        _f("destination-card-ref-id", Kind.DIGITS, "Card reference the transfer sends the money to", max_length=32),
        _f("enumerate_amounts", Kind.AMOUNTS, "Amounts tried in order until one is approved (10.00,5.00)"),
        _f("recurrent_scenario", Kind.CHOICE, "Kind of repeated charge", choices=("REGULAR", "IRREGULAR")),
        _f("threeDSCompInd", Kind.CHOICE, "3DS Method result", choices=("Y", "N", "U")),
        _f("threeDSServerTransID", Kind.TEXT, "3DS Server transaction id (a UUID)", max_length=36),
        _f("browserAcceptHeader", Kind.TEXT, "Payer browser Accept header", max_length=2048),
        _f("browserIP", Kind.IP, "Payer browser IP address", max_length=45),
        _f("browserJavaEnabled", Kind.BOOL, "Payer browser runs Java"),
        _f("browserJavascriptEnabled", Kind.BOOL, "Payer browser runs JavaScript"),
        _f("browserLanguage", Kind.TEXT, "Payer browser language (BCP 47)", max_length=8),
        _f("browserColorDepth", Kind.INT, "Payer screen colour depth", max_length=2),
        _f("browserScreenHeight", Kind.INT, "Payer screen height", max_length=6),
        _f("browserScreenWidth", Kind.INT, "Payer screen width", max_length=6),
        _f("browserTZ", Kind.TEXT, "Payer time-zone offset in minutes", max_length=5),
        _f("browserUserAgent", Kind.TEXT, "Payer browser User-Agent", max_length=2048),
        _f("cRes", Kind.TEXT, "Challenge response (CRes) from the ACS", max_length=4096, aliases=("cres",)),
        _f(
            "paRes",
            Kind.TEXT,
            "Payer authentication response (PaRes) of 3DS 1.0.2",
            max_length=10240,
            aliases=("pares",),
        ),
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
        _f("bank_name", Kind.TEXT, "Destination bank name", max_length=128),
        _f("bank_branch", Kind.TEXT, "Destination bank branch", max_length=128),
        _f("bank_province", Kind.TEXT, "Destination bank province", max_length=128),
        _f("bank_city", Kind.TEXT, "Destination bank city", max_length=128),
        _f("ewallet_id", Kind.TEXT, "Destination e-wallet", max_length=64),
        _f("payout_phone", Kind.TEXT, "Destination phone for fast payments", max_length=20),
        # Hosted Fields (hosted-fields.md 3.3): the token the SDK handed the page, in place of the card fields
        _f("hosted_fields_token", Kind.TEXT, "One-time token of the card the payer typed into the gateway's iframes"),
        # 3-D Secure 2 browser data as the Hosted Fields examples send it (hosted-fields.md 3.3): strings from the
        # page (``'true'``, ``screen.width``, ``getTimezoneOffset()``...), kept as text, as sale reads them by prefix
        # (lengths generous: a v2 sale sends them too)
        *(
            _f(f"customer_browser_{name}", Kind.TEXT, f"Payer browser: {doc}", max_length=length)
            for name, doc, length in (
                ("info", "browser data collected ('true')", 256),
                ("javascript_enabled", "runs JavaScript ('true' or 'false')", 256),
                ("java_enabled", "runs Java ('true' or 'false')", 256),
                ("accept_language", "language (navigator.language)", 256),
                ("color_depth", "screen colour depth (screen.colorDepth)", 256),
                ("screen_width", "screen width (screen.width)", 256),
                ("screen_height", "screen height (screen.height)", 256),
                ("time_zone", "time-zone offset in minutes (getTimezoneOffset())", 256),
                ("accept_header", "Accept header of the payer's request", 2048),
                ("user_agent", "User-Agent header of the payer's request", 2048),
            )
        ),
    ]
)

# Optional fields known by prefix only (sale and preauth: the 3-D Secure 2 browser data).
FIELD_PREFIXES = ("customer_browser_",)

_WIRE_NAMES = {spec.python_name: name for name, spec in FIELDS.items() if not spec.aliases}


def wire_name(name: str) -> str:
    """The wire name of a field written as a Python keyword (``destination_card_no`` -> ``destination-card-no``).

    Any other name (a wire name already, or a field the registry does not know) is returned as it is.
    Names that depend on the operation (``client_orderid`` is ``client-order-id`` in the 3-D Secure
    uploads) are resolved by ``Operation.wire_name``.
    """
    return _WIRE_NAMES.get(name, name)


# Other spellings seen for a canonical field: a strict simulator treats them as missing fields (and
# says which was sent); a lenient one maps them with a conformance warning.
LEGACY_SPELLINGS: dict[str, str] = {
    "client-order-id": "client_orderid",
    "client_order_id": "client_orderid",
    "card-ref-id": "cardrefid",
    "card_ref_id": "cardrefid",
    "order_id": "orderid",
    "paynet-order-id": "orderid",
    "by_request_sn": "by-request-sn",
    "cres": "cRes",
    "pares": "paRes",
    "PaRes": "paRes",
}

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_URL = re.compile(r"^https?://[^\s/?#]+[^\s]*$")
_IP4 = re.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$")
_DATE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$")
_BIRTHDAY = re.compile(r"^(19|20)\d\d(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$")
_COUNTRY = re.compile(r"^[A-Z]{2}$")
_AMOUNT_ITEM = re.compile(r"^\d+(\.\d+)?$")


def ascii_digits(value: str) -> bool:
    """Digits 0-9 only: ``str.isdigit`` also accepts '²' and other scripts' digits, which int() refuses."""
    return value.isascii() and value.isdigit()


def luhn_ok(number: str) -> bool:
    """The Luhn (mod 10) check of a card number made of digits (of any script: ``int`` reads them)."""
    if not ascii_digits(number):
        return _luhn_of_values(list(map(int, number)))  # ValueError for a character that is not a digit
    # from the right: every first digit as it is, every second one doubled (its digits summed: 7 -> 14 -> 5)
    digits = (number[-1::-2] + number[-2::-2].translate(_LUHN_DOUBLED)).encode("ascii")
    return (sum(digits) - 48 * len(digits)) % 10 == 0  # (each digit's value is its ASCII code less 48)


_LUHN_DOUBLED = str.maketrans("0123456789", "0246813579")


def _luhn_of_values(digits: list[int]) -> bool:
    total = 0
    for index, digit in enumerate(reversed(digits)):
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


# prefix -> (the brand's place in _BRANDS, brand); every prefix has 1, 2 or 4 digits
_BRAND_OF_PREFIX = {
    prefix: (place, brand) for place, (brand, prefixes) in reversed(list(enumerate(_BRANDS))) for prefix in prefixes
}
_PREFIX_LENGTHS = sorted({len(prefix) for prefix in _BRAND_OF_PREFIX})


def card_brand(number: str) -> str:
    """The card scheme from the leading digits (``VISA``, ``MASTERCARD``...), ``UNKNOWN`` otherwise.

    The first brand of ``_BRANDS`` with a prefix of the number (``6011``: DISCOVER before MAESTRO's ``6``)."""
    found = [_BRAND_OF_PREFIX[number[:n]] for n in _PREFIX_LENGTHS if number[:n] in _BRAND_OF_PREFIX]
    return min(found)[1] if found else "UNKNOWN"


def _ip_ok(value: str) -> bool:
    if ":" in value:  # IPv6: leave the detail to the network stack
        return bool(re.fullmatch(r"[0-9A-Fa-f:.]+", value))
    match = _IP4.match(value)
    return match is not None and max(map(int, match.groups())) <= 255


def card_expiry(month: str, year: str) -> tuple[int, int] | None:
    """(month, four-digit year) of a card's expiry as sent: ``1``/``01`` and ``99``/``2099`` both count.

    None when the values are not an expiry date (the format checks say why).
    """
    if not (ascii_digits(month) and ascii_digits(year) and len(month) in (1, 2) and len(year) in (2, 4)):
        return None
    number = int(month)
    if not 1 <= number <= 12:
        return None
    return number, int(year) + (2000 if len(year) == 2 else 0)


def format_problem(field: Field, value: str) -> str | None:
    """Why ``value`` is not a valid ``field``, or None.  Amount and currency live in money.py."""
    if len(value) > field.max_length:
        return too_long(field)
    return _FORMAT_RULES.get(field.kind, _no_rule)(field, value)


def too_long(field: Field) -> str:
    """What ``format_problem`` says of a value longer than ``field.max_length``."""
    return f"longer than {field.max_length} characters"


FormatRule = Callable[[Field, str], str | None]


def format_rule(field: Field) -> FormatRule | None:
    """The check ``format_problem`` runs on a value of ``field`` once its length is within ``max_length``
    (None: any value goes), for callers that plan their checks once per field."""
    return _FORMAT_RULES.get(field.kind)


def _no_rule(field: Field, value: str) -> str | None:
    return None


def _card_number(field: Field, value: str) -> str | None:
    if not ascii_digits(value) or not 12 <= len(value) <= 19:
        return "must be 12 to 19 digits"
    return None if luhn_ok(value) else "fails the Luhn check"


def _amounts(field: Field, value: str) -> str | None:
    items = value.split(",")
    if not all(_AMOUNT_ITEM.match(item.strip()) for item in items):
        return "must be amounts separated by commas (10.00,5.00)"
    if any(not item.strip().strip("0.") for item in items):  # 0, 0.00, 00
        return "each amount must be more than 0"
    return None if len(items) <= 10 else "at most 10 amounts"


_FORMAT_RULES: dict[Kind, FormatRule] = {
    Kind.DIGITS: lambda f, v: None if ascii_digits(v) else "must be digits only",
    Kind.ID: lambda f, v: None if v else "must not be empty",
    # the message never repeats the value: it may be a card number typed into the wrong field
    Kind.EMAIL: lambda f, v: None if _EMAIL.match(v) else "is not an e-mail address",
    Kind.URL: lambda f, v: None if _URL.match(v) else "must be an absolute http(s) URL",
    Kind.CARD_NUMBER: _card_number,
    Kind.CVV: lambda f, v: None if ascii_digits(v) and len(v) in (3, 4) else "must be 3 or 4 digits",
    Kind.MONTH: lambda f, v: None if card_expiry(v, "2000") else "must be a month, 1 to 12 (or 01 to 12)",
    Kind.YEAR: lambda f, v: None if ascii_digits(v) and len(v) in (2, 4) else "must be four digits (or two: 99)",
    Kind.IP: lambda f, v: None if _ip_ok(v) else "is not an IP address",
    Kind.BOOL: lambda f, v: None if v in ("true", "false") else "must be true or false",
    Kind.INT: lambda f, v: None if ascii_digits(v) and int(v) < 2**31 else "must be a non-negative integer",
    Kind.CHOICE: lambda f, v: None if v in f.choices else f"must be one of {', '.join(f.choices)}",
    Kind.DATE: lambda f, v: None if _DATE.match(v) else "must be a date YYYY-MM-DD",
    Kind.BIRTHDAY: lambda f, v: None if _BIRTHDAY.match(v) else "must be a date YYYYMMDD",
    Kind.COUNTRY: lambda f, v: None if _COUNTRY.match(v) else "must be an ISO 3166-1 alpha-2 code in capitals (US)",
    Kind.AMOUNTS: _amounts,
}
