"""Masking: card data and secrets never show in logs, reports and reprs."""

from __future__ import annotations

import pytest

from tests.vector_files import load_vectors
from toolkit.masking import (
    CVV_MASK,
    SECRET_MASK,
    Secret,
    mask_base_string,
    mask_fields,
    mask_html,
    mask_pan,
    mask_path,
    mask_text,
    mask_value,
)

PAN = "4444555566661111"


@pytest.mark.parametrize(
    ("number", "masked"),
    [
        (PAN, "444455******1111"),
        ("4538977399606732", "453897******6732"),
        ("123", "***"),
        ("4444-5555", "*********"),
        ("4444555566661\u00b211", "*" * 16),
    ],
    ids=["16 digits", "another", "short", "not digits", "superscript digit"],
)
def test_mask_pan_keeps_bin_and_last_four_only(number, masked):
    assert mask_pan(number) == masked


def test_mask_fields_masks_card_fields_by_name():
    masked = mask_fields(
        [
            ("credit_card_number", PAN),
            ("cvv2", "123"),
            ("destination-card-no", "4444000011118888"),
            ("amount", "10.42"),
            ("cvv2", ""),
        ]
    )
    assert masked["credit_card_number"] == "444455******1111"
    assert masked["destination-card-no"] == "444400******8888"
    assert masked["amount"] == "10.42"
    assert mask_value("cvv2", "123") == CVV_MASK
    assert mask_value("cvv2", "") == ""


@pytest.mark.parametrize(
    ("text", "hidden", "shown"),
    [
        (f"card {PAN} declined", PAN, "444455******1111"),
        ("cvv2=123&amount=1", "cvv2=123", "cvv2=***"),
        ("CVV=9876", "9876", "CVV=***"),
        ("order 8056020 and 1234567890123456", None, "1234567890123456"),  # not Luhn-valid: not a card
        (f"control=0e9c404899332408589fa1d2c3b4a5968778695a4b3c&pan={PAN}", PAN, "0e9c404899332408589fa1d2c"),
        (f"{PAN}deadbeef", PAN, "444455******1111deadbeef"),
    ],
    ids=[
        "card in text",
        "cvv2 in a query",
        "upper case cvv",
        "other long numbers stay",
        "a digest stays whole",
        "a card before a short word",
    ],
)
def test_mask_text(text, hidden, shown):
    masked = mask_text(text)
    assert shown in masked
    if hidden:
        assert hidden not in masked


def test_mask_text_hides_given_secrets():
    assert mask_text("key=K3Y-1 and K3Y-1", ["K3Y-1", ""]) == f"key={SECRET_MASK} and {SECRET_MASK}"


def test_secret_never_shows_itself():
    secret = Secret("B17F59B4-A7DC-41B4-8FF9-37D986B43D20")
    for shown in (repr(secret), str(secret), f"{secret}", repr([secret]), repr({"k": secret})):
        assert "B17F59B4" not in shown
    assert secret.reveal() == "B17F59B4-A7DC-41B4-8FF9-37D986B43D20"
    assert secret == Secret("B17F59B4-A7DC-41B4-8FF9-37D986B43D20") and secret != Secret("other")
    assert not Secret("")


@pytest.mark.parametrize("vector", load_vectors("oauth.json")["vectors"], ids=lambda v: v["case"])
def test_base_string_masking_hides_card_fields_and_keeps_the_rest(vector):
    masked = mask_base_string(vector["base_string"])
    body = vector["body"]
    if "credit_card_number" in body:
        assert "4444555566661111" not in masked and "credit_card_number%3D444455******1111" in masked
    if "cvv2" in body:
        assert "cvv2%3D123" not in masked and "cvv2%3D***%26" in masked
    if "destination-card-no" in body:
        assert "4444000011118888" not in masked
    untouched = [p for p in vector["base_string"].split("%26") if not p.startswith(("credit_card", "cvv2", "dest"))]
    assert all(part in masked for part in untouched)
    assert masked.split("&")[:2] == vector["base_string"].split("&")[:2]


def test_mask_html_masks_card_inputs_by_name_and_card_numbers_anywhere():
    page = (
        '<input name="credit_card_number" type="text" value="4444555566661112">'  # mistyped: fails Luhn
        '<input id=\'cvv2\' value=\'123\'><input name="amount" value="10.00"><input name="cvv2" value="">'
        f"<p>card {PAN}</p>"
    )
    masked = mask_html(page)
    assert masked == (
        '<input name="credit_card_number" type="text" value="444455******1112">'
        '<input id=\'cvv2\' value=\'***\'><input name="amount" value="10.00"><input name="cvv2" value="">'
        "<p>card 444455******1111</p>"
    )


def test_a_path_is_masked_and_a_clean_one_remembered_until_a_new_secret_comes():
    assert mask_path("/paynet/api/v2/status/4444555566661111") == "/paynet/api/v2/status/444455******1111"
    assert mask_path("/paynet/api/v2/status/4444555566661111") == "/paynet/api/v2/status/444455******1111"
    clean = "/paynet/api/v2/status/tok-path-secret-7Qz"
    assert mask_path(clean) == clean and mask_path(clean) == clean  # (the second time: remembered)
    Secret("tok-path-secret-7Qz")  # a secret that becomes known later is masked in a path seen clean before
    assert mask_path(clean) == f"/paynet/api/v2/status/{SECRET_MASK}"


def test_a_field_found_clean_is_stored_as_it_is_until_a_new_secret_comes():
    from toolkit.simulator.storage import stored_text

    fields = [("client_orderid", "order-tok-field-secret-9Wq"), ("email", "a@example.com"), ("cvv2", "123")]
    assert mask_fields(fields) == {"client_orderid": "order-tok-field-secret-9Wq", "email": "a@example.com",
                                   "cvv2": "***"}  # fmt: skip
    assert stored_text("client_orderid", "order-tok-field-secret-9Wq") == "order-tok-field-secret-9Wq"  # (remembered)
    assert stored_text("cvv2", "123") == "***"  # a name that hides its value hides it, whatever was seen before
    assert stored_text("credit_card_number", "4444555566661111") == "444455******1111"
    Secret("tok-field-secret-9Wq")  # a secret that becomes known later is masked in a value seen clean before
    assert stored_text("client_orderid", "order-tok-field-secret-9Wq") == f"order-{SECRET_MASK}"
    assert mask_fields(fields)["client_orderid"] == f"order-{SECRET_MASK}"


@pytest.mark.parametrize("few", [0, 1_000], ids=["by the pattern", "one by one"])
def test_the_quick_look_finds_a_known_secret_however_many_are_known(few, monkeypatch):
    from toolkit import masking

    monkeypatch.setattr(masking, "_FEW_SECRETS", few)
    Secret("quick-look-secret-4Rt")
    assert masking._may_need_masking("a note with quick-look-secret-4Rt inside")
    assert not masking._may_need_masking("a note with quick-look-secret inside")
    assert mask_fields({"order_desc": "quick-look-secret-4Rt"}) == {"order_desc": SECRET_MASK}
