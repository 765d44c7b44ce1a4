"""Card data in other shapes, and masking that never damages text (issue 19, #4 and #5).

Card numbers written with dots, underscores, slashes, commas, tabs, double spaces, mixed separators, grouped
7+9, inside a longer run of digits or in fullwidth digits; CVVs under ``card[cvv]``, ``card.cvv``, ``cvv 2``,
``c_v_v`` or in free text; and text with a digest, a percent-escape and a card number together, which the
masking of issue 9 reordered.  Property: masking changes nothing in text without a card number and only ever
replaces digits in place.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.masking import (
    CVV_MASK,
    SECRET_MASK,
    Secret,
    _mask_card_numbers,
    is_cvv_name,
    mask_base_string,
    mask_fields,
    mask_text,
    mask_value,
)

PAN = "4538977399606732"
FULLWIDTH = PAN.translate(str.maketrans("0123456789", "０１２３４５６７８９"))


@pytest.mark.parametrize(
    "written",
    [
        "4538.9773.9960.6732",
        "4538_9773_9960_6732",
        "4538/9773/9960/6732",
        "4538,9773,9960,6732",
        "4538\t9773\t9960\t6732",
        "4538  9773  9960  6732",
        "4538 9773-9960 6732",
        "4538 - 9773 - 9960 - 6732",
        "4538977 399606732",
        f"00{PAN}99",
        f"ref{PAN}",
        FULLWIDTH,
        f"００{FULLWIDTH}９９",
        "4538%209773%209960%206732",
        "4538%25209773%25209960%25206732",
    ],
    ids=["dots", "underscores", "slashes", "commas", "tabs", "double spaces", "mixed", "spaced dashes", "7+9",
         "inside a longer run", "glued to a word", "fullwidth", "fullwidth inside a longer run", "escaped spaces",
         "twice-escaped spaces"],
)  # fmt: skip
def test_a_card_number_in_any_separator_form_is_masked(written: str) -> None:
    masked = mask_text(f"note: {written} end")
    digits = re.sub(r"\D", "", masked.translate(str.maketrans("０１２３４５６７８９", "0123456789")))
    assert PAN not in digits and "******" not in written and masked.count("*") >= 6, masked
    assert masked.startswith("note: ") and masked.endswith(" end") and len(masked) == len(f"note: {written} end")


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("card[cvv]=987&amount=1", f"card[cvv]={CVV_MASK}&amount=1"),
        ("card.cvv=987", f"card.cvv={CVV_MASK}"),
        ("cvv 2: 987", f"cvv 2: {CVV_MASK}"),
        ("c_v_v=987", f"c_v_v={CVV_MASK}"),
        ("the payer typed cvv2: 987 twice", f"the payer typed cvv2: {CVV_MASK} twice"),
        ('{"card[cvv]": "987"}', f'{{"card[cvv]": "{CVV_MASK}"}}'),
        ("cardCvv2%3D987%26x", f"cardCvv2%3D{CVV_MASK}%26x"),
        ("the CVV: never printed", "the CVV: never printed"),
        ("approved-4-digit-cvv: approved with a 4-digit CVV2", "approved-4-digit-cvv: approved with a 4-digit CVV2"),
    ],
    ids=["brackets", "dotted", "cvv 2", "spelled apart", "free text", "json", "camel case in a base string",
         "prose stays", "an outcome name is no field"],
)  # fmt: skip
def test_a_cvv_under_any_name_is_masked_and_prose_is_not(text: str, masked: str) -> None:
    assert mask_text(text) == masked


def test_cvv_names_and_what_is_not_one() -> None:
    for name in ("cvv", "CVV2", "card_cvv", "cardCvv", "card[cvv]", "card.cvv", "cvv 2", "c_v_v", "c v v", "cvc",
                 "security_code", "payerCardCvv2", "x_CvV"):  # fmt: skip
        assert is_cvv_name(name), name
    for name in ("approved-4-digit-cvv", "service", "discover", "cv", "civic", "cvv_is_three_digits_long"):
        assert not is_cvv_name(name), name
    assert mask_value("approved-4-digit-cvv", "approved with a 4-digit CVV2") == "approved with a 4-digit CVV2"
    assert mask_value("approved-4-digit-cvv", "approved, CVV2 1234") == f"approved, CVV2 {CVV_MASK}"


def test_a_card_number_as_a_field_name_or_in_a_path_is_masked() -> None:
    assert mask_fields({PAN: "1", "amount": "1.00"}) == {"453897******6732": "1", "amount": "1.00"}
    from toolkit.simulator.journal import entry, sent

    line = entry(at=0.0, login="m", operation="sale", path=f"/paynet/api/v2/sale/{PAN}", http_status=400,
                 body={"type": "validation-error"}, sent=sent([(PAN, "x")]), warnings=[])  # fmt: skip
    assert PAN not in json.dumps(line)


def test_the_issue_text_is_masked_in_place_and_never_reordered() -> None:
    """A 32+ hex word, a %40 escape and a card number: issue 9's masking swapped pieces of such text."""
    digest = "5e8aa6b0c5a2f1e0d9c8b7a6f5e4d3c2b1a09f8e"
    text = f"payer%40example.com&x=1&control={digest}&pan={PAN}"
    assert mask_text(text) == f"payer%40example.com&x=1&control={digest}&pan=453897******6732"
    base = (
        "POST&http%3A%2F%2F127.0.0.1%3A8080%2Fpaynet%2Fapi%2Fv4%2Fpayout%2F1001&amount%3D10.42%26"
        f"credit_card_number%3D{PAN}%26email%3Dpayer%2540example.com%26oauth_nonce%3D{digest}"
    )
    shown = mask_base_string(base)
    assert shown == base.replace(PAN, "453897******6732")


