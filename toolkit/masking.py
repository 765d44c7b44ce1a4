"""The one place that masks card data and secrets for logs, reports, notebooks, errors and reprs.

PAN: BIN and last four only (``444455******1111``).  CVV: never shown.  Control keys,
passphrases and private keys: never shown; the ``Secret`` wrapper keeps them out of reprs.

Masking works by name *and* by value, so that card data typed into the wrong field is caught too:

- by name: the catalogue's card fields (``toolkit.fields``), and any name that looks like a card
  number (``pan``, ``card_no``...) or a CVV (``cvv``, ``CVV2``, ``cvc``, ``card_cvv``, any case);
- by value: every Luhn-valid run of 13 to 19 digits, written whole or in groups of four separated
  by spaces or dashes (``4444 5555 6666 1111``), anywhere in free text: field values, URLs, base
  strings, error messages, argparse errors, curl commands; and the value after any CVV-like name
  in ``name=value``, ``name%3Dvalue`` (a base string) or ``"name": "value"`` (JSON, reprs).

A hex word of 32 or more characters is a digest (a control, a signature, an id) and is kept whole.
"""

from __future__ import annotations

import enum
import functools
import html
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import unquote

from toolkit.fields import FIELDS, Kind, ascii_digits, luhn_ok

CVV_MASK = "***"
SECRET_MASK = "<redacted>"

# A hex word of 32 or more characters is a digest (a control, a signature, an id), never a card number, even
# when it holds a Luhn-valid run of digits (about one SHA-1 value in a hundred does): it is kept whole.
_DIGEST = re.compile(r"(?<![0-9A-Za-z])[0-9A-Fa-f]{32,}(?![0-9A-Za-z])")
# A percent-escape (``%20``, ``%2520`` in a base string) is no digit: ``%20`` before a number is a space.
_ESCAPE = re.compile(r"%(?:25)*[0-9A-Fa-f]{2}")
_SPACE_ESCAPES = ("20", "2D", "2d")
_GROUP_SEPARATORS = " -+"
_CVV_WORD = r"[A-Za-z0-9_-]*(?:[Cc][Vv][VvCcNn]|[Ss][Ee][Cc][Uu][Rr][Ii][Tt][Yy][_-]?[Cc][Oo][Dd][Ee])[A-Za-z0-9_-]*"
_CVV_NAME = re.compile(rf"^{_CVV_WORD}$")
_PAN_NAME = re.compile(r"(?i)^(?:[a-z0-9_-]*[_-])?(?:card[-_]?(?:number|num|no)|pan)$")
# name=value (a query, argv), name%3Dvalue and name%253Dvalue (base strings), "name": "value" (JSON, reprs)
_CVV_IN_TEXT = re.compile(
    rf"(?<![A-Za-z0-9_-])(?P<name>{_CVV_WORD})"
    r"(?:(?P<eq>=)(?P<v1>[^&\s\"',;]*)"
    r"|(?P<enc>%3D|%253D)(?P<v2>(?:(?!%26|%2526)[^&\s\"'])*)"
    r"|(?P<q>[\"'])(?P<colon>\s*:\s*)(?P<vq>[\"'])(?P<v3>(?:\\.|[^\"'\\])*)(?P=vq))"
)

# Quick tests that let most values skip the full patterns: every CVV-like name holds one of these (in any case),
# and a card number has at least 13 decimal digits.
_CVV_HINT = re.compile(r"(?i)cv[vcn]|security[_-]?code")
_PAN_MIN_DIGITS = 13


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


def is_cvv_name(name: str) -> bool:
    """A field name that holds a card verification value: cvv, cvv2, CVC, card_cvv, security_code..."""
    spec = FIELDS.get(name)
    return (spec is not None and spec.kind is Kind.CVV) or bool(_CVV_NAME.match(name))


def is_pan_name(name: str) -> bool:
    """A field name that holds a card number: the catalogue's card fields, pan, card_no, card-number..."""
    spec = FIELDS.get(name)
    return (spec is not None and spec.kind is Kind.CARD_NUMBER) or bool(_PAN_NAME.match(name))


def mask_pan(number: str) -> str:
    """A PAN -> BIN, stars, last four (``444455******1111``); short or odd values are fully masked."""
    digits = number.strip()
    if len(digits) < 12 or not ascii_digits(digits):
        return "*" * len(digits)
    return digits[:6] + "*" * (len(digits) - 10) + digits[-4:]


def mask_value(name: str, value: str) -> str:
    """Mask one field value: by what the field is, then any card number or CVV in it."""
    rule = _name_rule(name)
    if rule is _Rule.HIDDEN:
        return CVV_MASK if value else value
    if rule is _Rule.CARD or (rule is _Rule.CARD_IF_DIGITS and ascii_digits(value.strip())):
        return mask_pan(value)
    if len(value) < _PAN_MIN_DIGITS and not _CVV_HINT.search(value):  # most values: nothing to mask
        return value
    return mask_text(value)


