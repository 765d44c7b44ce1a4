"""Every rejection rule of the simulator's checks (toolkit/simulator/rules/checks.py): addresses, required
fields, control checksums and OAuth signatures.  Each refusal must say what failed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import requests

from toolkit import demo
from toolkit.auth import OAuthAuth
from toolkit.client import GatewayClient
from toolkit.config import GatewayConfig
from toolkit.errors import AuthenticationError, InvalidRequestError, ValidationError
from toolkit.keys import generate_rsa_key, write_key_files
from toolkit.operations import OPERATIONS, AnswerStyle, AuthScheme, Operation
from toolkit.simulator import SimulatorServer
from toolkit.simulator.clock import SimClock
from toolkit.testdata import EXAMPLE_CARDS, card_for, payout_fields, sale_fields
from toolkit.wire import FORM_TYPE, MEDIA_TYPE, encode_form

SAMPLE = {
    "login": demo.LOGIN,
    "client_orderid": "ck-1",
    "client-order-id": "ck-1",
    "orderid": "8056020",
    "order_desc": "check",
    "amount": "10.42",
    "currency": "EUR",
    "address1": "1 Main Street",
    "city": "Springfield",
    "zip_code": "62701",
    "country": "DE",
    "phone": "+4930123456",
    "email": "payer@example.com",
    "ipaddress": "203.0.113.7",
    "comment": "check",
    **card_for("approved", number=EXAMPLE_CARDS[0]).fields(),
    "redirect_url": "https://merchant.example/return",
    "threeDSCompInd": "Y",
    "cRes": "e30.0",
    "paRes": "e30.0",
    "cardrefid": "1679215",
    "sending-card-ref-id": "1679215",
    "destination-card-ref-id": "1679215",
    "destination-card-no": EXAMPLE_CARDS[1],
    "period": "month",
    "interval": "1",
    "hosted_fields_token": "hf_not-a-token",
    **{name: "1" for name in OPERATIONS["sale_v4"].required if name.startswith("customer_browser_")},
}
CONTROL_OPS = [op for op in OPERATIONS.values() if op.auth is AuthScheme.CONTROL]
OAUTH_OPS = [op for op in OPERATIONS.values() if op.auth.is_oauth]
NO_GROUP_OPS = [op for op in OPERATIONS.values() if not op.group]


def request_for(op: Operation) -> dict[str, str]:
    """Well-formed fields of ``op``: the required ones, the first of each one-of group, and the fields that go
    together with those."""
    names = [*op.required, *(group[0] for group in op.one_of)]
    names += [name for group in op.together if set(group) & set(names) for name in group]
    return {name: SAMPLE[name] for name in names}


# --- addresses -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ({"endpoint_id": "9999"}, "endpoint 9999 is not configured in the simulator"),
        ({"group_id": "9999"}, "endpoint group 9999 is not configured in the simulator"),
    ],
    ids=["endpoint", "endpoint group"],
)
def test_an_unknown_endpoint_is_refused(client: GatewayClient, address: dict[str, str], message: str) -> None:
    with pytest.raises(ValidationError, match=message) as caught:
        client.sale(sale_fields(), **address)
    assert (caught.value.http_status, caught.value.error_code) == (400, "5")


@pytest.mark.parametrize("op", NO_GROUP_OPS, ids=[op.name for op in NO_GROUP_OPS])
def test_an_operation_without_group_address_refuses_one(client: GatewayClient, post, op: Operation) -> None:
    with pytest.raises(InvalidRequestError, match="cannot be addressed by endpoint group"):
        client.call(op, request_for(op), group_id=demo.ENDPOINT_GROUP_ID)
    answer = post(op.group_path.format(endpointGroupId=demo.ENDPOINT_GROUP_ID), request_for(op))
    assert answer.status_code == 400
    assert answer.json()["error-message"] == f"{op.name} cannot be addressed by endpoint group; use an endpoint id"


def test_a_login_field_of_another_merchant_is_refused(client: GatewayClient) -> None:
    with pytest.raises(ValidationError, match="login: intruder is not the merchant of endpoint 1001"):
        client.sale(sale_fields(), login="intruder")


# --- required fields -------------------------------------------------------------------------------

SALE_REQUIRED = OPERATIONS["sale"].required


@pytest.mark.parametrize("name", SALE_REQUIRED, ids=SALE_REQUIRED)
def test_a_missing_required_field_is_named(client: GatewayClient, unchecked: GatewayClient, name: str) -> None:
    fields = sale_fields(**{name: None})
    with pytest.raises(InvalidRequestError, match=f"{name}: is required by sale"):
        client.sale(fields)
    with pytest.raises(ValidationError, match=f"^sale: {name}: is required by sale ") as caught:
        unchecked.sale(fields)
    assert (caught.value.field, caught.value.error_code) == (name, "1")


@pytest.mark.parametrize(
    ("operation", "missing"), [("capture", "orderid"), ("payout", "amount"), ("create_card_ref_v4", "orderid")]
)
def test_a_missing_field_of_other_operations_is_named(unchecked: GatewayClient, operation: str, missing: str) -> None:
    fields = {k: v for k, v in request_for(OPERATIONS[operation]).items() if k != missing}
    with pytest.raises(ValidationError, match=f"{missing}: is required by {operation}"):
        unchecked.call(operation, fields)


# --- control (spec 5.1) ----------------------------------------------------------------------------


@pytest.mark.parametrize("op", CONTROL_OPS, ids=[op.name for op in CONTROL_OPS])
def test_a_wrong_checksum_names_the_formula(config: GatewayConfig, op: Operation) -> None:
    assert op.control is not None
    with (
        GatewayClient(config.with_overrides(control_key="not-the-key")) as intruder,
        pytest.raises(ValidationError) as caught,
    ):
        intruder.call(op, request_for(op))
    assert caught.value.error_message.startswith(f"control mismatch: {op.name} expects {op.control.text}; ")
    assert (caught.value.http_status, caught.value.error_code, caught.value.field) == (400, "2", "control")


def test_the_sale_formula_is_spelled_out(config: GatewayConfig) -> None:
    with (
        GatewayClient(config.with_overrides(control_key="not-the-key")) as intruder,
        pytest.raises(ValidationError) as caught,
    ):
        intruder.sale(sale_fields(amount="10.42"))
    assert caught.value.error_message.startswith(
        "control mismatch: sale expects SHA-1(endpointId + client_orderid + amount_in_minor_units + email + "
        "merchant_control_key); the simulator used endpointId='1001', client_orderid="
    )
    assert "amount='1042'" in caught.value.error_message and demo.CONTROL_KEY not in str(caught.value)


def test_a_missing_checksum_is_named(post) -> None:
    answer = post("/api/v2/sale/1001", request_for(OPERATIONS["sale"]))
    assert (answer.status_code, answer.json()["error-message"]) == (
        400,
        "control: is required by sale, SHA-1(endpointId + client_orderid + amount_in_minor_units + email + "
        "merchant_control_key)",
    )


def test_a_group_request_is_signed_with_the_group_id(post, with_control) -> None:
    signed_for_endpoint = with_control("sale", request_for(OPERATIONS["sale"]), demo.ENDPOINT_ID)
    answer = post(f"/api/v2/sale/group/{demo.ENDPOINT_GROUP_ID}", signed_for_endpoint)
    assert answer.status_code == 400
    assert "control mismatch" in answer.json()["error-message"]
    assert f"endpointId='{demo.ENDPOINT_GROUP_ID}'" in answer.json()["error-message"]


@pytest.mark.parametrize("control", ["é" * 40, "0" * 4000, ""], ids=["not ascii", "long", "empty"])
def test_a_malformed_checksum_is_a_mismatch_not_a_failure(post, control: str) -> None:
    answer = post("/api/v2/status/1001", {"client_orderid": "ck-1", "control": control})
    assert answer.status_code == 400 and answer.json()["type"] == "validation-error"


# --- OAuth (spec 5.2, behaviour 8) -------------------------------------------------------------------


def oauth_refusal(client: GatewayClient, operation: str, match: str, **extra: str) -> AuthenticationError:
    fields = {**request_for(OPERATIONS[operation]), **extra}
    with pytest.raises(AuthenticationError, match=match) as caught:
        client.call(operation, fields)
    hosted = OPERATIONS[operation].answers is AnswerStyle.HOSTED_FIELDS  # (a text/plain reason, no code)
    assert (caught.value.http_status, caught.value.error_code) == (401, "" if hosted else "4")
    return caught.value


@pytest.mark.parametrize("op", OAUTH_OPS, ids=[op.name for op in OAUTH_OPS])
def test_every_oauth_operation_is_verified(client: GatewayClient, config: GatewayConfig, op: Operation) -> None:
    with GatewayClient(config, clock=lambda: time.time() - 3600) as late:
        oauth_refusal(late, op.name, "is stale")


def test_a_wrong_hmac_key_is_refused(config: GatewayConfig) -> None:
    with GatewayClient(config.with_overrides(control_key="not-the-key")) as intruder:
        error = oauth_refusal(intruder, "payout", "oauth_signature does not verify with HMAC-SHA1; ")
    assert "signature base string (card data masked) is POST&http%3A%2F%2F127.0.0.1" in error.error_message
    assert EXAMPLE_CARDS[0] not in error.error_message


def test_a_wrong_rsa_key_is_refused(config: GatewayConfig, tmp_path: Path) -> None:
    other = write_key_files(generate_rsa_key(2048), tmp_path)
    with GatewayClient(config.with_overrides(private_key_file=other.private_pkcs8)) as intruder:
        oauth_refusal(intruder, "payout_check", "oauth_signature does not verify with RSA-SHA256")


def test_a_body_changed_after_signing_is_refused(client: GatewayClient) -> None:
    prepared = client.prepare("payout", payout_fields(amount="10.42")).request
    assert isinstance(prepared.body, bytes)
    prepared.body = prepared.body.replace(b"amount=10.42", b"amount=99.42")
    answer = client.session.send(prepared, timeout=30)
    assert answer.status_code == 401 and "oauth_signature does not verify" in answer.json()["error-message"]


@pytest.mark.parametrize(
    ("operation", "scheme"),
    [("payout", AuthScheme.OAUTH_RSA_SHA256), ("payout_check", AuthScheme.OAUTH_HMAC_SHA1)],
    ids=["RSA on an HMAC operation", "HMAC on an RSA operation"],
)
def test_the_wrong_signature_method_is_refused(
    server, config: GatewayConfig, operation: str, scheme: AuthScheme
) -> None:
    op = OPERATIONS[operation]
    wrong = OAuthAuth(
        scheme,
        login=config.login,
        control_key=config.control_key,
        private_key=config.private_key,
        clock=time.time,
        nonce=lambda: f"wrong-method-{operation}",
    )
    answer = requests.post(
        server.base_url + op.url_path(endpoint_id=demo.ENDPOINT_ID),
        data=encode_form(request_for(op)),
        headers={"Accept": MEDIA_TYPE, "Content-Type": FORM_TYPE},
        auth=wrong,
        timeout=30,
    )
    assert answer.status_code == 401
    assert answer.json()["error-message"] == f"{operation} expects oauth_signature_method={op.auth.value}, got {scheme}"


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (None, "Authorization header missing: payout is signed with OAuth HMAC-SHA1"),
        ("Basic Z2F0ZWtpdDp4", "Authorization header does not start with 'OAuth '"),
        ('OAuth oauth_consumer_key="gatekit-demo"', "oauth_signature_method, oauth_signature, oauth_timestamp, "),
        ("OAuth oauth_nonce=abc", "Authorization header item 'oauth_nonce' is not name=\"value\""),
    ],
    ids=["missing", "not OAuth", "incomplete", "malformed"],
)
def test_a_missing_or_malformed_header_is_refused(post, header: str | None, message: str) -> None:
    answer = post(
        "/api/v2/payout/1001", request_for(OPERATIONS["payout"]), headers={"Authorization": header} if header else {}
    )
    assert answer.status_code == 401 and message in answer.json()["error-message"]


@pytest.mark.parametrize(
    ("skew", "direction"), [(-1000, "behind"), (1000, "ahead of"), (-301, "behind"), (301, "ahead of")]
)
def test_a_stale_timestamp_is_refused(skew: int, direction: str) -> None:
    """The skew is exact: the simulator's wall clock stands still, the client's reads it plus ``skew``."""
    frozen = float(int(time.time()))
    with (
        SimulatorServer(clock=SimClock(source=lambda: frozen)) as standing,
        GatewayClient(standing.client_config(), clock=lambda: frozen + skew) as skewed,
    ):
        refusal = oauth_refusal(skewed, "payout", rf"oauth_timestamp {int(frozen) + skew} is stale")
    assert (
        f"is stale: {abs(skew)} s {direction} the simulator's clock (real time {int(frozen)}: /_sim/clock/advance "
        "does not move it); the window is 300 s either side"
    ) in str(refusal)


@pytest.mark.parametrize("skew", [-300, 300])
def test_a_timestamp_at_the_edge_of_the_window_is_accepted(skew: int) -> None:
    frozen = float(int(time.time()))
    with (
        SimulatorServer(clock=SimClock(source=lambda: frozen)) as standing,
        GatewayClient(standing.client_config(), clock=lambda: frozen + skew) as skewed,
    ):
        assert skewed.payout(payout_fields()).orderid


def test_a_timestamp_inside_the_window_is_accepted(config: GatewayConfig) -> None:
    with GatewayClient(config, clock=lambda: time.time() - 240) as slow:
        assert slow.payout(payout_fields()).orderid


def test_a_replayed_nonce_is_refused(config: GatewayConfig, fresh_id) -> None:
    nonce = f"fixed-{fresh_id()}"
    with GatewayClient(config, nonce=lambda: nonce) as replaying:
        assert replaying.payout(payout_fields()).orderid
        oauth_refusal(replaying, "payout", f"oauth_nonce {nonce} already used")


def test_a_refused_signature_does_not_burn_the_nonce(config: GatewayConfig, fresh_id) -> None:
    nonce = f"fixed-{fresh_id()}"
    with GatewayClient(config.with_overrides(control_key="not-the-key"), nonce=lambda: nonce) as intruder:
        oauth_refusal(intruder, "payout", "does not verify")
    with GatewayClient(config, nonce=lambda: nonce) as merchant:
        assert merchant.payout(payout_fields()).orderid


def test_oauth_parameters_in_the_body_are_refused(client: GatewayClient) -> None:
    oauth_refusal(
        client, "payout", r"oauth_nonce belongs in the Authorization header, not in the form body", oauth_nonce="x"
    )


def test_a_consumer_key_that_is_not_the_login_is_refused(config: GatewayConfig) -> None:
    with GatewayClient(config.with_overrides(login="intruder")) as intruder:
        oauth_refusal(intruder, "payout", "oauth_consumer_key intruder is not the login of endpoint 1001")


@pytest.mark.parametrize("login", [demo.LOGIN, "intruder"], ids=["right login", "wrong login"])
@pytest.mark.parametrize("op", OAUTH_OPS, ids=[op.name for op in OAUTH_OPS])
def test_an_unsigned_oauth_request_is_401_whatever_its_login(post, op: Operation, login: str) -> None:
    """The signature first: an unsigned request learns nothing, not even whether a login is the endpoint's."""
    answer = post(op.path.format(endpointId=demo.ENDPOINT_ID), {**request_for(op), "login": login})
    assert answer.status_code == 401, answer.text
    if op.answers is AnswerStyle.HOSTED_FIELDS:  # hosted-fields.md 3.1: a text/plain reason
        assert answer.text.startswith("invalid signature: Authorization header missing"), answer.text
    else:
        assert answer.json()["error-message"].startswith("Authorization header missing")


def test_a_signed_request_with_another_login_is_refused_by_name(client: GatewayClient) -> None:
    with pytest.raises(ValidationError, match="login: intruder is not the merchant of endpoint 1001"):
        client.payout(payout_fields(), login="intruder")


@pytest.mark.parametrize("accept", ["application/vnd.pay+json", "Application/Vnd.Pay+JSON", "APPLICATION/VND.PAY+JSON"])
def test_the_accept_media_type_is_matched_in_any_case(post, accept: str) -> None:
    """RFC 9110 8.3.1: media types are case-insensitive; a JSON answer, 400 for a refusal."""
    answer = post("/api/v2/sale/" + demo.ENDPOINT_ID, {"client_orderid": "x"}, accept=False, headers={"Accept": accept})
    assert (answer.status_code, answer.headers["content-type"]) == (400, MEDIA_TYPE)
    assert answer.json()["type"] == "validation-error"
