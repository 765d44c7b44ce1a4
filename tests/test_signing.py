"""Signing against the vectors (exact), and a false-positive test for every algorithm."""

from __future__ import annotations

import random

import pytest

from tests.independent import sha1_hex
from tests.vector_files import VECTORS, load_vectors
from toolkit import demo
from toolkit.keys import load_private_key, load_public_key
from toolkit.money import MoneyError
from toolkit.operations import get_operation
from toolkit.signing import (
    OAuthParams,
    authorization_header,
    callback_control,
    control_checksum,
    control_for,
    control_parts,
    make_oauth_params,
    oauth_params_from_header,
    parse_authorization_header,
    sign_hmac_sha1,
    sign_rsa_sha256,
    signature_base_string,
    verify_callback_control,
    verify_control,
    verify_hmac_sha1,
    verify_rsa_sha256,
)

CONTROL = load_vectors("control.json")
# behaviour section 11's formulas (made for gatekit with openssl, the same meta as control.json)
FAMILY = load_vectors("control-family.json")
CONTROL_VECTORS = [*CONTROL["vectors"], *FAMILY["vectors"]]
CALLBACK = load_vectors("callback.json")
OAUTH = load_vectors("oauth.json")
KEY = CONTROL["meta"]["merchant_control_key"]
LOGIN = CONTROL["meta"]["login"]

# --- 5.1 control: every vector, exact ------------------------------------------------------------


@pytest.mark.parametrize("vector", CONTROL_VECTORS, ids=[v["case"] for v in CONTROL_VECTORS])
def test_control_checksum_of_each_vector_is_exact(vector):
    *parts, key = vector["parts"]
    assert "".join(vector["parts"]) == vector["input"]
    assert control_checksum(parts, key) == vector["sha1_hex"]


# Each vector case read through the catalogue: operations, the request fields, the id in the path.
FOLLOW_UP = {"client_orderid": "inv-794772", "orderid": "8056020"}
SALE_FIELDS = {"client_orderid": "inv-794772", "amount": "10.00", "currency": "EUR", "email": "john.smith@example.com"}
CATALOGUE_CASES = {
    "sale, doc example": (
        ("sale",),
        {"client_orderid": "902B4FF5", "amount": "10.42", "currency": "EUR", "email": "john.smith@gmail.com"},
        "1111",
    ),
    "sale / preauth / sale-form / preauth-form": (
        ("sale", "preauth", "sale_form", "preauth_form", "transfer_form"),  # behaviour 12: the sale-form control
        SALE_FIELDS,
        "51494",
    ),
    "account-verification(-form)": (
        ("account_verification", "account_verification_form"),
        {"client_orderid": "inv-794772", "email": "john.smith@example.com"},
        "51494",
    ),
    "capture partial": (("capture",), {**FOLLOW_UP, "amount": "2.50", "currency": "EUR"}, "51494"),
    "capture full (no amount sent)": (("capture",), FOLLOW_UP, "51494"),
    "return partial": (("return",), {**FOLLOW_UP, "amount": "0.99", "currency": "USD"}, "51494"),
    "return full (no amount sent)": (("return",), FOLLOW_UP, "51494"),
    "void": (("void",), FOLLOW_UP, "51494"),
    "status by orderid": (("status",), FOLLOW_UP, "51494"),
    "status by client_orderid only": (("status",), {"client_orderid": "inv-794772"}, "51494"),
    "create-card-ref v2": (("create_card_ref",), FOLLOW_UP, "51494"),
    "make-rebill": (
        ("make_rebill", "make_rebill_sale", "make_rebill_preauth"),  # behaviour 11: "as make-rebill"
        {"client_orderid": "inv-794772", "cardrefid": "1679215", "amount": "19.99", "currency": "EUR"},
        "51494",
    ),
    "get-card-info": (("get_card_info",), {"cardrefid": "1679215"}, "51494"),
    "transfer-by-ref": (
        ("transfer_by_ref",),
        {
            "client_orderid": "inv-794773",
            "source-card-ref-id": "1679215",
            "destination-card-ref-id": "1679216",
            "amount": "19.99",
            "currency": "EUR",
        },
        "51494",
    ),
    "transfer-by-ref without a source": (
        ("transfer_by_ref",),
        {"client_orderid": "inv-794774", "destination-card-ref-id": "1679216", "amount": "19.99", "currency": "EUR"},
        "51494",
    ),
    "3DS upload (method-url / cres / pares)": (
        ("upload_method_url_result", "upload_cres_result", "upload_pares_result"),
        {"client-order-id": "inv-794772", "orderid": "8056020"},  # the vector's formula spells it so
        "51494",
    ),
}
CATALOGUE_PARAMS = [
    pytest.param(vector, op_name, fields, endpoint, id=f"{op_name}: {vector['case']}")
    for vector in CONTROL_VECTORS
    for op_name, fields, endpoint in [
        (name, CATALOGUE_CASES[vector["case"]][1], CATALOGUE_CASES[vector["case"]][2])
        for name in CATALOGUE_CASES[vector["case"]][0]
    ]
]