class _Rule(enum.Enum):
    HIDDEN = "hidden"  # a CVV or another secret: replaced whole
    CARD = "card"  # the catalogue's card number field: BIN and last four kept
    CARD_IF_DIGITS = "card if digits"  # a card-number-like name: masked as a PAN when the value is digits
    TEXT = "text"  # anything else: card numbers and CVVs inside the text


@functools.lru_cache(maxsize=4096)
def _name_rule(name: str) -> _Rule:
    """How ``mask_value`` treats a field name (cached: the same names come with every request)."""
    spec = FIELDS.get(name)
    if is_cvv_name(name) or (spec is not None and spec.secret and spec.kind is not Kind.CARD_NUMBER):
        return _Rule.HIDDEN
    if spec is not None and spec.kind is Kind.CARD_NUMBER:
        return _Rule.CARD
    return _Rule.CARD_IF_DIGITS if is_pan_name(name) else _Rule.TEXT


def mask_fields(fields: Mapping[str, str] | Iterable[tuple[str, str]]) -> dict[str, str]:
    """A copy of request or response fields with card data masked (by name and by value).

    What ``mask_value`` does to each field, with one look at the free-text values together: when none of
    them may hold a CVV-like word or a card number (``_may_need_masking``), they are kept as they are
    without a look at each; the fields masked by name (card numbers, CVVs) are masked one by one.
    """
    items = list(fields.items()) if isinstance(fields, Mapping) else list(fields)
    names = tuple(map(_FIRST, items))
    values = list(map(str, map(_SECOND, items)))
    plan = _mask_plan(names) if len(names) <= _MAX_CACHED_NAMES else _MaskPlan(names)
    if plan.text_at and _may_need_masking("\0".join(plan.texts(values))):
        return {name: mask_value(name, value) for name, value in zip(names, values, strict=True)}
    masked = dict(zip(names, values, strict=True))  # (a repeated name keeps its last value, as a dict does)
    for index in plan.by_name:
        masked[names[index]] = mask_value(names[index], values[index])
    return masked


_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)
_MAX_CACHED_NAMES = 256  # a longer list of names (a hostile form) is planned on its own, not cached


class _MaskPlan:
    """Where the free-text values are in a list of names, and the values masked by their name (``by_name``)."""

    __slots__ = ("_getter", "by_name", "text_at")

    def __init__(self, names: tuple[str, ...]) -> None:
        rules = [_name_rule(name) for name in names]
        self.text_at = tuple(index for index, rule in enumerate(rules) if rule is _Rule.TEXT)
        self.by_name = tuple(index for index, rule in enumerate(rules) if rule is not _Rule.TEXT)
        self._getter = operator.itemgetter(*self.text_at) if len(self.text_at) > 1 else None

    def texts(self, values: list[str]) -> tuple[str, ...]:
        """The free-text values (``text_at``) of ``values``."""
        if self._getter is None:
            return tuple(values[index] for index in self.text_at)
        found: tuple[str, ...] = self._getter(values)
        return found


@functools.lru_cache(maxsize=512)
def _mask_plan(names: tuple[str, ...]) -> _MaskPlan:
    """The plan of a list of names (cached: the names of an operation's requests come again and again)."""
    return _MaskPlan(names)


def _may_need_masking(text: str) -> bool:
    """False when ``mask_text`` leaves ``text`` as it is, by two quick tests (True may be a false alarm).

    A CVV-like word (``_CVV_IN_TEXT``) spells ``cv`` or ``security`` in ASCII letters of either case; a card
    number ``_mask_card_numbers`` masks is 13 digits or more joined by single separators (space, dash, plus)
    or escapes of a space or dash (``%20``, ``%2520``, ``%2D``): 13 or more characters of ``_MAYBE_CARD``.
    """
    lowered = text.lower()
    if "cv" in lowered or "security" in lowered:
        return True
    if text.isascii():  # the characters of _MAYBE_CARD as 1, any other as 0: then a run of 13 ones
        return _THIRTEEN in text.encode("ascii").translate(_IN_A_CARD)
    return _MAYBE_CARD.search(text) is not None


_MAYBE_CARD = re.compile(r"[\d +%Dd\-]{13,}")
_IN_A_CARD = bytes(1 if chr(code) in "0123456789 +%Dd-" else 0 for code in range(256))  # (ASCII: \d is 0-9)
_THIRTEEN = b"\x01" * 13


def mask_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Mask every Luhn-valid card number, every CVV-like ``name=value`` and each given secret in free text."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, SECRET_MASK)
    if _CVV_HINT.search(text):
        text = _CVV_IN_TEXT.sub(_mask_cvv_match, text)
    return _mask_card_numbers(text)


def _mask_cvv_match(match: re.Match[str]) -> str:
    name = match.group("name")
    if match.group("eq"):
        return f"{name}={CVV_MASK}" if match.group("v1") else match.group(0)
    if match.group("enc"):
        return f"{name}{match.group('enc')}{CVV_MASK}" if match.group("v2") else match.group(0)
    quote, colon, value_quote = match.group("q"), match.group("colon"), match.group("vq")
    return f"{name}{quote}{colon}{value_quote}{CVV_MASK if match.group('v3') else ''}{value_quote}"


