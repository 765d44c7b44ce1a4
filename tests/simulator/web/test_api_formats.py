"""Field formats, both response formats (JSON and legacy key=value), and a little fuzzing.

Bad input always gets a ``validation-error`` that names the field; never a 500.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import requests

from toolkit import demo, signing
from toolkit.auth import OAuthAuth
from toolkit.client import GatewayClient
from toolkit.config import GatewayConfig
from toolkit.errors import AuthenticationError, InvalidRequestError, ValidationError
from toolkit.models import AsyncResponse, Status, StatusResponse
from toolkit.operations import OPERATIONS, AnswerStyle, AuthScheme, Operation
from toolkit.simulator import SimulatorServer
from toolkit.testdata import card_for, payout_fields, recurring_fields, sale_fields
from toolkit.wire import FORM_TYPE, LEGACY_TYPE, MEDIA_TYPE, decode_response, encode_form

# (field, value, what the simulator says, whether the client's own checks refuse it before sending)
BAD_FORMATS = [
    ("amount", "10.005", "amount: amount 10.005 has more decimals than EUR allows (2)", True),
    ("amount", "0", "amount: 0 must be a positive decimal number", True),
    ("amount", "-1.00", "amount: -1.00 must be a positive decimal number", True),
    ("amount", "ten", "amount: 'ten' is not major units with a dot", True),
    ("amount", "1E+3", "amount: '1E+3' is not major units with a dot (e.g. 10.42)", False),
    ("amount", "9" * 16, "at most 15 digits before it", False),
    ("currency", "XXX", "currency: unknown currency code 'XXX' (ISO 4217, upper case)", True),
    ("currency", "eur", "currency: unknown currency code 'eur'", True),
    ("credit_card_number", "4538977399606733", "credit_card_number: fails the Luhn check", True),
    ("credit_card_number", "4538-9773-9960", "credit_card_number: must be 12 to 19 digits", True),
    ("expire_month", "13", "expire_month: must be a month, 1 to 12 (or 01 to 12)", True),
    ("expire_month", "001", "expire_month: must be a month, 1 to 12", True),
    ("expire_year", "209", "expire_year: must be four digits (or two: 99)", True),
    ("cvv2", "12", "cvv2: must be 3 or 4 digits", True),
    ("cvv2", "\u00b2\u00b2\u00b2", "cvv2: must be 3 or 4 digits", False),
    ("email", "payer.example.com", "email: is not an e-mail address", True),
    ("redirect_url", "ftp://merchant.example/back", "redirect_url: must be an absolute http(s) URL", True),
    ("server_callback_url", "/relative/path", "server_callback_url: must be an absolute http(s) URL", True),
    ("ipaddress", "203.0.113.300", "ipaddress: is not an IP address", True),
    ("phone", "+" + "1" * 15, "phone: longer than 15 characters", True),
    ("country", "Germany", "country: longer than 2 characters", True),
    ("country", "de", "country: must be an ISO 3166-1 alpha-2 code in capitals", True),
]


@pytest.mark.parametrize(
    ("name", "value", "message", "client_refuses"), BAD_FORMATS, ids=[f"{n}={v[:20]}" for n, v, *_ in BAD_FORMATS]
)
def test_a_bad_format_is_refused_with_the_field_and_rule(
    client: GatewayClient, unchecked: GatewayClient, name: str, value: str, message: str, client_refuses: bool
) -> None:
    fields = sale_fields(**{name: value})
    if client_refuses:
        with pytest.raises(InvalidRequestError, match="request refused before sending"):
            client.sale(fields)
    with pytest.raises(ValidationError) as caught:
        unchecked.sale(fields)
    error = caught.value
    assert message in error.error_message
    assert (error.http_status, error.error_code, error.field) == (400, "1", name)


@pytest.mark.parametrize(
    ("currency", "amount", "allowed"),
    [("JPY", "1000.5", 0), ("KWD", "1.0005", 3), ("USD", "0.001", 2)],
    ids=["JPY", "KWD", "USD"],
)
def test_the_decimals_follow_the_currency(unchecked: GatewayClient, currency: str, amount: str, allowed: int) -> None:
    with pytest.raises(
        ValidationError, match=f"amount {amount} has more decimals than {currency} allows \\({allowed}\\)"
    ):
        unchecked.sale(sale_fields(amount=amount, currency=currency))


def test_amounts_in_currencies_without_or_with_three_decimals(client: GatewayClient) -> None:
    for amount, currency in (("1042", "JPY"), ("10.420", "KWD")):
        status = client.wait_for_final_status(client.sale(sale_fields(amount=Decimal(amount), currency=currency)))
        assert (status.status, status.amount, status.currency) == (Status.APPROVED, Decimal(amount), currency)


def test_blanks_around_values_are_ignored(unchecked: GatewayClient) -> None:
    ack = unchecked.sale(sale_fields(amount=" 10.00 ", currency="EUR "))
    assert unchecked.wait_for_final_status(ack).amount == Decimal("10.00")


def test_a_start_date_that_is_not_a_calendar_date_is_refused(client: GatewayClient) -> None:
    source = client.wait_for_final_status(client.sale(sale_fields()))
    cardrefid = client.create_card_ref(client_orderid=source.client_orderid, orderid=source.orderid).card_ref_id
    with pytest.raises(ValidationError, match="start_date: 2025-02-31 is not a calendar date"):
        client.create_recurring_payment(recurring_fields(cardrefid, start_date="2025-02-31"))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"client_orderid=\xff\xfe", "the request body is not UTF-8 form data"),
        (b"amount=1.00&amount=2.00", "amount: sent more than once"),
        (b"amount=" + b"9" * 5000 + b"&currency=EUR", "amount: '9999"),
        (b"amount=1E%2B1000001&currency=EUR", "amount: '1E+1000001' is not major units with a dot"),
        (b"login=gatekit-demo&orderid=%C2%B2&client_orderid=x", "orderid: must be digits only"),
    ],
    ids=["not UTF-8", "a field twice", "huge amount", "huge exponent", "superscript digit"],
)
def test_raw_bodies_the_client_cannot_produce(post, body: bytes, message: str) -> None:
    answer = post("/api/v2/" + ("status" if b"orderid=" in body else "sale") + "/1001", body)
    assert answer.status_code == 400 and message in answer.json()["error-message"]


@pytest.mark.parametrize("orderid", ["9" * 20, "0"], ids=["beyond SQLite integers", "zero"])
def test_an_orderid_that_cannot_exist_is_unknown(client: GatewayClient, fresh_id, orderid: str) -> None:
    with pytest.raises(ValidationError, match=f"orderid {orderid} is unknown"):
        client.status(client_orderid=fresh_id(), orderid=orderid)


# --- response formats (behaviour section 2) ---------------------------------------------------------


class LegacySession(requests.Session):
    """A transport that drops the Accept header: the gateway then answers in its legacy form."""

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        request.headers.pop("Accept", None)
        return super().send(request, **kwargs)


@pytest.fixture(scope="module")
def legacy(config: GatewayConfig) -> Iterator[GatewayClient]:
    with GatewayClient(config, session=LegacySession()) as gateway:
        yield gateway


def test_json_with_the_accept_header(post, with_control) -> None:
    answer = post("/api/v2/sale/1001", with_control("sale", {k: str(v) for k, v in sale_fields().items()}))
    assert (answer.status_code, answer.headers["Content-Type"]) == (200, MEDIA_TYPE)
    body = answer.json()
    assert body["type"] == "async-response" and body["paynet-order-id"].isdigit()
    assert set(body) == {"type", "serial-number", "paynet-order-id", "merchant-order-id"}


def test_legacy_key_value_without_it(post, with_control) -> None:
    fields = {k: str(v) for k, v in sale_fields().items()}
    answer = post("/api/v2/sale/1001", with_control("sale", fields), accept=False)
    assert (answer.status_code, answer.headers["Content-Type"].replace(" ", "")) == (200, LEGACY_TYPE)
    assert answer.text.startswith("type=async-response\n&serial-number=") and answer.text.endswith("\n")
    assert decode_response(answer.content)["merchant-order-id"] == fields["client_orderid"]


@pytest.mark.parametrize(
    ("accept", "http_status"), [(True, 400), (False, 200)], ids=["JSON: HTTP 400", "legacy: HTTP 200"]
)
def test_a_validation_error_in_both_formats(post, accept: bool, http_status: int) -> None:
    answer = post("/api/v2/sale/1001", {"client_orderid": "x"}, accept=accept)
    body = decode_response(answer.content)
    assert (answer.status_code, body["type"], body["error-code"]) == (http_status, "validation-error", "1")
    assert body["error-message"].startswith("order_desc: is required by sale; amount: is required by sale")


@pytest.mark.parametrize(
    ("accept", "http_status"), [(True, 401), (False, 200)], ids=["JSON: HTTP 401", "legacy: HTTP 200"]
)
def test_an_oauth_refusal_in_both_formats(post, accept: bool, http_status: int) -> None:
    answer = post("/api/v2/payout/1001", {k: str(v) for k, v in payout_fields().items()}, accept=accept)
    body = decode_response(answer.content)
    assert (answer.status_code, body["type"], body["error-code"]) == (http_status, "validation-error", "4")


@pytest.mark.parametrize(
    ("method", "path", "http_status", "message"),
    [
        ("POST", "/api/v2/no-such-operation/1001", 404, "is not an operation of the gateway"),
        ("GET", "/api/v2/sale/1001", 405, "GET /paynet/api/v2/sale/1001: gateway operations answer POST only"),
    ],
    ids=["unknown path", "GET"],
)
def test_a_wrong_address_answers_in_the_gateway_format(
    server: SimulatorServer, method: str, path: str, http_status: int, message: str
) -> None:
    answer = requests.request(method, server.base_url + path, headers={"Accept": MEDIA_TYPE}, timeout=30)
    assert (answer.status_code, answer.headers["Content-Type"]) == (http_status, MEDIA_TYPE)
    assert answer.json()["type"] == "validation-error" and message in answer.json()["error-message"]


def test_the_client_decodes_the_legacy_form(client: GatewayClient, legacy: GatewayClient) -> None:
    ack = legacy.sale(sale_fields(card=card_for("3ds-challenge")))
    assert isinstance(ack, AsyncResponse) and ack.orderid.isdigit()
    pending = legacy.status(client_orderid=ack.client_orderid, orderid=ack.orderid)
    same = client.status(client_orderid=ack.client_orderid, orderid=ack.orderid)
    assert isinstance(pending, StatusResponse) and pending.needs_payer and "<iframe" in pending.html
    assert {**pending.raw, "serial-number": ""} == {**same.raw, "serial-number": ""}


def test_the_client_raises_legacy_errors(legacy: GatewayClient, config: GatewayConfig) -> None:
    with pytest.raises(ValidationError, match="currency: unknown currency code 'XXX'") as caught:
        GatewayClient(config, session=LegacySession(), validate=False).sale(sale_fields(currency="XXX"))
    assert caught.value.http_status == 200
    with pytest.raises(ValidationError, match="is stale") as stale:
        GatewayClient(config, session=LegacySession(), clock=lambda: time.time() - 3600).payout(payout_fields())
    assert not isinstance(stale.value, AuthenticationError)  # legacy mode says 200; only the type tells


# --- fuzzing: never a 500 ---------------------------------------------------------------------------

ODD_VALUES = [
    "",
    " ",
    "0",
    "-1",
    "1.5",
    "10.00",
    "1E+9",
    "\u00b2",
    "\u0661\u0660",
    "é" * 3,
    "\x00",
    "%",
    "null",
    "9" * 40,
    "x" * 20000,
    "8056020",
    "<script>alert(1)</script>",
    "4538977399606732",
    "Y",
    "e30.0",
    "a.\u00e9",
    "month",
    "2025-02-31",
]
FUZZ_TARGETS = [(op, group) for op in OPERATIONS.values() for group in (False, True) if op.group or not group]


def fuzz_fields(rng: random.Random, op: Operation) -> list[tuple[str, str]]:
    names = [*op.fields, "control", "login", "amount", "junk-" + str(rng.randrange(99))]
    return [(rng.choice(names), rng.choice(ODD_VALUES)) for _ in range(rng.randrange(1, 12))]


def fuzz_body(
    rng: random.Random, op: Operation, path_id: str, config: GatewayConfig
) -> tuple[bytes, requests.auth.AuthBase | None]:
    """Random bytes, or random fields of the operation signed as the merchant would (to reach the engine)."""
    if rng.random() < 0.2:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))), None
    pairs = fuzz_fields(rng, op)
    if op.control is not None and rng.random() < 0.7:
        parts = signing.control_parts(op.control, dict(pairs), endpoint_id=path_id, login=config.login, strict=False)
        control = signing.control_checksum([value for _, value in parts], config.control_key.reveal())
        pairs = [*((n, v) for n, v in pairs if n != "control"), ("control", control)]
    auth = None
    if op.auth.is_oauth and rng.random() < 0.8:
        auth = OAuthAuth(
            op.auth,
            login=config.login,
            control_key=config.control_key,
            private_key=config.private_key if op.auth is AuthScheme.OAUTH_RSA_SHA256 else None,
            clock=time.time,
            nonce=lambda: f"fuzz-{rng.random()}",
        )
    return encode_form(pairs).encode("utf-8"), auth


@pytest.mark.parametrize(
    ("op", "group"), FUZZ_TARGETS, ids=[f"{op.name}{' by group' if group else ''}" for op, group in FUZZ_TARGETS]
)
def test_garbage_never_gets_a_500(server: SimulatorServer, config: GatewayConfig, op: Operation, group: bool) -> None:
    rng = random.Random(f"{op.name}-{group}")
    path_id = demo.ENDPOINT_GROUP_ID if group else demo.ENDPOINT_ID
    url = server.base_url + (op.group_path if group else op.path).format(endpointId=path_id, endpointGroupId=path_id)
    with requests.Session() as session:
        for attempt in range(25):
            body, auth = fuzz_body(rng, op, path_id, config)
            headers = {"Content-Type": FORM_TYPE, **({"Accept": MEDIA_TYPE} if attempt % 4 else {})}
            answer = session.post(url, data=body, headers=headers, auth=auth, timeout=30)
            if op.answers is AnswerStyle.HOSTED_FIELDS and answer.status_code == 401:  # hosted-fields.md 3.1
                assert answer.text.startswith("invalid signature: "), (attempt, body[:200], answer.text[:300])
                continue
            kind = decode_response(answer.content).get("type", "")  # (the Hosted Fields ticket's answer: none)
            assert answer.status_code in (200, 400, 401), (attempt, body[:200], answer.text[:300])
            assert kind != "error", (attempt, body[:200], answer.text[:300])
