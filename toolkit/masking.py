"""The one place that masks card data and secrets for logs, reports, notebooks, errors and reprs.

PAN: BIN and last four only (``444455******1111``).  CVV: never shown.  Control keys,
passphrases and private keys: never shown; the ``Secret`` wrapper keeps them out of reprs.

Masking works by name *and* by value, so that card data typed into the wrong field is caught too:

- by name: the catalogue's card fields (``toolkit.fields``), and any name that looks like a card
  number (``pan``, ``card_no``...) or a CVV (``cvv``, ``CVV2``, ``cvc``, ``card_cvv``, any case);
- by value: every Luhn-valid run of 13 to 19 digits, written whole or in groups of four separated
  by spaces or dashes (``4444 5555 6666 1111``), anywhere in free text: field values, URLs, base
  strings, error messages, argparse errors, curl commands; and the value after any CVV-like name
  in ``name=value``, ``name%3Dvalue`` (a base string), ``"name": "value"`` (JSON, reprs),
  ``name = "value"`` (source code, pytest's locals), ``name: 123`` and ``CVV 986`` (free text: 3 or 4
  digits after the name and a space).

A hex word of 32 or more characters is a digest (a control, a signature, an id) and a UUID (8-4-4-4-12 hex
digits: the gateway's ``serial-number``) is an id: each is kept whole, whatever run of digits it holds.

A report that shows a CVV again without its name (pytest's ``assert '987' == '654'``) reads the CVVs of the
report with ``cvvs_in`` and hides them where they stand alone with ``mask_cvvs`` (``toolkit.certify.scrub``).
"""

from __future__ import annotations

import enum
import functools
import html
import operator
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from urllib.parse import unquote

from toolkit.fields import FIELDS, Kind, ascii_digits, luhn_ok

CVV_MASK = "***"
SECRET_MASK = "<redacted>"

# A hex word of 32 or more characters is a digest (a control, a signature, an id), and a UUID (8-4-4-4-12 hex
# digits, any case: the gateway's ``serial-number``) an id: never a card number, even when it holds a Luhn-valid
# run of digits (about one SHA-1 value in a hundred does, and one UUID in a thousand): each is kept whole.
_IDENTIFIER = re.compile(
    r"(?<![0-9A-Za-z])[0-9A-Fa-f]{8}(?:[0-9A-Fa-f]{24,}|(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12})(?![0-9A-Za-z])"
)
# A percent-escape (``%3D``, ``%253D`` in a base string) is no digit; those of a space or a dash join digit groups.
_ESCAPE = re.compile(r"%(?:25)*[0-9A-Fa-f]{2}")
_JOINING_ESCAPE = re.compile(r"%(?:25)*(?:20|2[Dd])")
# What people put between the digit groups of a card number: spaces (any), tabs, dashes, dots, underscores,
# slashes, commas, plus signs, and the escapes of a space or a dash; one to three of them between two groups.
_SEPARATOR = r"(?:[ \t\u00a0\u2007\u202f\u3000\-._/,+]|\x01+)"  # (\x01: an escaped space or dash, blanked out)
_DIGIT_RUN = re.compile(rf"\d+(?:{_SEPARATOR}{{1,3}}\d+)*")  # (``\d``: any script's decimal digits, fullwidth too)
_DIGIT_GROUP = re.compile(r"\d+")
_CARD_LENGTHS = range(13, 20)
_ISSUERS = "23456"  # first digits of the card schemes' numbers (Mir 2, Amex 3, Visa 4, Mastercard 5, Discover 6)
# Inside a longer run of digits only the commonest lengths are looked for (16; 15 starting 34 or 37, Amex): every
# window passes Luhn one time in ten, and a long number is far more often an id than a card number glued to one.
_HIDDEN_LENGTHS = (15, 16)
_LONGEST_SCANNED_GROUP = 64  # digits: a longer group is searched for card numbers at its two ends only
_PAN_MIN_DIGITS = 13

# CVV names: the core (cvv, cvc, cvn, cvd, Amex's cid, written c_v_v or c v v too, "security code", "verification
# value"), then maybe 2, code, value or number, after at most two words of plain letters (card[cvv], card.cvv,
# x_cvv, payerCardCvv2); a longer name (approved-4-digit-cvv) is a sentence, not a field.  ``cid`` is a word of its
# own only (card_cid, CID), never the end of one (acid, placid).
_CVV_CORES = frozenset({"cvv", "cvc", "cvn", "cvd", "cvv2", "cvc2", "cvn2", "cvd2", "csc", "cid", "securitycode",
                        "verificationcode", "verificationvalue"})  # fmt: skip
