"""The wire: form bodies out; JSON or legacy key=value bodies in (behaviour section 2)."""

from __future__ import annotations

from urllib.parse import quote, urlencode

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolkit.wire import (
    DecodeError,
    decode_form,
    decode_request_body,
    decode_response,
    encode_form,
    encode_json,
    encode_legacy,
)


def test_form_encoding_is_rfc3986_with_space_as_percent_20():
    body = encode_form([("order_desc", "Test order (gift) & more!"), ("name", "JOSÉ O'NEIL"), ("plus", "a+b")])
    assert body == "order_desc=Test%20order%20%28gift%29%20%26%20more%21&name=JOS%C3%89%20O%27NEIL&plus=a%2Bb"
    assert decode_form(body) == [("order_desc", "Test order (gift) & more!"), ("name", "JOSÉ O'NEIL"), ("plus", "a+b")]


def test_form_keeps_order_and_empty_values():
    assert encode_form({"b": "2", "a": "", "c": "3"}) == "b=2&a=&c=3"
    assert decode_form(b"b=2&a=&c=3") == [("b", "2"), ("a", ""), ("c", "3")]


def test_json_response_numbers_and_strings_both_become_strings():
    body = (
        b'{"type": "async-response", "serial-number": "00000000-0000-0000-0000-000000000001",'
        b' "paynet-order-id": 8056020, "merchant-order-id": "inv-1", "error-code": 0, "amount": 10.10,'
        b' "deposit": true, "descriptor": null}'
    )
    decoded = decode_response(body)
    assert decoded == {
        "type": "async-response",
        "serial-number": "00000000-0000-0000-0000-000000000001",
        "paynet-order-id": "8056020",
        "merchant-order-id": "inv-1",
        "error-code": "0",
        "amount": "10.10",
        "deposit": "true",
        "descriptor": "",
    }


def test_json_values_are_trimmed_and_nested_values_kept_as_json():
    decoded = decode_response('{"status": " approved\\n", "extra": {"a": [1, 2.50]}}')
    assert decoded == {"status": "approved", "extra": '{"a": [1, "2.50"]}'}


def test_legacy_response_values_lose_their_trailing_newline():
    body = (
        "type=async-response\n&serial-number=00000000-0000-0000-0000-000000000002\n"
        "&merchant-order-id=inv-1\n&paynet-order-id=8056020\n"
    )
    assert decode_response(body.encode()) == {
        "type": "async-response",
        "serial-number": "00000000-0000-0000-0000-000000000002",
        "merchant-order-id": "inv-1",
        "paynet-order-id": "8056020",
    }


def test_legacy_values_are_url_decoded():
    body = "type=validation-error\n&error-message=amount%3A+must+be+positive\n&error-code=2\n"
    assert decode_response(body)["error-message"] == "amount: must be positive"


def test_legacy_encoding_round_trips():
    fields = {"type": "status-response", "status": "approved", "html": "<form action='x?a=1&b=2'>"}
    body = encode_legacy(fields)
    assert body.count("\n") == 3
    assert decode_response(body) == fields


def test_json_encoding_keeps_non_ascii():
    assert encode_json({"name": "JOSÉ"}) == '{"name": "JOSÉ"}'
    assert decode_response(encode_json({"name": "JOSÉ"})) == {"name": "JOSÉ"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "empty response body"),
        (b"   \n", "empty response body"),
        (b"<html><body>Bad gateway</body></html>", "not JSON and not key=value"),
        (b"Service unavailable", "not JSON and not key=value"),
        (b'{"type": ', "invalid JSON"),
        (b"[1, 2]", "not JSON and not key=value"),
    ],
    ids=["empty", "blank", "html page", "plain text", "broken JSON", "JSON array"],
)
def test_bodies_that_are_not_gateway_responses_are_refused(body, message):
    with pytest.raises(DecodeError, match=message):
        decode_response(body)


@pytest.mark.parametrize(
    ("body", "pairs"),
    [
        (b"amount=10.42&cvv2=", [("amount", "10.42"), ("cvv2", "")]),
        ("a=%C3%89", [("a", "É")]),
        (None, []),
        (iter([b"a=1"]), []),
    ],
    ids=["bytes", "text", "no body", "a stream"],
)
def test_a_prepared_request_body_decodes_to_its_pairs(body, pairs):
    assert decode_request_body(body) == pairs


@given(st.lists(st.tuples(st.text(max_size=12), st.text(max_size=24)), max_size=6))
def test_encode_form_is_urlencode_with_quote(pairs):
    """The fast path (values of unreserved characters as they are) writes what urlencode writes."""
    assert encode_form(pairs) == urlencode(pairs, quote_via=quote)
    assert encode_form(dict(pairs)) == urlencode(dict(pairs), quote_via=quote)


def test_encode_form_of_values_that_are_not_text_is_urlencode():
    pairs = [("a", 1), ("b", b"x y"), ("c", "d e")]
    assert encode_form(pairs) == urlencode(pairs, quote_via=quote)  # type: ignore[arg-type]