def test_every_control_vector_is_read_through_the_catalogue():
    assert {v["case"] for v in CONTROL_VECTORS} == set(CATALOGUE_CASES)
    assert FAMILY["meta"] == {**CONTROL["meta"], "note": FAMILY["meta"]["note"]}


@pytest.mark.parametrize(("vector", "op_name", "fields", "endpoint"), CATALOGUE_PARAMS)
def test_catalogue_formula_gives_the_vector_control(vector, op_name, fields, endpoint):
    op = get_operation(op_name)
    parts = control_parts(op.control, fields, endpoint_id=endpoint, login=LOGIN)
    assert "".join(value for _, value in parts) + KEY == vector["input"]
    assert control_for(op, fields, endpoint_id=endpoint, login=LOGIN, control_key=KEY) == vector["sha1_hex"]
    signed = {**fields, "control": vector["sha1_hex"].upper()}  # hex compared case-insensitively
    assert verify_control(op, signed, endpoint_id=endpoint, login=LOGIN, control_key=KEY)


def test_control_false_positives_wrong_key_and_tampered_fields():
    sale = get_operation("sale")
    fields = {**SALE_FIELDS, "control": "f8a4ed0a62567d2b2363f4da9f0952d1fd556a26"}
    assert verify_control(sale, fields, endpoint_id="51494", login=LOGIN, control_key=KEY)
    assert not verify_control(sale, fields, endpoint_id="51494", login=LOGIN, control_key=KEY + "x")
    assert not verify_control(sale, {**fields, "amount": "10.01"}, endpoint_id="51494", login=LOGIN, control_key=KEY)
    assert not verify_control(sale, fields, endpoint_id="51495", login=LOGIN, control_key=KEY)
    assert not verify_control(sale, {**fields, "control": ""}, endpoint_id="51494", login=LOGIN, control_key=KEY)


def test_control_parts_refuse_a_missing_formula_field_and_a_bad_amount():
    sale = get_operation("sale")
    with pytest.raises(KeyError, match="email"):
        control_parts(
            sale.control, {"client_orderid": "a", "amount": "1", "currency": "EUR"}, endpoint_id="1", login=""
        )
    with pytest.raises(MoneyError, match="amount"):
        control_parts(sale.control, {**SALE_FIELDS, "amount": "10.005"}, endpoint_id="1", login="")


def test_lenient_control_parts_sign_what_is_there():
    sale = get_operation("sale")
    fields = {"client_orderid": "a", "amount": "10.005", "currency": "EUR"}
    parts = control_parts(sale.control, fields, endpoint_id="1", login="", strict=False)
    assert parts == [("endpointId", "1"), ("client_orderid", "a"), ("amount", "10.005"), ("email", "")]


def test_control_parts_ignore_blanks_around_values():
    sale = get_operation("sale")
    padded = {name: f" {value} " for name, value in SALE_FIELDS.items()}
    assert control_for(sale, padded, endpoint_id="51494", login=LOGIN, control_key=KEY) == (
        "f8a4ed0a62567d2b2363f4da9f0952d1fd556a26"
    )


def test_control_for_an_oauth_operation_is_refused():
    with pytest.raises(ValueError, match="payout is not signed with a control"):
        control_for(get_operation("payout"), {}, endpoint_id="1", login="", control_key=KEY)


# --- callback and redirect control -----------------------------------------------------------------


@pytest.mark.parametrize("vector", CALLBACK["vectors"], ids=[v["case"] for v in CALLBACK["vectors"]])
def test_callback_control_of_each_vector_is_exact(vector):
    status, orderid, client_orderid, key = vector["parts"]
    assert callback_control(status, orderid, client_orderid, key) == vector["sha1_hex"] == sha1_hex(vector["input"])
    params = {"status": status, "orderid": orderid, "client_orderid": client_orderid, "control": vector["sha1_hex"]}
    assert verify_callback_control(params, key)


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({}, KEY + "0"),
        ({"status": "approved"}, KEY),
        ({"orderid": "8056021"}, KEY),
        ({"control": ""}, KEY),
    ],
    ids=["wrong key", "tampered status", "tampered orderid", "no control"],
)
def test_callback_control_false_positives(change, key):
    declined = next(v for v in CALLBACK["vectors"] if v["parts"][0] == "declined")
    params = {
        "status": "declined",
        "orderid": "8056020",
        "client_orderid": "inv-794772",
        "control": declined["sha1_hex"],
    }
    assert verify_callback_control(params, KEY)
    assert not verify_callback_control({**params, **change}, key)


