"""GatewayClient over a real loopback socket: every operation, signed as the spec says, checked independently."""

from __future__ import annotations

import logging
import re
import socket
from decimal import Decimal
from urllib.parse import unquote

import pytest

from tests.independent import base_string, hmac_sha1, rsa_sha256_valid, sha1_hex
from tests.recording_server import RecordingServer, Reply
from toolkit import demo
from toolkit._version import __version__
from toolkit.client import GatewayClient
from toolkit.errors import (
    AuthenticationError,
    InvalidRequestError,
    ProtocolError,
    ServerError,
    TransportError,
    ValidationError,
)
from toolkit.models import RESPONSE_MODELS, AsyncResponse, Status, StatusResponse
from toolkit.operations import OPERATIONS, AnswerStyle, AuthScheme, Operation, ResponseKind

SERIAL = "7f6f6d9c-6b41-4d55-9a3a-1b2c3d4e5f60"
PAN = "4444555566661111"
SAMPLE = {
    "login": demo.LOGIN,
    "client_orderid": "inv-794772",
    "client-order-id": "inv-794772",
    "orderid": "8056020",
    "order_desc": "Test order (gift) & more!",
    "amount": "10.42",
    "currency": "EUR",
    "address1": "1 Main Street",
    "city": "Springfield",
    "zip_code": "62701",
    "country": "DE",
    "phone": "+4930123456",
    "email": "john.smith@example.com",
    "ipaddress": "203.0.113.7",
    "comment": "customer asked",
    "credit_card_number": PAN,
    "card_printed_name": "JOSÉ O'NEIL",
    "expire_month": "12",
    "expire_year": "2099",
    "cvv2": "123",
    "redirect_url": "https://merchant.example/return?order=inv-794772&lang=en",
    "threeDSCompInd": "Y",
    "cRes": "eyJhY3NUcmFuc0lEIjoiMSJ9",
    "paRes": "eJzLSM3JyQcABiwCFQ==",
    "cardrefid": "1679215",
    "sending-card-ref-id": "7654321",
    "destination-card-ref-id": "1679216",
    "destination-card-no": "4538977399606732",
    "period": "month",
    "interval": "1",
}

# The control formulas as section 4 of the spec writes them (payment-form and payout-form: the sale
# formula, gatekit's documented assumption; get-card-info: login + cardrefid, from the vectors).
SALE_PARTS = ("endpointId", "client_orderid", "amount_in_minor_units", "email")
VERIFY_PARTS = ("endpointId", "client_orderid", "email")
FOLLOW_UP_PARTS = ("login", "client_orderid", "orderid")
THREEDS_PARTS = ("login", "client-order-id", "orderid")  # spec 4.2
AMOUNT_PARTS = ("login", "client_orderid", "orderid", "amount_in_minor_units", "currency")
REBILL_PARTS = ("login", "client_orderid", "cardrefid", "amount_in_minor_units", "currency")
SPEC_CONTROL = {
    "sale": SALE_PARTS,
    "sale_form": SALE_PARTS,
    "preauth": SALE_PARTS,
    "preauth_form": SALE_PARTS,
    "payment_form": SALE_PARTS,
    "payout_form": SALE_PARTS,
    "transfer_form": SALE_PARTS,  # behaviour section 12: the control of sale-form
    "capture": AMOUNT_PARTS,
    "return": AMOUNT_PARTS,
    "void": FOLLOW_UP_PARTS,
    "status": FOLLOW_UP_PARTS,
    "create_card_ref": FOLLOW_UP_PARTS,
    "upload_method_url_result": THREEDS_PARTS,
    "upload_cres_result": THREEDS_PARTS,
    "upload_pares_result": THREEDS_PARTS,
    "account_verification": VERIFY_PARTS,
    "account_verification_form": VERIFY_PARTS,
    "get_card_info": ("login", "cardrefid"),
    "make_rebill": REBILL_PARTS,
    "make_rebill_sale": REBILL_PARTS,  # behaviour section 11: as make-rebill
    "make_rebill_preauth": REBILL_PARTS,
    "transfer_by_ref": (  # behaviour section 11
        "login",
        "client_orderid",
        "source-card-ref-id",
        "destination-card-ref-id",
        "amount_in_minor_units",
        "currency",
    ),
}
MINOR_UNITS = {("10.42", "EUR"): "1042", ("2.50", "EUR"): "250", ("0.99", "USD"): "99"}


def request_for(op: Operation) -> dict[str, str]:
    """The required fields of ``op``, the first choice of each one-of group, and what goes together with them."""
    names = [*op.required, *(group[0] for group in op.one_of)]
    names += [name for group in op.together if set(group) & set(names) for name in group if name not in names]
    return {name: SAMPLE[name] for name in names}


