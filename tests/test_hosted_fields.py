"""``toolkit.hosted_fields``: what a merchant's Hosted Fields app is configured with (the plugin's
``hosted_fields_simulator``), and the examples' Content-Security-Policy for its checkout page."""

from __future__ import annotations

import pytest

from toolkit import demo
from toolkit.hosted_fields import HostedFieldsGateway, content_security_policy, origin_of

GATEWAY = HostedFieldsGateway("http://127.0.0.1:8080", "http://127.0.0.1:8080/paynet", "1001", demo.LOGIN,
                              demo.CONTROL_KEY, demo.private_key_pem())  # fmt: skip


@pytest.mark.parametrize(
    ("url", "origin"),
    [("https://Gateway.Example/sdk/x.js?segment=paynet", "https://gateway.example"),
     ("http://127.0.0.1:8080", "http://127.0.0.1:8080"), ("http://[::1]:9/checkout#pay", "http://[::1]:9")],
    ids=["path-and-case", "bare", "ipv6"],
)  # fmt: skip
def test_an_origin_is_scheme_host_and_port(url: str, origin: str):
    assert origin_of(url) == origin


def test_a_relative_address_has_no_origin():
    with pytest.raises(ValueError, match="not an absolute URL"):
        origin_of("/sdk/hosted-fields/latest/index.js")


def test_the_examples_policy_names_the_sdk_origin_for_scripts_frames_and_calls_and_allows_nothing_inline():
    policy = dict(part.split(" ", 1) for part in content_security_policy("https://gw.example").split("; "))
    assert policy == {
        "default-src": "'none'", "script-src": "'self' https://gw.example", "style-src": "'self'",
        "frame-src": "https://gw.example", "connect-src": "'self' https://gw.example", "img-src": "'self' data:",
        "base-uri": "'none'", "form-action": "'self'", "frame-ancestors": "'none'",
    }  # fmt: skip


def test_the_addresses_a_merchants_app_is_given():
    assert GATEWAY.sdk_url == "http://127.0.0.1:8080/sdk/hosted-fields/latest/index.js?segment=paynet"
    assert GATEWAY.tokenize_url == "http://127.0.0.1:8080/api/v4/tokenize/hosted-fields"
    assert GATEWAY.sdk_origin == "http://127.0.0.1:8080"
    assert GATEWAY.content_security_policy == content_security_policy("http://127.0.0.1:8080")
    env = GATEWAY.environment()
    assert set(env) == {"API_URL", "SDK_URL", "ENDPOINT_ID", "MERCHANT_LOGIN", "MERCHANT_CONTROL", "PRIVATE_KEY"}
    assert env["API_URL"] == "http://127.0.0.1:8080/paynet" and not env["API_URL"].endswith("/")
    assert env["PRIVATE_KEY"].startswith("-----BEGIN PRIVATE KEY-----")  # PKCS#8: every example reads it


def test_the_secrets_stay_out_of_the_repr():
    shown = repr(GATEWAY)
    assert demo.CONTROL_KEY not in shown and "PRIVATE KEY" not in shown and "1001" in shown
