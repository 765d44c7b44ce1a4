"""The one place that masks card data and secrets for logs, reports, notebooks and reprs.

PAN: BIN and last four only (``444455******1111``).  CVV: never shown.  Control keys,
passphrases and private keys: never shown; the ``Secret`` wrapper keeps them out of reprs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import unquote

from toolkit.fields import FIELDS, Kind, ascii_digits, luhn_ok

CVV_MASK = "***"
SECRET_MASK = "<redacted>"
# A hex word of 32 or more characters is a digest (a control, a signature, an id), never a card number, even
# when it holds a Luhn-valid run of digits (about one SHA-1 value in a hundred does): it is kept whole.
_PAN_IN_TEXT = re.compile(
    r"(?P<digest>(?<![0-9A-Za-z])[0-9A-Fa-f]{32,}(?![0-9A-Za-z]))"
    r"|(?<!\d)(?P<pan>\d{12,19})(?!\d)"
)
_CVV_IN_QUERY = re.compile(r"(?i)\b(cvv2?|cvc)=([^&\s\"']*)")


class Secret:
    """A secret string that never shows itself: ``repr`` and ``str`` print a mask."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return f"Secret({SECRET_MASK!r})"

    __str__ = __repr__


def mask_pan(number: str) -> str:
    """A PAN -> BIN, stars, last four (``444455******1111``); short or odd values are fully masked."""
    digits = number.strip()
    if len(digits) < 12 or not ascii_digits(digits):
        return "*" * len(digits)
    return digits[:6] + "*" * (len(digits) - 10) + digits[-4:]


def mask_value(name: str, value: str) -> str:
    """Mask one field value by what the field is."""
    spec = FIELDS.get(name)
    if spec is None or not spec.secret:
        return value
    if spec.kind is Kind.CARD_NUMBER:
        return mask_pan(value)
    return CVV_MASK if value else value


def mask_fields(fields: Mapping[str, str] | Iterable[tuple[str, str]]) -> dict[str, str]:
    """A copy of request or response fields with card data masked."""
    items = fields.items() if isinstance(fields, Mapping) else fields
    return {name: mask_value(name, str(value)) for name, value in items}


def mask_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Mask every Luhn-valid card number, every ``cvv2=`` value and each given secret in free text."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, SECRET_MASK)
    text = _CVV_IN_QUERY.sub(lambda m: f"{m.group(1)}={CVV_MASK}" if m.group(2) else m.group(0), text)
    return _PAN_IN_TEXT.sub(_mask_pan_match, text)


def _mask_pan_match(match: re.Match[str]) -> str:
    pan = match.group("pan")
    return mask_pan(pan) if pan and luhn_ok(pan) else match.group(0)


def mask_base_string(base_string: str) -> str:
    """An OAuth signature base string with the values of card fields masked (readable, not signable).

    The parameters are the third ``&``-part, encoded twice (RFC 5849 3.4.1): pairs are joined by
    ``%26`` and split by ``%3D``; a masked value is written as plain text (``cvv2%3D***``).
    """
    head, sep, params = base_string.rpartition("&")
    if not sep:
        return base_string
    pairs = []
    for pair in params.split("%26"):
        name, eq, value = pair.partition("%3D")
        field = unquote(unquote(name))
        if eq and FIELDS.get(field) is not None and FIELDS[field].secret:
            value = mask_value(field, unquote(unquote(value)))
        pairs.append(name + eq + value)
    return head + sep + "%26".join(pairs)