_CVV_CORES_LONGEST_FIRST = sorted(_CVV_CORES - {"cid"}, key=len, reverse=True)  # (those that end a glued word)
_CVV_PAIRS = frozenset({("security", "code"), ("verification", "code"), ("verification", "value")})
_CVV_SUFFIXES = frozenset({"2", "code", "value", "no", "number"})
_MAX_PREFIX_WORDS = 2
_NAME_PARTS = re.compile(r"[^A-Za-z0-9]+")
# The one tokenizer of CVVs: a name (one word, then at most two short ones or a ``code``/``value``/``number``:
# ``cvv 2``, ``security code``), maybe closed by a quote or a bracket, then its value, in one of the shapes text
# carries it:
# - ``name=value`` (queries, forms, argv: up to ``&``, a blank, a quote, a comma or a semicolon);
# - ``name%3Dvalue`` and ``name%253Dvalue`` (base strings);
# - ``"name": "value"`` (JSON, reprs), ``name = "value"``, ``name == '987'`` (source code, pytest's locals) and
#   ``name: 123``, ``name = 123`` (text: a number only, so prose after a colon is left alone);
# - ``CVV 986`` (free text: 3 or 4 digits after blanks, no more digits after them: ``cvv 3-4 digits`` is prose).
# Whether the name is a CVV's is for ``is_cvv_name`` (``_cvv_matches``): another name keeps its value, which is
# read again for a CVV written in it (``{"note": "the payer typed CVV 986"}``).
_NAME_VALUE = re.compile(
    r"(?<![\w.\-\[\]])(?P<name>[A-Za-z][\w.\-\[\]]{0,40}?(?:[ ](?:[A-Za-z0-9]{1,2}|(?i:code|value|number))){0,2})"
    r"(?P<close>[\]\"']{0,2})"
    r"(?:(?P<eq>=)(?P<v1>[^&\s\"',;=][^&\s\"',;]*)"
    r"|(?P<enc>%3[Dd]|%253[Dd])(?P<v2>(?:(?!%26|%2526)[^&\s\"'])*)"
    r"|(?P<op>[ \t]*(?::=?|==?)[ \t]*)(?:(?P<vq>[\"'])(?P<v3>(?:\\.|(?!(?P=vq)).)*)(?P=vq)|(?P<v4>\d{1,8})(?!\d))"
    r"|(?P<blank>[ \t]+)(?P<v5>\d{3,4})(?!\w|[.,/\-]\d))"
)
# Quick tests that let most values skip the full patterns: a CVV name holds one of ``_CVV_WORDS`` once its
# separators are taken out (``_may_hold_a_cvv``), and a card number has at least 13 decimal digits.
_SQUEEZE = str.maketrans("", "", " _.-[]\t")
_SQUEEZED_OUT = b" _.-[]\t"  # (the same, for ASCII text as bytes)
_ANY_DIGIT = re.compile(r"\d")
_PAN_NAME = re.compile(r"(?i)^(?:[a-z0-9_-]*[_\-.\[])?(?:card[-_.\[]?(?:number|num|no)\]?|cardnumber|pan)\]?$")

# Secrets met so far (``Secret`` registers its value): masked in any text ``mask_text`` sees, whatever its shape.
_KNOWN_SECRETS: dict[str, None] = {}
_SECRETS_FOUND: list[re.Pattern[str] | None] = [None]  # the pattern of the known secrets, rebuilt when one comes
_SECRETS_NOW: list[tuple[str, ...]] = [()]  # the known secrets, replaced whole when one comes (read by any thread)
_SHORTEST_SECRET = 8  # characters: a shorter one is too likely a word (masking it would hide text)


def remember_secret(value: str) -> None:
    """Mask ``value`` wherever ``mask_text`` meets it from now on (``Secret`` does this for every secret)."""
    if len(value) >= _SHORTEST_SECRET and value not in _KNOWN_SECRETS:
        _KNOWN_SECRETS[value] = None
        ordered = sorted(_KNOWN_SECRETS, key=len, reverse=True)  # (the longest first: one may contain another)
        _SECRETS_FOUND[0] = re.compile("|".join(map(re.escape, ordered)))
        _SECRETS_NOW[0] = tuple(ordered)
        _CLEAN[0] = set()  # (a text found clean may hold the new secret; a check begun before adds to the old set)