def test_the_hosted_fields_return_is_verified_by_its_merchant_order():
    """hosted-fields.md section 8: the payer's browser posts ``merchant_order`` in place of ``client_orderid``."""
    declined = next(v for v in CALLBACK["vectors"] if v["parts"][0] == "declined")
    params = {
        "status": "declined",
        "orderid": "8056020",
        "merchant_order": "inv-794772",
        "control": declined["sha1_hex"],
    }
    assert verify_callback_control(params, KEY)
    assert not verify_callback_control({**params, "merchant_order": "inv-794773"}, KEY)
    assert not verify_callback_control({**params, "client_orderid": "inv-794773"}, KEY)  # (client_orderid first)


# --- 5.2 OAuth: every vector, exact -----------------------------------------------------------------


def _params(vector) -> OAuthParams:
    oauth = vector["oauth"]
    return OAuthParams(
        oauth["oauth_consumer_key"],
        oauth["oauth_signature_method"],
        oauth["oauth_timestamp"],
        oauth["oauth_nonce"],
        oauth["oauth_version"],
    )


def _base(vector, *, url: str | None = None, body: dict[str, str] | None = None) -> str:
    pairs = list((body if body is not None else vector["body"]).items())
    return signature_base_string(vector["method"], url or vector["url"], pairs, _params(vector))


def _sign(vector, base: str) -> str:
    if vector["oauth"]["oauth_signature_method"] == "HMAC-SHA1":
        return sign_hmac_sha1(base, vector["hmac_key"].removesuffix("&"))
    return sign_rsa_sha256(base, load_private_key(VECTORS / vector["private_key_file"]))


def _verify(vector, base: str, signature: str) -> bool:
    if vector["oauth"]["oauth_signature_method"] == "HMAC-SHA1":
        return verify_hmac_sha1(base, signature, vector["hmac_key"].removesuffix("&"))
    return verify_rsa_sha256(base, signature, load_public_key(VECTORS / "rsa-test-public.pem"))


OAUTH_IDS = [v["case"] for v in OAUTH["vectors"]]


@pytest.mark.parametrize("vector", OAUTH["vectors"], ids=OAUTH_IDS)
def test_base_string_of_each_vector_is_exact(vector):
    assert _base(vector) == vector["base_string"]


@pytest.mark.parametrize("vector", OAUTH["vectors"], ids=OAUTH_IDS)
def test_signature_of_each_vector_is_exact(vector):
    assert _sign(vector, vector["base_string"]) == vector["signature"]
    assert _verify(vector, vector["base_string"], vector["signature"])


@pytest.mark.parametrize("name", ["rsa-test-private-pkcs1.pem", "rsa-test-private-pkcs8.pem"], ids=["PKCS#1", "PKCS#8"])
def test_rsa_vectors_sign_the_same_with_either_private_key_format(name):
    vector = next(v for v in OAUTH["vectors"] if v["oauth"]["oauth_signature_method"] == "RSA-SHA256")
    assert sign_rsa_sha256(vector["base_string"], load_private_key(VECTORS / name)) == vector["signature"]


def _wrong_key_verifies(vector, base: str, signature: str) -> bool:
    if vector["oauth"]["oauth_signature_method"] == "HMAC-SHA1":
        return verify_hmac_sha1(base, signature, "B17F59B4-A7DC-41B4-8FF9-37D986B43D21")
    return verify_rsa_sha256(base, signature, load_public_key(demo.public_key_pem()))


@pytest.mark.parametrize("vector", OAUTH["vectors"], ids=OAUTH_IDS)
def test_oauth_false_positives_wrong_key_tampered_body_tampered_url(vector):
    signature = vector["signature"]
    tampered_body = {**vector["body"], "amount": "10.43" if "amount" in vector["body"] else "1"}
    if "client-order-id" in vector["body"]:
        tampered_body = {**vector["body"], "client-order-id": "1234567891"}
    tampered_url = vector["url"].replace("/51494", "/51495")
    assert _verify(vector, vector["base_string"], signature)
    assert not _wrong_key_verifies(vector, vector["base_string"], signature)
    assert not _verify(vector, _base(vector, body=tampered_body), signature)
    assert not _verify(vector, _base(vector, url=tampered_url), signature)
    assert not _verify(vector, vector["base_string"], signature[:-4] + "AAA=")