def expected_control(op_name: str, fields: dict[str, str], path_id: str) -> str:
    """SHA-1 over the concatenation written out by hand from SPEC_CONTROL, with plain hashlib."""
    values = {"endpointId": path_id, "login": demo.LOGIN, **fields}
    if "amount" in fields:
        values["amount_in_minor_units"] = MINOR_UNITS[fields["amount"], fields["currency"]]
    return sha1_hex("".join(values.get(part, "") for part in SPEC_CONTROL[op_name]) + demo.CONTROL_KEY)


def reply_for(op: Operation) -> dict[str, object]:
    body: dict[str, object] = {
        "type": op.response.value,
        "serial-number": SERIAL,
        "paynet-order-id": 8056020,  # some gateways send it as a JSON number
        "merchant-order-id": "inv-794772",
        "end-point-id": "1001",
    }
    extra: dict[ResponseKind, dict[str, object]] = {
        ResponseKind.FORM: {"redirect-url": "https://gw.example/paynet/form/8056020"},
        ResponseKind.STATUS: {"status": "approved", "amount": "10.42", "currency": "EUR"},
        ResponseKind.CARD_REF: {"card-ref-id": "1679215", "status": "approved"},
        ResponseKind.CARD_INFO: {"card-ref-id": "1679215", "bin": "444455", "last-four-digits": "1111"},
        ResponseKind.RECURRING: {"recurring-payment-id": "rp-31"},
    }
    return {**body, **extra.get(op.response, {})}


def oauth_header_params(header: str) -> dict[str, str]:
    assert header.startswith("OAuth ")
    return {name: unquote(value) for name, value in re.findall(r'(\w+)="([^"]*)"', header)}


@pytest.fixture
def fixed_client(config):
    with GatewayClient(config, clock=lambda: 1669966913.7, nonce=lambda: "fixed-nonce") as gateway:
        yield gateway


def test_the_spec_table_names_every_control_operation():
    assert set(SPEC_CONTROL) == {name for name, op in OPERATIONS.items() if op.auth is AuthScheme.CONTROL}


# (the Hosted Fields calls answer with their own JSON types: tests/test_hosted_answers.py)
FAMILY = {name: op for name, op in OPERATIONS.items() if op.answers is AnswerStyle.FAMILY}


@pytest.mark.parametrize("op", FAMILY.values(), ids=FAMILY.keys())
def test_every_operation_over_the_socket(server, fixed_client, op):
    fields = request_for(op)
    server.reply(reply_for(op))
    response = getattr(fixed_client, op.method_name)(fields)
    assert type(response) is RESPONSE_MODELS[op.response]
    assert response.serial_number == SERIAL and response.raw["paynet-order-id"] == "8056020"
    request = server.last
    assert (len(server.requests), request.method, request.path) == (
        1,
        "POST",
        "/paynet" + op.path.format(endpointId="1001"),
    )
    assert request.header("Accept") == "application/vnd.pay+json"
    assert request.header("Content-Type") == "application/x-www-form-urlencoded"
    assert request.header("User-Agent") == f"gatekit/{__version__}"
    assert request.header("Content-Length") == str(len(request.body))
    if op.auth is AuthScheme.CONTROL:
        assert request.header("Authorization") is None
        assert request.pairs == [*fields.items(), ("control", expected_control(op.name, fields, "1001"))]
    else:
        assert request.pairs == list(fields.items())  # oauth_* only in the header, never in the body
        assert_oauth_signed(server, request, op)


def assert_oauth_signed(server: RecordingServer, request, op: Operation) -> None:
    params = oauth_header_params(request.header("Authorization"))
    signature = params.pop("oauth_signature")
    assert params == {
        "oauth_consumer_key": demo.LOGIN,
        "oauth_nonce": "fixed-nonce",
        "oauth_signature_method": op.auth.value,
        "oauth_timestamp": "1669966913",
        "oauth_version": "1.0",
    }
    url = server.base_url.removesuffix("/paynet") + request.path
    base = base_string("POST", url, [*request.pairs, *params.items()])
    if op.auth is AuthScheme.OAUTH_HMAC_SHA1:
        assert signature == hmac_sha1(base, demo.CONTROL_KEY)
    else:
        assert rsa_sha256_valid(base, signature, demo.public_key_pem())
        assert not rsa_sha256_valid(base.replace("inv-794772", "inv-794773"), signature, demo.public_key_pem())