def _mask_secrets(text: str) -> str:
    pattern = _SECRETS_FOUND[0]
    return text if pattern is None else pattern.sub(SECRET_MASK, text)


class Secret:
    """A secret string that never shows itself: ``repr`` and ``str`` print a mask."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value
        remember_secret(value)

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
    """A field name that holds a card verification value: cvv, cvv2, CVC, card_cvv, card[cvv], c_v_v, cvv 2,
    security_code...; not a longer phrase that ends in one (``approved-4-digit-cvv``)."""
    spec = FIELDS.get(name)
    return (spec is not None and spec.kind is Kind.CVV) or _cvv_name(name)


@functools.lru_cache(maxsize=4096)
def _cvv_name(name: str) -> bool:
    """Words split at separators, a word that ends in a CVV core split before it (cardCvv, CARDCVV2)."""
    words = []
    for word in _NAME_PARTS.split(name.lower()):
        core = next((c for c in _CVV_CORES_LONGEST_FIRST if word.endswith(c) and word != c), None)
        if core is not None and word[: -len(core)].isalpha():
            words += [word[: -len(core)], core]
        elif word:
            words.append(word)
    merged: list[str] = []
    spelled = False  # the last word is single letters spelled apart (c_v_v, c v v): a next one joins it
    for word in words:
        letter = len(word) == 1 and word.isalpha()
        if letter and spelled:
            merged[-1] += word
        else:
            merged.append(word)
        spelled = letter
    for index, word in enumerate(merged):
        pair = tuple(merged[index : index + 2])
        if word in _CVV_CORES:
            end = index + 1
        elif len(pair) == 2 and pair in _CVV_PAIRS:
            end = index + 2
        else:
            continue
        prefix, suffix = merged[:index], merged[end:]
        if (
            len(prefix) <= _MAX_PREFIX_WORDS
            and all(w.isalpha() for w in prefix)
            and len(suffix) <= 1
            and all(w in _CVV_SUFFIXES for w in suffix)
        ):
            return True
    return False


def is_pan_name(name: str) -> bool:
    """A field name that holds a card number: the catalogue's card fields, pan, card_no, card[number]..."""
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
    if value in _CLEAN[0]:  # (found clean before: a request's fields are masked for its journal line, then stored)
        return value
    if not _may_need_masking(value):  # most values: nothing to mask
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
    clean = _CLEAN[0]  # (taken before the look: a secret that becomes known meanwhile replaces the set)
    plan = _mask_plan(names, len(_SECRETS_NOW[0])) if len(names) <= _MAX_CACHED_NAMES else _MaskPlan(names)
    if not plan.names_clean:  # a card number sent as a field's name (a mangled form), a secret as one
        items = [(mask_text(name), value) for name, value in items]
        names = tuple(map(_FIRST, items))
        plan = _MaskPlan(names)
    values = list(map(str, map(_SECOND, items)))
    # (joined by NULs, which no word or secret holds and which break a run of digits: each value apart)
    if plan.text_at:
        texts = plan.texts(values)
        if _may_need_masking("\0".join(texts)):
            return {name: mask_value(name, value) for name, value in zip(names, values, strict=True)}
        _remember_clean(clean, texts)
    masked = dict(zip(names, values, strict=True))  # (a repeated name keeps its last value, as a dict does)
    for index in plan.by_name:
        masked[names[index]] = mask_value(names[index], values[index])
    return masked


_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)
_MAX_CACHED_NAMES = 256  # a longer list of names (a hostile form) is planned on its own, not cached


class _MaskPlan:
    """Where the free-text values are in a list of names, and the values masked by their name (``by_name``)."""

    __slots__ = ("_getter", "by_name", "names_clean", "text_at")

    def __init__(self, names: tuple[str, ...]) -> None:
        joined = "\0".join(names)
        # (no card number, known secret or CVV value in the names: a body that is no form, a JSON text read as one,
        # has one "name" that holds whole fields, ``{"cvv2": "987", ...``)
        self.names_clean = (
            _digit_count(joined) < _PAN_MIN_DIGITS
            and not _holds_a_secret(joined)
            and not (_may_hold_a_cvv(joined) and _mask_cvv_values(joined) != joined)
        )
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
def _mask_plan(names: tuple[str, ...], secrets: int) -> _MaskPlan:
    """The plan of a list of names (cached: the names of an operation's requests come again and again), made
    when ``secrets`` secrets were known (their number only grows: a plan made before a new one is not used)."""
    return _MaskPlan(names)