def test_known_secrets_are_masked_in_any_text() -> None:
    secret = Secret("K3Y-0F-A-MERCHANT-7731")
    assert (
        mask_text(f"settings = {{'control_key': '{secret.reveal()}'}}")
        == f"settings = {{'control_key': '{SECRET_MASK}'}}"
    )
    assert mask_fields({"note": secret.reveal()}) == {"note": SECRET_MASK}
    assert mask_text("a short one: k3y") == "a short one: k3y"  # (Secret("k3y") would be too short to look for)


# --- properties ------------------------------------------------------------------------------------------------

SAFE_SEPARATORS = [":", ";", "=", "&", "?", "\n", "|", " x ", "/a/", "#"]
pieces = st.one_of(
    st.from_regex(r"[A-Za-z][A-Za-z ]{0,12}", fullmatch=True).filter(lambda w: "cv" not in w.lower()),
    st.integers(0, 10**12 - 1).map(str),  # at most 12 digits: no card number fits
    st.from_regex(r"[0-9a-f]{32,48}", fullmatch=True),  # digests: kept whole
    st.from_regex(r"%(25)?[0-9A-F]{2}", fullmatch=True),  # escapes
    st.sampled_from(["2026-11-25", "12:00:01", "10.42 EUR", "8056020", "1795647864"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(pieces, max_size=12), st.lists(st.sampled_from(SAFE_SEPARATORS), min_size=12, max_size=12))
def test_masking_is_the_identity_on_text_without_a_card_number(parts: list[str], joins: list[str]) -> None:
    """Pieces that hold no card number, joined by what never joins digit groups into one: nothing changes."""
    text = "".join(part + join for part, join in zip(parts, joins, strict=False))
    assert mask_text(text) == text


near_cards = st.text(alphabet="0123456789０１２３ -._/,+%25Dd\tabcdefx=&:", max_size=120)


@settings(max_examples=500, deadline=None)
@given(st.one_of(near_cards, st.text(max_size=80)))
def test_card_masking_only_replaces_digits_in_place(text: str) -> None:
    """Whatever the text: the same length, and every character that changed was a digit and is now ``*``."""
    masked = _mask_card_numbers(text)
    assert len(masked) == len(text)
    for before, after in zip(text, masked, strict=True):
        assert before == after or (before.isdecimal() and after == "*")


@pytest.mark.parametrize(
    "number",
    ["1732600000001", "1732600000019", "9876543210003", "0000000000000", "8000000000000003", "7000000000000005"],
)
def test_a_luhn_valid_number_no_card_scheme_issues_is_kept(number: str) -> None:
    """A millisecond timestamp used as an order id passes the Luhn check one time in ten: card numbers begin
    with 2 to 6 (Mir, Amex and the travel cards, Visa, Mastercard, Discover and UnionPay), so it is no card number
    and stays as written."""
    assert mask_text(f"order {number}") == f"order {number}"
    grouped = f"order {number[:4]} {number[4:8]} {number[8:]}"
    assert mask_text(grouped) == grouped


def test_a_card_number_of_each_scheme_is_still_masked() -> None:
    for number in ("2200000000000004", "378282246310005", "4538977399606732", "5555555555554444", "6011111111111117"):
        assert number not in mask_text(f"card {number}"), number