def _mask_card_numbers(text: str) -> str:
    """Digests and percent-escapes set aside (as placeholder characters), then every run of digit groups masked."""
    # a card number has 13 or more digits (``\d``)
    if len(text) < _PAN_MIN_DIGITS or sum(map(str.isdecimal, text)) < _PAN_MIN_DIGITS or _DIGEST.fullmatch(text):
        return text  # (a digest alone, a checksum or a signature, is set aside whole: nothing left to mask)
    opaque, spacer = _unused_characters(text, 2)
    kept: list[str] = []

    def keep(placeholder: str) -> Callable[[re.Match[str]], str]:
        def hide(match: re.Match[str]) -> str:
            kept.append(match.group(0))
            is_space = placeholder == opaque and match.group(0)[-2:] in _SPACE_ESCAPES
            return spacer if is_space else placeholder

        return hide

    hidden = _ESCAPE.sub(keep(opaque), _DIGEST.sub(keep(opaque), text))
    runs = re.compile(rf"\d+(?:[{re.escape(_GROUP_SEPARATORS + spacer)}]\d+)*")
    masked = runs.sub(lambda match: _mask_run(match.group(0), _GROUP_SEPARATORS + spacer), hidden)
    restored = iter(kept)
    return re.sub(f"[{re.escape(opaque + spacer)}]", lambda _: next(restored), masked)


def _unused_characters(text: str, count: int) -> list[str]:
    chosen: list[str] = []
    code = 0xE000  # Unicode's private use area
    while len(chosen) < count:
        if chr(code) not in text:
            chosen.append(chr(code))
        code += 1
    return chosen


def _mask_run(run: str, separators: str) -> str:
    """Digit groups like ``4444 5555 6666 1111`` or one group of 12-19 digits: each card number in them masked.

    A number is a single group of 13 to 19 digits, or consecutive groups laid out as on a card
    (fours, then one to four digits: 13 to 19 in all; or 4-6-5), with the same separator between.
    """
    pieces = re.split(f"([{re.escape(separators)}])", run)
    groups, seps = pieces[0::2], pieces[1::2]
    starts = [sum(len(piece) for piece in pieces[: 2 * index]) for index in range(len(groups))]
    hidden: set[int] = set()
    for first in range(len(groups)):
        for last in range(first, min(len(groups), first + 5)):
            window = groups[first : last + 1]
            if _card_layout(window, seps[first:last]) and luhn_ok("".join(window)):
                positions = [starts[i] + offset for i in range(first, last + 1) for offset in range(len(groups[i]))]
                hidden.update(positions[6:-4])
    if not hidden:
        return run
    return "".join("*" if index in hidden else char for index, char in enumerate(run))


def _card_layout(groups: list[str], seps: list[str]) -> bool:
    sizes = [len(group) for group in groups]
    if len(sizes) == 1:
        return 13 <= sizes[0] <= 19
    if len(set(seps)) != 1 or not 13 <= sum(sizes) <= 19:
        return False
    return sizes == [4, 6, 5] or (all(size == 4 for size in sizes[:-1]) and 1 <= sizes[-1] <= 4)


def mask_base_string(base_string: str) -> str:
    """An OAuth signature base string with card data masked (readable, not signable).

    The parameters are the third ``&``-part, encoded twice (RFC 5849 3.4.1): pairs are joined by
    ``%26`` and split by ``%3D``; a masked value is written as plain text (``cvv2%3D***``).
    """
    head, sep, params = base_string.rpartition("&")
    if not sep:
        return mask_text(base_string)
    pairs = []
    for pair in params.split("%26"):
        name, eq, value = pair.partition("%3D")
        field = unquote(unquote(name))
        if eq and (is_cvv_name(field) or is_pan_name(field)):
            value = mask_value(field, unquote(unquote(value)))
        pairs.append(name + eq + value)
    return mask_text(head) + sep + mask_text("%26".join(pairs))


_INPUT_TAG = re.compile(r"<input\b[^>]*>", re.IGNORECASE)
_ATTRIBUTE = re.compile(r"""(?P<name>[\w-]+)\s*=\s*(?P<q>["'])(?P<value>.*?)(?P=q)""", re.DOTALL)


def mask_html(page: str) -> str:
    """A page's HTML with card data masked: the value of every input named like a card field, then free text."""

    def input_tag(match: re.Match[str]) -> str:
        tag = match.group(0)
        attributes = {m.group("name").lower(): m for m in _ATTRIBUTE.finditer(tag)}
        name, value = attributes.get("name") or attributes.get("id"), attributes.get("value")
        if name is None or value is None or not value.group("value"):
            return tag
        masked = html.escape(mask_value(name.group("value"), html.unescape(value.group("value"))))
        return tag[: value.start("value")] + masked + tag[value.end("value") :]

    return mask_text(_INPUT_TAG.sub(input_tag, page))
