"""The shortcuts of the gateway's hot path give what the plain ways give (issue 12).

- ``limits._split_form`` unquotes a whole body at once when it can: the pairs are
  ``urllib.parse.parse_qsl``'s, for bodies made of escapes, separators and multi-byte characters;
- ``render.new_serial`` writes a version 4 UUID as ``str(uuid.uuid4())`` does;
- ``fields.luhn_ok`` and ``fields.card_brand`` answer as the plain rules do;
- ``wire.encode_json`` writes what ``json.dumps`` writes.

(``Engine.latest_of``, status in one statement, is held to the order's latest transaction by
``test_api_followups.py::test_the_order_status_is_its_latest_transaction_and_a_request_keeps_its_own``;
``mask_fields`` to ``mask_value`` of each field by ``tests/test_masking_property.py``.)
"""

from __future__ import annotations

import json
import uuid
from urllib.parse import parse_qsl

from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.fields import _BRANDS, card_brand, luhn_ok
from toolkit.simulator.web import render
from toolkit.simulator.web.limits import _split_form
from toolkit.wire import encode_json

# Pieces of form bodies: separators, their escapes (%26, %3D), escapes of multi-byte characters cut anywhere,
# plus signs, a lone percent sign, raw non-ASCII text.
PIECES = ["a", "b=", "=", "&", "+", "%", "%2", "%26", "%3D", "%3d", "%C3", "%A9", "%C3%A9", "%E2%82%AC", "%25", "%2B"]
PIECES += ["%FF", "%41", " ", "é", "€", "x%20y", "", "%F0%9F", "%98%80", "😀", "%ED%A0%80"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=16))
def test_split_form_gives_the_pairs_parse_qsl_gives(pieces: list[str]) -> None:
    body = "".join(pieces)
    assert _split_form(body) == parse_qsl(body, keep_blank_values=True)


def test_split_form_does_not_unquote_a_separator_into_the_pairs() -> None:
    assert _split_form("a=1%262&b=x%3Dy+z&c=%40") == [("a", "1&2"), ("b", "x=y z"), ("c", "@")]
    assert _split_form("a=x+y&b=j%40example.com") == [("a", "x y"), ("b", "j@example.com")]


def test_serial_numbers_are_version_4_uuids() -> None:
    serials = {render.new_serial() for _ in range(2000)}
    assert len(serials) == 2000
    for serial in serials:
        parsed = uuid.UUID(serial)
        assert str(parsed) == serial and parsed.version == 4 and parsed.variant == uuid.RFC_4122


def _luhn_by_the_book(number: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(number)):
        digit = int(char)
        if index % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def _brand_by_the_list(number: str) -> str:
    return next((brand for brand, prefixes in _BRANDS if number.startswith(prefixes)), "UNKNOWN")


@settings(max_examples=500, deadline=None)
@given(st.text("0123456789", max_size=20) | st.text("0123456789\u0660\u0661\u0662\u0669\u0967", max_size=19))
def test_luhn_and_brand_give_what_the_plain_rules_give(number: str) -> None:
    """``luhn_ok`` sums bytes and ``card_brand`` looks prefixes up in a table: the same answers as the plain
    rules (digits of other scripts included: masking checks every run of ``\\d``)."""
    assert luhn_ok(number) == _luhn_by_the_book(number)
    assert card_brand(number) == _brand_by_the_list(number)
    for prefix in ("6011", "65", "2221", "2720", "2721", "5", "56", "6"):  # brands that share leading digits
        assert card_brand(prefix + number) == _brand_by_the_list(prefix + number)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.text(max_size=20) | st.integers() | st.lists(st.text(max_size=3))))
def test_json_answers_are_what_json_dumps_writes(fields: dict[str, object]) -> None:
    """``wire.encode_json`` writes text values itself (escaped by the encoder's own function)."""
    assert encode_json(fields) == json.dumps(fields, ensure_ascii=False)  # type: ignore[arg-type]
