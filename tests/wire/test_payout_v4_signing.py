"""The v4 one-step payout takes OAuth HMAC-SHA1 as the v2 payout does (issue 36, point 3; behaviour section 11:
"RSA-SHA256 in the examples; HMAC-SHA1 as v2 payout"), and a signature method an operation does not take is named
as such, by the simulator and by the proxy (not as "most likely the RSA key pair").

The requests are hand-built and signed by ``tests/independent.py`` (``tests/wire/gateway.py``).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping

import pytest

from tests import independent
from tests.proxy_wire import Output
from tests.wire.build import minimal
from tests.wire.gateway import CONTROL_KEY, LOGIN, Answer, Gateway
from tests.wire.orders import Orders
from tests.wire.table import Wire, wire
from toolkit.proxy import Keys, ProxyServer
from toolkit.simulator import SimulatorServer

PAYOUT_V4 = wire("payout-v4")
PAYOUT_CHECK = wire("payout-check")


def signed_with(gateway: Gateway, method: str, url: str, fields: Mapping[str, str]) -> str:
    """An Authorization header whose ``oauth_signature_method`` is ``method``: HMAC-SHA1 and RSA-SHA256 signed as
    spec 5.2 says, any other method with the control key as its "signature" (what PLAINTEXT would send)."""
    if method in ("HMAC-SHA1", "RSA-SHA256"):
        return gateway.authorization(method, url, fields)
    oauth = [("oauth_consumer_key", gateway.login), ("oauth_nonce", secrets.token_hex(12)),
             ("oauth_signature_method", method), ("oauth_timestamp", str(int(time.time()))),
             ("oauth_version", "1.0"), ("oauth_signature", f"{gateway.key}&")]  # fmt: skip
    return independent.authorization_header(oauth)


def post_signed(gateway: Gateway, op: Wire, fields: Mapping[str, str], method: str) -> Answer:
    """POST ``fields`` to ``op`` signed with ``method`` (the header replaces the one ``Gateway.post`` makes)."""
    authorization = signed_with(gateway, method, gateway.url(op), fields)
    return gateway.post(op, fields, headers={"Authorization": authorization})


@pytest.mark.parametrize("method", ["HMAC-SHA1", "RSA-SHA256"])
def test_the_v4_payout_takes_hmac_sha1_as_the_v2_payout_does_and_rsa_sha256(
    gateway: Gateway, orders: Orders, method: str
) -> None:
    fields = minimal(PAYOUT_V4, orders)
    answer = post_signed(gateway, PAYOUT_V4, fields, method)
    assert answer.http_status == 200 and answer.type == "async-response", answer.describe()
    assert answer["merchant-order-id"] == fields["client-order-id"], answer.describe()


def test_a_v4_payout_signed_with_hmac_sha1_and_another_key_is_refused_for_hmac_sha1(
    gateway: Gateway, orders: Orders
) -> None:
    intruder = Gateway(gateway.base_url, key="NOT-THE-CONTROL-KEY")
    answer = post_signed(intruder, PAYOUT_V4, minimal(PAYOUT_V4, orders), "HMAC-SHA1")
    intruder.close()
    assert answer.http_status == 401, answer.describe()
    assert "oauth_signature does not verify with HMAC-SHA1" in answer.message, answer.describe()


@pytest.mark.parametrize(
    ("operation", "method", "expected"),
    [(PAYOUT_V4, "PLAINTEXT", "RSA-SHA256 or HMAC-SHA1"), (PAYOUT_CHECK, "HMAC-SHA1", "RSA-SHA256")],
    ids=["plaintext on the v4 payout", "hmac on payout-check"],
)
def test_a_signature_method_the_operation_does_not_take_is_refused_naming_the_methods_it_takes(
    gateway: Gateway, orders: Orders, operation: Wire, method: str, expected: str
) -> None:
    answer = post_signed(gateway, operation, minimal(operation, orders), method)
    assert answer.http_status == 401, answer.describe()
    assert f"expects oauth_signature_method={expected}, got {method}" in answer.message, answer.describe()


def test_the_proxy_checks_and_re_signs_a_v4_payout_signed_with_hmac_sha1(
    simulator: SimulatorServer, orders: Orders
) -> None:
    """Signed for the proxy's URL with the control key: the proxy verifies it with HMAC-SHA1 (it holds no RSA key
    here) and signs it again for the gateway's URL, which accepts it."""
    out = Output()
    keys = Keys(LOGIN, simulator.client_config().control_key)
    with ProxyServer(simulator.base_url, keys=keys, out=out) as proxy:
        client = Gateway(proxy.base_url)
        answer = post_signed(client, PAYOUT_V4, minimal(PAYOUT_V4, orders), "HMAC-SHA1")
        client.close()
    assert answer.http_status == 200 and answer.type == "async-response", answer.describe()
    head = out.text.splitlines()[0]
    assert head.endswith("ok"), out.text
    assert "OAuth signature verified for the proxy's URL and re-signed for http://127.0.0.1:" in out.text, out.text


@pytest.mark.parametrize("with_keys", [True, False], ids=["with keys", "without keys"])
def test_the_proxy_names_a_signature_method_mismatch_as_such(
    simulator: SimulatorServer, orders: Orders, with_keys: bool
) -> None:
    """HMAC-SHA1 on payout-check, which takes RSA-SHA256 only: a method mismatch, whatever keys the proxy holds;
    never "most likely the RSA key pair" (the key is not what is wrong)."""
    config = simulator.client_config()
    keys = Keys(LOGIN, config.control_key, config.private_key) if with_keys else Keys()
    out = Output()
    with ProxyServer(simulator.base_url, keys=keys, out=out) as proxy:
        client = Gateway(proxy.base_url)
        answer = post_signed(client, PAYOUT_CHECK, minimal(PAYOUT_CHECK, orders), "HMAC-SHA1")
        client.close()
    assert answer.http_status == 401, answer.describe()
    said = "  ! oauth_signature_method HMAC-SHA1: payout_check is signed with RSA-SHA256; the gateway refuses another"
    assert any(line.startswith(said) for line in out.text.splitlines()), out.text
    assert "key pair" not in out.text and "not checked" not in out.text, out.text
    assert CONTROL_KEY not in out.text
