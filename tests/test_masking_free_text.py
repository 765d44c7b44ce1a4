"""A CVV in free text, with or without a colon (issue 34, point 8): ``CVV 986``, ``cvv2 987``, ``cvv2 = "987"``.

The one tokenizer of ``toolkit.masking`` reads a CVV word (cvv, cvv2, cvc, cvc2, cid, security code, any case)
then its value of 3 or 4 digits after any usual separator (blanks only, ``=``, ``:``, ``==``, quotes); the word
is kept, the value masked.  Prose about a CVV (``CVV is required``, ``cvv 3-4 digits``) is left as it is.  Before,
only ``name=value``, ``name: 123`` and quoted JSON were read: ``CVV 986`` was stored and shown in clear.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.test_masking_property import SETTINGS, cvv_names
from toolkit.masking import CVV_MASK, mask_fields, mask_text
from toolkit.simulator.journal import entry, sent


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("CVV 986", f"CVV {CVV_MASK}"),
        ("cvv2 987", f"cvv2 {CVV_MASK}"),
        ("CVV2=987", f"CVV2={CVV_MASK}"),
        ('"cvv2": "987"', f'"cvv2": "{CVV_MASK}"'),
        ('cvv2 = "987"', f'cvv2 = "{CVV_MASK}"'),
        ("cvv:986", f"cvv:{CVV_MASK}"),
        ("the payer typed CVV 986 twice.", f"the payer typed CVV {CVV_MASK} twice."),
        ("CVC2 0987, expiry 12/29", f"CVC2 {CVV_MASK}, expiry 12/29"),
        ("Amex CID 1234", f"Amex CID {CVV_MASK}"),
        ("card_cid=1234&amount=1", f"card_cid={CVV_MASK}&amount=1"),
        ("security code 123 was typed", f"security code {CVV_MASK} was typed"),
        ("Security-Code: 4321", f"Security-Code: {CVV_MASK}"),
        ("cvv2\t987", f"cvv2\t{CVV_MASK}"),
        ("cvv 2 987", f"cvv 2 {CVV_MASK}"),
        ("cvv2       = '987'", f"cvv2       = '{CVV_MASK}'"),
        ('assert fields["cvv2"] == "987"', f'assert fields["cvv2"] == "{CVV_MASK}"'),
        ("cvv2 == 987", f"cvv2 == {CVV_MASK}"),
        ('CVV2="987"', f'CVV2="{CVV_MASK}"'),
        ("order 1234 cvv 987", f"order 1234 cvv {CVV_MASK}"),
        ('{"note": "the payer typed CVV 986"}', f'{{"note": "the payer typed CVV {CVV_MASK}"}}'),
        ("error=cvv2 987", f"error=cvv2 {CVV_MASK}"),
    ],
    ids=["CVV and a blank", "cvv2 and a blank", "equals", "JSON", "Python source", "colon, no blank", "in a sentence",
         "CVC2 of four digits", "Amex CID", "cid in a query", "security code", "Security-Code with a colon", "a tab",
         "cvv 2 and a blank", "pytest's locals", "an assertion", "two equals", "equals and quotes",
         "after another number", "in another field's JSON value", "in another field's value"],
)  # fmt: skip
def test_a_cvv_after_its_word_is_masked_and_the_word_kept(text: str, masked: str) -> None:
    assert mask_text(text) == masked


@pytest.mark.parametrize(
    "text",
    [
        "CVV is required",
        "cvv2 must be 3 digits",
        "cvv 3-4 digits",
        "Enter the CVV2 (3 or 4 digits) printed on the back",
        "the CVV: never printed",
        "cvv 1234567",
        "CVV 2026-11-28",
        "an acid 123 and placid: 123",
        "approved with a 4-digit CVV2",
        "cvc 12",
        "security code of 3 digits",
    ],
    ids=["is required", "must be 3 digits", "a range", "a hint", "a colon then prose", "a longer number", "a date",
         "cid inside a word", "an outcome's description", "two digits", "security code in prose"],
)  # fmt: skip
def test_prose_about_a_cvv_is_left_as_it_is(text: str) -> None:
    assert mask_text(text) == text


def test_a_cvv_in_free_text_is_neither_stored_nor_journaled() -> None:
    """The simulator's journal and stored rows go through ``mask_fields`` and ``mask_text``."""
    fields = [("order_desc", "payer says CVV 986"), ("comment", "cvv2 987 typed twice"), ("amount", "1.00")]
    assert mask_fields(fields) == {"order_desc": f"payer says CVV {CVV_MASK}",
                                   "comment": f"cvv2 {CVV_MASK} typed twice", "amount": "1.00"}  # fmt: skip
    line = entry(at=0.0, login="m", operation="sale", path="/paynet/api/v2/sale/1", http_status=400,
                 body={"type": "validation-error", "error-message": "order_desc: CVV 986 is not allowed"},
                 sent=sent(fields), warnings=["comment holds cvv2 987"])  # fmt: skip
    shown = str(line)
    assert "986" not in shown and "987" not in shown and f"CVV {CVV_MASK}" in shown


# Words around the CVV: no CVV name, and no digit (a run of them may be a Luhn-valid card number, which masking
# rightly masks too: hypothesis found "3338301234563364" once)
words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Nd")), max_size=20).filter(
    lambda w: not any(part in w.lower() for part in ("cv", "cid", "csc", "security", "verification"))
)
SHAPES = [" ", "  ", "\t", "=", ":", ": ", " = ", " == ", '="', ': "', " = '"]


@SETTINGS
@given(words, cvv_names(), st.sampled_from(SHAPES), st.text("0123456789", min_size=3, max_size=4), words)
def test_any_cvv_name_then_any_separator_then_a_value_is_masked(before, name, shape, cvv, after):
    quote = shape[-1] if shape[-1] in "\"'" else ""
    text = f"{before} {name}{shape}{cvv}{quote} {after}"
    masked = mask_text(text)
    assert f"{name}{shape}{CVV_MASK}{quote} " in masked
    assert masked == text.replace(f"{name}{shape}{cvv}{quote} ", f"{name}{shape}{CVV_MASK}{quote} ", 1)


def test_the_cvvs_of_a_text_are_found_and_masked_where_they_show_again_alone() -> None:
    """pytest's explanation shows the values of ``assert cvv2 == "654"`` without their name."""
    from toolkit.masking import cvvs_in, mask_cvvs

    report = "cvv2 = \"987\"\n>   assert cvv2 == \"654\"\nE   assert '987' == '654'\nE     - 654\nE     + 987"
    assert cvvs_in(report) == {"987", "654"}
    assert cvvs_in("CVV is required, amount 987") == frozenset()
    shown = mask_cvvs(mask_text(report), cvvs_in(report))
    assert "987" not in shown and "654" not in shown and f"E   assert '{CVV_MASK}' == '{CVV_MASK}'" in shown
    kept = "order 19870, amount 9.87, id x987, line 6543"
    assert mask_cvvs(kept, {"987", "654"}) == kept