# ASCII text without escapes as runs of digits, every digit a ``1`` (a run of 13 digits is then a plain substring:
# one search in C): the separators ``_mask_card_numbers`` reads taken out (they join however many there are),
# anything else a break (a space).  (Text with a ``%`` is counted whole: ``%2D`` joins digit groups as a dash does.)
_RUN_ONES = bytes(0x31 if 0x30 <= code <= 0x39 else 0x20 for code in range(256))
_RUN_JOINS = b" \t-._/,+"
_LONG_RUN = b"1" * _PAN_MIN_DIGITS
_CVV_WORDS = ("cv", "cid", "csc", "security", "verification")  # a CVV name's letters, lower case, separators out
_CVV_LETTERS = re.compile("|".join(_CVV_WORDS).encode("ascii"))
_CVV_LETTERS_TEXT = re.compile("|".join(_CVV_WORDS))


def _may_need_masking(text: str) -> bool:
    """False when ``mask_text`` leaves ``text`` as it is, by quick tests (True may be a false alarm): a known
    secret, a CVV name (its letters, separators taken out), or 13 decimal digits in one run (ASCII text without
    escapes: letters and other signs break a run, the separators of a grouped card number do not), or in all.

    ASCII text (nearly all) is encoded once and read as bytes: a translate and a search in C, no list made."""
    if _holds_a_secret(text):
        return True
    if _may_hold_a_cvv(text):
        return True
    if not text.isascii():
        return _digit_count(text) >= _PAN_MIN_DIGITS
    raw = text.encode("ascii")
    if b"%" not in raw:  # (a digest's letters break its digits: a signature is no card number)
        return _LONG_RUN in raw.translate(_RUN_ONES, _RUN_JOINS)
    return _ascii_digit_count(raw) >= _PAN_MIN_DIGITS


def _may_hold_a_cvv(text: str) -> bool:
    """A CVV name's letters in ``text`` (lower case, separators taken out): False when ``_NAME_VALUE`` finds no CVV
    in it (ASCII text, nearly all, as bytes: a translate and a search in C)."""
    if text.isascii():
        return _CVV_LETTERS.search(text.encode("ascii").lower().translate(None, _SQUEEZED_OUT)) is not None
    return _CVV_LETTERS_TEXT.search(text.lower().translate(_SQUEEZE)) is not None


def _holds_a_secret(text: str) -> bool:
    """A known secret is in ``text``: a substring test each when they are few (cheaper than the pattern's search)."""
    secrets = _SECRETS_NOW[0]
    if len(secrets) <= _FEW_SECRETS:
        for secret in secrets:  # noqa: SIM110 (a loop: no generator made on every call)
            if secret in text:
                return True
        return False
    pattern = _SECRETS_FOUND[0]
    return pattern is not None and pattern.search(text) is not None


_FEW_SECRETS = 8
_ASCII_DIGIT_BYTES = b"0123456789"


def _digit_count(text: str) -> int:
    if text.isascii():
        return _ascii_digit_count(text.encode("ascii"))
    return len(_ANY_DIGIT.findall(text))


def _ascii_digit_count(raw: bytes) -> int:
    return len(raw) - len(raw.translate(None, _ASCII_DIGIT_BYTES))


def mask_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Mask every card number, every CVV value after a CVV name, each given secret and every known ``Secret`` in
    free text.  Text that holds none of them comes back as it was, character for character; masking only
    replaces characters (digits by ``*``, a value by ``***``), it never moves any."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, SECRET_MASK)
    text = _mask_secrets(text)
    if _may_hold_a_cvv(text):
        text = _mask_cvv_values(text)
    return _mask_card_numbers(text)