@pytest.mark.parametrize(
    ("op_name", "amount", "currency"),
    [("capture", "2.50", "EUR"), ("return", "0.99", "USD")],
    ids=["partial capture", "partial return"],
)
def test_partial_amounts_take_part_in_the_control(server, client, op_name, amount, currency):
    server.reply(reply_for(OPERATIONS[op_name]))
    fields = {"client_orderid": "inv-794772", "orderid": "8056020", "amount": amount, "currency": currency}
    client.call(op_name, fields)
    assert server.last.fields["control"] == expected_control(op_name, fields, "1001")


def test_status_by_client_orderid_alone_signs_an_empty_orderid(server, client):
    server.reply(reply_for(OPERATIONS["status"]))
    client.status(client_orderid="inv-794772")
    assert server.last.fields["control"] == sha1_hex(f"{demo.LOGIN}inv-794772{demo.CONTROL_KEY}")


def test_python_values_are_written_as_the_gateway_expects(server, client):
    server.reply(reply_for(OPERATIONS["payout"]))
    client.payout(
        client_orderid="p-1",
        amount=Decimal("10.40"),
        currency="EUR",
        destination_card_no="4444000011118888",
        deposit2card=True,
    )
    assert server.last.pairs == [
        ("client_orderid", "p-1"),
        ("amount", "10.40"),
        ("currency", "EUR"),
        ("destination-card-no", "4444000011118888"),
        ("deposit2card", "true"),
    ]


def test_group_addressing_signs_the_group_id_and_follow_ups_use_the_concrete_endpoint(server, client):
    sale = OPERATIONS["sale"]
    server.reply({**reply_for(sale), "end-point-id": "1003"}, reply_for(OPERATIONS["capture"]))
    fields = request_for(sale)
    ack = client.sale(fields, use_group=True)
    assert server.last.path == f"/paynet/api/v2/sale/group/{demo.ENDPOINT_GROUP_ID}"
    assert server.last.fields["control"] == expected_control("sale", fields, demo.ENDPOINT_GROUP_ID)
    client.capture(client_orderid=ack.client_orderid, orderid=ack.orderid)
    assert server.last.path == "/paynet/api/v2/capture/1003"


@pytest.mark.parametrize(
    ("op_name", "config_change", "message"),
    [
        ("payout_check", {}, "payout_check has no group address"),
        ("sale", {"endpoint_group_id": ""}, "no endpoint group id is configured"),
    ],
    ids=["operation without group address", "no group configured"],
)
def test_use_group_that_cannot_be_honoured_is_refused(server, config, op_name, config_change, message):
    gateway = GatewayClient(config.with_overrides(**config_change))
    with gateway, pytest.raises(InvalidRequestError, match=message):
        gateway.call(op_name, request_for(OPERATIONS[op_name]), use_group=True)
    assert server.requests == []


# --- responses -------------------------------------------------------------------------------------


def test_legacy_key_value_response_is_decoded_and_trimmed(server, client):
    server.reply(
        "type=status-response\n&serial-number=" + SERIAL + "\n&status=approved\n&paynet-order-id=8056020\n"
        "&merchant-order-id=inv-794772\n&amount=10.42\n"
    )
    status = client.status(client_orderid="inv-794772", orderid="8056020")
    assert isinstance(status, StatusResponse)
    assert (status.status, status.orderid, status.amount, status.serial_number) == (
        Status.APPROVED,
        "8056020",
        Decimal("10.42"),
        SERIAL,
    )


@pytest.mark.parametrize(
    ("reply", "cls", "text"),
    [
        (
            Reply({"type": "validation-error", "error-message": "amount must be positive"}, 400),
            ValidationError,
            "amount",
        ),
        (Reply({"type": "validation-error", "error-message": "Invalid control"}, 400), ValidationError, "control"),
        (Reply({"type": "validation-error", "error-message": "oauth_nonce was used"}, 401), AuthenticationError, None),
        (Reply({"type": "error", "error-message": "Internal error"}, 500), ServerError, None),
        (
            Reply("type=validation-error\n&serial-number=" + SERIAL + "\n&error-message=email+is+required\n"),
            ValidationError,
            "email",
        ),
        (Reply("type=error\n&serial-number=" + SERIAL + "\n&error-message=Internal+error\n"), ServerError, None),
    ],
    ids=["400", "400 control", "401", "500", "legacy validation error", "legacy error"],
)
def test_error_answers_raise_with_operation_field_and_serial_number(server, client, reply, cls, text):
    body = reply.body if isinstance(reply.body, str) else {**reply.body, "serial-number": SERIAL}
    server.reply(Reply(body, reply.status))
    with pytest.raises(cls) as raised:
        client.sale(request_for(OPERATIONS["sale"]))
    error = raised.value
    assert str(error).startswith("sale: ") and str(error).endswith(f"[serial-number {SERIAL}]")
    assert error.field == text and error.serial_number == SERIAL
    assert error.http_status == reply.status


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply("<html><body>502 Bad Gateway</body></html>", 502, "text/html"), "HTTP 502 text/html: not JSON"),
        (Reply("", 200), "HTTP 200 text/html;charset=utf-8: empty response body"),
    ],
    ids=["proxy page", "empty body"],
)
def test_answers_that_are_not_gateway_responses_are_protocol_errors(server, client, reply, message):
    server.reply(reply)
    with pytest.raises(ProtocolError, match=re.escape(message)):
        client.status(client_orderid="inv-1")