def test_rsa_verification_refuses_a_signature_that_is_not_base64():
    vector = OAUTH["vectors"][-1]
    assert not verify_rsa_sha256(vector["base_string"], "not base64!", load_public_key(VECTORS / "rsa-test-public.pem"))


# --- the Authorization header ------------------------------------------------------------------------


@pytest.mark.parametrize("vector", OAUTH["vectors"], ids=OAUTH_IDS)
def test_header_in_any_parameter_order_with_or_without_realm_still_verifies(vector):
    header = authorization_header(_params(vector), vector["signature"], realm="sandbox")
    scheme, _, items = header.partition(" ")
    shuffled = items.split(", ")
    random.Random(7).shuffle(shuffled)
    variants = {
        "as built": header,
        "shuffled": f"{scheme} {', '.join(shuffled)}",
        "no space, reversed, no realm": f"{scheme} " + ",".join(i for i in reversed(shuffled) if "realm" not in i),
    }
    for name, variant in variants.items():
        parsed = parse_authorization_header(variant)
        base = signature_base_string(
            vector["method"], vector["url"], list(vector["body"].items()), oauth_params_from_header(parsed)
        )
        assert base == vector["base_string"], name
        assert _verify(vector, base, parsed["oauth_signature"]), name
        assert ("realm" in parsed) == ("realm" in variant), name


def test_header_values_are_percent_encoded_once_and_decoded_by_the_parser():
    params = OAuthParams("merchant login", "RSA-SHA256", "1669966913", "a/b+c=")
    header = authorization_header(params, "ab+/=")
    assert 'oauth_signature="ab%2B%2F%3D"' in header
    assert 'oauth_consumer_key="merchant%20login"' in header
    parsed = parse_authorization_header(header)
    assert parsed["oauth_signature"] == "ab+/="
    assert parsed["oauth_nonce"] == "a/b+c="
    assert "realm" not in parsed


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ('Basic oauth_nonce="x"', "does not start with 'OAuth '"),
        ("OAuth oauth_nonce=x", 'is not name="value"'),
        ('OAuth oauth_nonce="x", oauth_nonce="y"', "repeats 'oauth_nonce'"),
    ],
    ids=["other scheme", "unquoted value", "repeated parameter"],
)
def test_malformed_headers_are_refused_with_a_reason(header, message):
    with pytest.raises(ValueError, match=message):
        parse_authorization_header(header)


def test_a_missing_oauth_parameter_is_named():
    parsed = parse_authorization_header('OAuth oauth_consumer_key="a", oauth_nonce="n", oauth_timestamp="1"')
    with pytest.raises(KeyError, match="oauth_signature_method"):
        oauth_params_from_header(parsed)


# --- base string details (behaviour section 8) -------------------------------------------------------

PARAMS = OAuthParams("merchant-login", "HMAC-SHA1", "1669966913", "nonce")


@pytest.mark.parametrize(
    ("url", "normalized"),
    [
        ("https://gw.example:443/paynet/api/v2/payout/1", "https%3A%2F%2Fgw.example%2Fpaynet%2Fapi%2Fv2%2Fpayout%2F1"),
        ("http://gw.example:80/paynet/api/v2/payout/1", "http%3A%2F%2Fgw.example%2Fpaynet%2Fapi%2Fv2%2Fpayout%2F1"),
        ("http://127.0.0.1:8080/p/1", "http%3A%2F%2F127.0.0.1%3A8080%2Fp%2F1"),
    ],
    ids=["https default port dropped", "http default port dropped", "other port kept"],
)
def test_base_string_url_normalization(url, normalized):
    assert signature_base_string("post", url, [], PARAMS).split("&")[:2] == ["POST", normalized]


@pytest.mark.parametrize(
    ("value", "encoded"),
    [("a b", "a%2520b"), ("a+b", "a%252Bb"), ("!'()*", "%2521%2527%2528%2529%252A"), ("é", "%25C3%25A9"), ("", "")],
    ids=["space", "plus", "sub-delims", "non-ASCII", "empty"],
)
def test_base_string_encodes_values_per_rfc3986(value, encoded):
    base = signature_base_string("POST", "https://gw.example/p", [("x", value)], PARAMS)
    assert base.endswith(f"%26x%3D{encoded}")


def test_oauth_params_take_the_injected_clock_and_nonce():
    params = make_oauth_params("merchant-login", "RSA-SHA256", clock=lambda: 1669966913.9, nonce=lambda: "n1")
    assert params == OAuthParams("merchant-login", "RSA-SHA256", "1669966913", "n1", "1.0")