def cvvs_in(text: str) -> frozenset[str]:
    """The CVVs ``mask_text`` hides in ``text``: each number of 3 or 4 digits that the one tokenizer finds after a
    CVV name.  A report that shows them again without their name (pytest's ``assert '987' == '123'`` under the
    source line ``assert cvv2 == "123"``) hides them there too, with ``mask_cvvs``."""
    if not _may_hold_a_cvv(text):
        return frozenset()
    found = set()
    for match in _cvv_matches(text):
        value = next((value for value in match.group("v1", "v2", "v3", "v4", "v5") if value), "")
        if len(value) in _CVV_LENGTHS and ascii_digits(value):
            found.add(value)
    return frozenset(found)


_CVV_LENGTHS = (3, 4)


def mask_cvvs(text: str, cvvs: Collection[str]) -> str:
    """``text`` with each of ``cvvs`` (found by ``cvvs_in`` in the same report) masked where it stands as a number
    of its own (``'987'``, ``+ 987``), not inside a longer number or a word (``1987``, ``9.87``, ``x987``)."""
    shown = [cvv for cvv in cvvs if cvv in text]
    if not shown:
        return text
    numbers = "|".join(map(re.escape, sorted(shown, key=len, reverse=True)))
    return re.sub(rf"(?<![\w.])(?:{numbers})(?!\w|\.\d)", CVV_MASK, text)


def mask_path(path: str) -> str:
    """``mask_text`` for the path of a request, with the paths found clean remembered: a server sees the same few
    paths again and again (an operation and an endpoint id), and a clean one has nothing to hide to be kept."""
    clean = _CLEAN[0]
    if path in clean:
        return path
    masked = mask_text(path)
    if masked == path:
        _remember_clean(clean, (path,))
    return masked


# Texts found clean (``mask_text`` leaves them as they are), remembered for a while: ``mask_fields`` looks at the
# free-text values of a request (the simulator's journal line), then ``mask_value`` meets the same values as the
# columns of its row (``client_orderid``, ``email``...); the paths of requests come again and again.  Only texts
# with nothing to hide are kept (no card number, no CVV, no known secret), none longer than ``_LONGEST_CLEAN``;
# the set is replaced by an empty one when a secret becomes known, and emptied when it is full.
_CLEAN: list[set[str]] = [set()]
_MAX_CLEAN = 4096
_LONGEST_CLEAN = 256  # characters


def _remember_clean(clean: set[str], texts: Iterable[str]) -> None:
    """Remember ``texts`` in ``clean``, the set of texts found clean when their look began."""
    if len(clean) >= _MAX_CLEAN:
        clean.clear()
    clean.update([text for text in texts if len(text) <= _LONGEST_CLEAN])


def _cvv_matches(text: str) -> Iterator[re.Match[str]]:
    """The matches of ``_NAME_VALUE`` in ``text`` whose name is a CVV's, left to right.  The value of another name
    is read again (``{"note": "the payer typed CVV 986"}``, ``error=cvv2 987``): a CVV may be written in it."""
    at = 0
    while (match := _NAME_VALUE.search(text, at)) is not None:
        if is_cvv_name(match.group("name").rstrip("[]")):
            yield match
            at = match.end()
        elif _may_hold_a_cvv(text[match.end("name") : match.end() + _LONGEST_CVV_TAIL]):
            at = match.end("name")
        else:  # (most values: no CVV's letters in them, nor just after them)
            at = match.end()


_LONGEST_CVV_TAIL = 8  # characters of a CVV's name that may come after a value that holds its first letter


def _mask_cvv_values(text: str) -> str:
    """``text`` with the value of each CVV masked (``_cvv_matches``): the name kept, the value ``***``."""
    pieces: list[str] = []
    copied = 0
    for match in _cvv_matches(text):
        pieces += [text[copied : match.start()], _mask_cvv_match(match)]
        copied = match.end()
    return "".join([*pieces, text[copied:]]) if pieces else text


def _mask_cvv_match(match: re.Match[str]) -> str:
    """A CVV's match, its value masked (an empty value stays empty)."""
    name = match.group("name")
    head = name + match.group("close")
    if match.group("eq"):
        return f"{head}={CVV_MASK}"  # (``v1`` is never empty)
    if match.group("enc"):
        return f"{head}{match.group('enc')}{CVV_MASK}" if match.group("v2") else match.group(0)
    if match.group("blank"):
        return f"{head}{match.group('blank')}{CVV_MASK}"
    op = match.group("op")
    if match.group("vq") is not None:
        quote = match.group("vq")
        return f"{head}{op}{quote}{CVV_MASK if match.group('v3') else ''}{quote}"
    return f"{head}{op}{CVV_MASK}"