def test_no_server_is_a_transport_error(config):
    with RecordingServer() as gone:
        url = gone.base_url
    with GatewayClient(config.with_overrides(base_url=url)) as gateway, pytest.raises(TransportError) as raised:
        gateway.status(client_orderid="inv-1")
    assert str(raised.value).startswith(f"status: no answer from {url}/api/v2/status/1001: ConnectionError")


def test_a_server_that_never_answers_hits_the_timeout(config):
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        slow = config.with_overrides(base_url=f"http://127.0.0.1:{port}/paynet", timeout=0.2)
        with GatewayClient(slow) as gateway, pytest.raises(TransportError, match=r"within 0\.2s: ReadTimeout$"):
            gateway.status(client_orderid="inv-1")


# --- bad input is refused before sending -------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field", "rule"),
    [
        ({"email": None}, "email", "is required by sale"),
        ({"amount": "-1.00"}, "amount", "positive decimal"),
        ({"amount": "ten"}, "amount", "not major units with a dot"),
        ({"amount": "10.005"}, "amount", "more decimals than EUR allows"),
        ({"amount": "10.5", "currency": "JPY"}, "amount", "more decimals than JPY allows"),
        ({"currency": "XXX"}, "currency", "unknown currency code"),
        ({"expire_month": "13"}, "expire_month", "01 to 12"),
        ({"expire_year": "209"}, "expire_year", "four digits (or two: 99)"),
        ({"amount": 10.42}, "amount", "never float"),
        ({"amount": Decimal("10.42"), "interval": 1.5}, "interval", "never float"),
    ],
    ids=[
        "missing field",
        "negative",
        "not a number",
        "EUR 10.005",
        "JPY 10.5",
        "unknown currency",
        "month 13",
        "three-digit year",
        "float amount",
        "float elsewhere",
    ],
)
def test_bad_input_is_refused_before_sending(server, client, change, field, rule):
    fields = {**request_for(OPERATIONS["sale"]), **change}
    with pytest.raises(InvalidRequestError) as refused:
        client.sale({name: value for name, value in fields.items() if value is not None})
    assert server.requests == []
    assert refused.value.field == field and refused.value.operation == "sale"
    assert f"{field}: " in str(refused.value) and rule in str(refused.value)


def test_without_validation_the_request_goes_out_and_the_gateway_decides(server, config):
    server.reply(Reply({"type": "validation-error", "error-message": "email is required"}, 400))
    fields = {name: value for name, value in request_for(OPERATIONS["sale"]).items() if name != "email"}
    with GatewayClient(config, validate=False) as gateway, pytest.raises(ValidationError, match="email is required"):
        gateway.sale({**fields, "amount": "10.005"})
    sent = server.last.fields
    assert "email" not in sent and sent["amount"] == "10.005"
    assert sent["control"] == sha1_hex(f"1001inv-79477210.005{demo.CONTROL_KEY}")


# --- secrets stay out ---------------------------------------------------------------------------------


def test_logs_and_reprs_never_carry_secrets_or_card_data(server, client, caplog):
    caplog.set_level(logging.DEBUG)
    server.reply(Reply({"type": "validation-error", "error-message": f"card {PAN} cvv2=123 refused"}, 400))
    with pytest.raises(ValidationError) as raised:
        client.sale(request_for(OPERATIONS["sale"]))
    server.reply(reply_for(OPERATIONS["payout"]))
    client.payout(request_for(OPERATIONS["payout"]))
    shown = caplog.text + repr(client) + repr(client.config) + str(raised.value) + repr(raised.value)
    for secret in (demo.CONTROL_KEY, PAN, "cvv2=123"):
        assert secret not in shown
    assert "127.0.0.1" in caplog.text  # the log was written: urllib3 at DEBUG


def test_the_response_is_typed_and_keeps_its_raw_mapping(server, client):
    server.reply(reply_for(OPERATIONS["sale"]))
    ack = client.sale(request_for(OPERATIONS["sale"]))
    assert isinstance(ack, AsyncResponse)
    assert (ack.orderid, ack.client_orderid, ack.end_point_id) == ("8056020", "inv-794772", "1001")
    assert ack.raw["type"] == "async-response"
