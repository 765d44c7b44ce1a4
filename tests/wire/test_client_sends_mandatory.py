"""The client puts every mandatory field of section 10 on the wire, in the gateway's spelling.

Judged by ``tests/wire/table.py``, not by the client's catalogue: each operation is called through
``GatewayClient`` with Python names (``client_orderid``, ``cres``; the configuration supplies
``login``) against a recording server, and the captured body is compared with the table.  The
control (or OAuth signature) on the wire is recomputed by ``tests/independent.py``.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest

from tests import independent
from tests.recording_server import Recorded, RecordingServer
from tests.wire.gateway import CONTROL_KEY, ENDPOINT_ID, LOGIN, PRIVATE_KEY, control_for
from tests.wire.orders import SAMPLE
from tests.wire.table import TESTED, Wire
from toolkit.client import GatewayClient

# Python keyword names the client takes for wire names that are not identifiers or not snake case
PYTHON_NAMES = {"client-order-id": "client_orderid", "cRes": "cres", "paRes": "pares"}
DYNAMIC = {
    "client_orderid": "wire-client-1",
    "client-order-id": "wire-client-1",
    "orderid": "8056020",
    "cardrefid": "8056033",
    "sending-card-ref-id": "8056033",
    "destination-card-ref-id": "8056034",
    "source-card-ref-id": "8056033",
    "cRes": "eyJtZXNzYWdlVHlwZSI6ICJDUmVzIn0.0123456789abcdef",
    "paRes": "eJzLSM3JyVcozy_KSQEAGgQEXQ",
}


def python_name(name: str) -> str:
    return PYTHON_NAMES.get(name, name.replace("-", "_"))


def method_of(wire: Wire) -> str:
    return "return_" if wire.name == "return" else wire.name.replace("-", "_")


def reply_for(wire: Wire) -> dict[str, str]:
    """A well-formed answer of the operation's documented type, so that the client has no reason to fail."""
    return {
        "type": wire.response[0] or "async-response",
        "serial-number": "7b0b5c2e-9d7e-4a43-9c59-2f4b5b1a0001",
        "paynet-order-id": DYNAMIC["orderid"],
        "merchant-order-id": DYNAMIC["client_orderid"],
        "status": "approved",
        "amount": "10.00",
        "currency": "EUR",
        "transaction-type": "sale",
        "redirect-url": "https://gateway.example/form/1",
        "card-ref-id": DYNAMIC["cardrefid"],
        "card-printed-name": "JOHN SMITH",
        "bin": "453897",
        "last-four-digits": "6732",
        "expire-year": "2099",
        "expire-month": "12",
    }


def call_arguments(wire: Wire) -> dict[str, str]:
    values = {**SAMPLE, **DYNAMIC}
    names = [*wire.mandatory, *(group[0] for group in wire.one_of)]
    return {python_name(n): values[n] for n in names if n not in ("control", "login")}


def oauth_params(header: str) -> dict[str, str]:
    return {k: unquote(v) for k, v in re.findall(r'(\w+)="([^"]*)"', header.removeprefix("OAuth "))}


def signature_holds(wire: Wire, request: Recorded, url: str) -> bool:
    """The control or the OAuth signature on the wire, recomputed independently from what was sent."""
    fields = request.fields
    if wire.auth == "control":
        expected = control_for(wire, fields, path_id=ENDPOINT_ID, login=LOGIN, key=CONTROL_KEY)
        return fields.get("control", "").lower() == expected
    header = request.header("Authorization") or ""
    params = oauth_params(header)
    signed = [(k, v) for k, v in params.items() if k != "oauth_signature"]
    base = independent.base_string("POST", url, [*request.pairs, *signed])
    if wire.auth == "HMAC-SHA1":
        return params.get("oauth_signature") == independent.hmac_sha1(base, CONTROL_KEY)
    public_pem = (PRIVATE_KEY.parent / "demo-public.pem").read_bytes()
    return independent.rsa_sha256_valid(base, params.get("oauth_signature", ""), public_pem)


@pytest.mark.parametrize("wire", [pytest.param(w, id=w.name) for w in TESTED])
def test_the_client_sends_every_mandatory_field_in_the_gateways_spelling(
    server: RecordingServer, client: GatewayClient, wire: Wire
) -> None:
    server.reply(reply_for(wire))
    problem = None
    try:
        getattr(client, method_of(wire))(**call_arguments(wire))
    except Exception as exc:  # the answer does not matter here; a refusal before sending does
        problem = f"{type(exc).__name__}: {exc}"
    assert server.requests, f"the client sent nothing for {wire.name}: {problem}"
    request = server.last
    sent = request.fields
    path = "/paynet" + wire.path.format(endpointId=ENDPOINT_ID)
    assert request.path == path
    missing = [name for name in wire.mandatory if not sent.get(name)]
    assert not missing, f"{wire.name}: mandatory fields not on the wire: {missing}; sent {sorted(sent)}"
    aliases = [python_name(n) for n in wire.mandatory if python_name(n) != n and python_name(n) in sent]
    assert not aliases, f"{wire.name}: Python names sent instead of the gateway's spelling: {aliases}"
    if "login" in wire.mandatory:
        assert sent["login"] == LOGIN
    url = server.base_url.removesuffix("/paynet") + path
    assert signature_holds(wire, request, url), f"{wire.name}: the signature does not hold for what was sent"


def test_every_tested_operation_has_a_client_method() -> None:
    missing = [w.name for w in TESTED if not hasattr(GatewayClient, method_of(w))]
    assert not missing, f"no GatewayClient method for {missing}"