def _mask_card_numbers(text: str) -> str:
    """Every card number in ``text``, in any grouping, masked to its first six and last four digits.

    Digests, UUIDs and percent-escapes (but those of a space or a dash) are blanked out in a copy of the same length,
    so that their digits are no part of a number (an escaped space or dash is blanked as a separator); the digit
    groups of the copy are then read run by run, and
    the digits to hide are replaced in place in ``text`` (nothing else changes, nothing moves)."""
    if _digit_count(text) < _PAN_MIN_DIGITS:
        return text
    scan = text
    if "%" in text or _IDENTIFIER.search(text):
        blank = list(text)
        for pattern in (_IDENTIFIER, _ESCAPE):
            for found in pattern.finditer(text):
                joining = pattern is _ESCAPE and _JOINING_ESCAPE.fullmatch(found.group(0))
                blank[found.start() : found.end()] = ("\x01" if joining else "\0") * (found.end() - found.start())
        scan = "".join(blank)
    hidden: set[int] = set()
    for run in _DIGIT_RUN.finditer(scan):
        if run.end() - run.start() >= _PAN_MIN_DIGITS:
            hidden.update(_card_digits_in(run.group(0), run.start()))
    if not hidden:
        return text
    chars = list(text)
    for index in hidden:
        chars[index] = "*"
    return "".join(chars)


def _card_digits_in(run: str, offset: int) -> set[int]:
    """Positions (in the text) of the digits to hide in one run of digit groups (a number a card scheme issues:
    its first digit 2 to 6, and the Luhn check)."""
    if not run.isascii():  # (fullwidth and other decimal digits read as 0-9, one character each: nothing moves)
        run = "".join(str(int(char)) if char.isdecimal() else char for char in run)
    groups = [(m.start(), m.group(0)) for m in _DIGIT_GROUP.finditer(run)]
    seps = [run[groups[i][0] + len(groups[i][1]) : groups[i + 1][0]] for i in range(len(groups) - 1)]
    hidden: set[int] = set()

    def hide(positions: list[int]) -> None:
        hidden.update(offset + position for position in positions[6:-4])

    for start, digits in groups:  # one group: a number written whole, or one inside a longer run of digits
        size = len(digits)
        if size in _CARD_LENGTHS and digits[0] in _ISSUERS and luhn_ok(digits):
            hide(list(range(start, start + size)))
        if size > _HIDDEN_LENGTHS[0]:
            for first, length in _windows(size):
                window = digits[first : first + length]
                issued = window[:2] in ("34", "37") if length == 15 else window[0] in _ISSUERS
                if issued and luhn_ok(window):
                    hide(list(range(start + first, start + first + length)))
    for first in range(len(groups) - 1):  # two groups or more: a number written in groups
        total = len(groups[first][1])
        for last in range(first + 1, len(groups)):
            total += len(groups[last][1])
            if total > _CARD_LENGTHS.stop - 1:
                break
            if total < _CARD_LENGTHS.start:
                continue
            chosen = groups[first : last + 1]
            number = "".join(digits for _, digits in chosen)
            if (
                number[0] in _ISSUERS
                and _grouped_like_a_card([d for _, d in chosen], seps[first:last])
                and luhn_ok(number)
            ):
                hide([begin + i for begin, digits in chosen for i in range(len(digits))])
    return hidden


def _windows(size: int) -> list[tuple[int, int]]:
    """(first, length) of the windows strictly inside a group of ``size`` digits where a card number hides: the
    16 digits of most cards, the 15 of Amex (a very long group is searched at its two ends only)."""
    found = []
    for length in _HIDDEN_LENGTHS:
        if length >= size:
            continue
        firsts: range | list[int] = range(size - length + 1)
        if size > _LONGEST_SCANNED_GROUP:
            firsts = [0, size - length]
        found += [(first, length) for first in firsts]
    return found


def _grouped_like_a_card(groups: list[str], seps: list[str]) -> bool:
    """A card printed in groups (fours, Amex's 4-6-5) with one separator, or any other grouping of three digits
    or more per group (7+9, mixed separators)."""
    sizes = [len(group) for group in groups]
    if len(set(seps)) == 1 and (sizes == [4, 6, 5] or (all(s == 4 for s in sizes[:-1]) and 1 <= sizes[-1] <= 4)):
        return True
    return min(sizes) >= 3


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
