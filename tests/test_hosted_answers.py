"""The client's Hosted Fields calls over a real loopback socket (hosted-fields.md section 3): signed like every v4
operation (checked with ``tests/independent.py``), answers read with their JSON types, refusals mapped.

- [ex] 3.1: the ticket call's body is empty and only the oauth_* parameters are signed; a rejected request is 4xx
  JSON with error-message; only a body that is not a JSON object is a failed call (a 401 text/plain reason).
- [ex] 3.3: paynet-order-id is a number in the sale's answer (long ones keep their digits), a string in status;
  error-code is a number; the token replaces credit_card_number, expire_month, expire_year and cvv2.
"""

from __future__ import annotations

import pytest

from tests.independent import base_string, rsa_sha256_valid
from tests.recording_server import RecordingServer, Reply
from tests.test_client import oauth_header_params
from toolkit import demo
from toolkit.client import GatewayClient
from toolkit.errors import AuthenticationError, InvalidRequestError, ProtocolError, ValidationError
from toolkit.models import EphemeralTicketResponse, HostedSaleResponse, HostedStatusResponse, Status
from toolkit.operations import get_operation

BROWSER = {
    "customer_browser_info": "true",
    "customer_browser_javascript_enabled": "true",
    "customer_browser_java_enabled": "false",
    "customer_browser_accept_language": "en-US",
    "customer_browser_color_depth": "24",
    "customer_browser_screen_width": "1920",
    "customer_browser_screen_height": "1080",
    "customer_browser_time_zone": "-60",
    "customer_browser_accept_header": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8",
    "customer_browser_user_agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)",
}
SALE = {
    "client_orderid": "hf-0123456789abcdef0123456789abcdef",
    "order_desc": "Hosted Fields example order",
    "amount": "1.00",
    "currency": "USD",
    "hosted_fields_token": "hf_token-of-the-page",
    "card_printed_name": "JOHN SMITH",
    "first_name": "John",
    "last_name": "Smith",
    "address1": "100 Main st",
    "city": "Seattle",
    "zip_code": "98102",
    "country": "US",
    "state": "WA",
    "phone": "+12063582043",
    "email": "john@example.com",
    "ipaddress": "203.0.113.7",
    "redirect_url": "https://shop.example/result/callback",
    **BROWSER,
}
BIG = 123456789012345678901234567890  # more digits than a double keeps


@pytest.fixture
def client(config) -> GatewayClient:
    with GatewayClient(config) as gateway:
        yield gateway


def signed_by_the_demo_key(server: RecordingServer) -> bool:
    request = server.last
    params = oauth_header_params(request.header("Authorization"))
    signature = params.pop("oauth_signature")
    url = server.base_url.removesuffix("/paynet") + request.path
    return params["oauth_signature_method"] == "RSA-SHA256" and rsa_sha256_valid(
        base_string("POST", url, [*request.pairs, *params.items()]), signature, demo.public_key_pem()
    )


def test_the_ticket_call_sends_an_empty_form_signed_with_its_oauth_parameters_only(server, client):
    server.reply({"ephemeralTicket": " tkt_abc "})
    ticket = client.create_ephemeral_ticket()
    assert isinstance(ticket, EphemeralTicketResponse) and ticket.ephemeral_ticket == "tkt_abc"
    request = server.last
    assert request.path == f"/paynet/api/v4/tokenize/create-ephemeral-ticket/{demo.ENDPOINT_ID}"
    assert (request.body, request.header("Content-Type")) == (b"", "application/x-www-form-urlencoded")
    assert request.header("Accept") == "application/vnd.pay+json"
    assert signed_by_the_demo_key(server)


def test_the_sale_answer_s_order_id_is_a_number_kept_to_its_last_digit(server, client):
    server.reply({"paynet-order-id": BIG, "merchant-order-id": SALE["client_orderid"], "serial-number": "sn-1"})
    sale = client.sale_v4(SALE)
    assert isinstance(sale, HostedSaleResponse)
    assert (sale.paynet_order_id, sale.orderid, sale.serial_number) == (BIG, str(BIG), "sn-1")
    assert server.last.fields["customer_browser_user_agent"] == BROWSER["customer_browser_user_agent"]
    assert signed_by_the_demo_key(server)


def test_the_status_answer_is_read_with_its_keys(server, client):
    server.reply({"status": "processing", "paynet-order-id": "8056020", "merchant-order-id": "hf-1",
                  "amount": "1.00", "currency": "USD", "redirect-to": "https://gw.example/acs"})  # fmt: skip
    status = client.status_v4(client_orderid="hf-1", orderid="8056020")
    assert isinstance(status, HostedStatusResponse) and status.needs_payer
    assert (status.status, status.redirect_to) == (Status.PROCESSING, "https://gw.example/acs")
    assert server.last.fields == {"login": demo.LOGIN, "orderid": "8056020", "client_orderid": "hf-1"}
    server.reply({"status": "approved", "paynet-order-id": "8056020", "merchant-order-id": "hf-1",
                  "approval-code": "831000", "processor-rrn": "000008056020", "bank_message": "Approved"})  # fmt: skip
    approved = client.status_v4(client_orderid="hf-1", orderid="8056020")
    assert (approved.approval_code, approved.processor_rrn, approved.bank_message) == (
        "831000",
        "000008056020",
        "Approved",
    )


@pytest.mark.parametrize(
    ("operation", "answer", "wrong"),
    [
        ("sale_v4", {"paynet-order-id": "8056020", "merchant-order-id": "hf-1"}, "paynet-order-id is a JSON string"),
        ("status_v4", {"status": "approved", "paynet-order-id": 8056020}, "paynet-order-id is a JSON number"),
        ("status_v4", {"status": "declined", "paynet-order-id": "1", "error-code": "05"}, "error-code is a JSON"),
        ("create_ephemeral_ticket", {"ephemeralTicket": None}, "ephemeralTicket is a JSON null"),
    ],
    ids=["sale order id a string", "status order id a number", "error-code a string", "ticket null"],
)
def test_an_answer_of_other_json_types_is_a_protocol_error_naming_the_field(server, client, operation, answer, wrong):
    server.reply(answer)
    fields = {"sale_v4": SALE, "status_v4": {"client_orderid": "hf-1", "orderid": "1"}}.get(operation, {})
    with pytest.raises(ProtocolError, match=wrong):
        client.call(operation, fields)


def test_a_refusal_is_4xx_json_with_a_numeric_error_code(server, client):
    server.reply({"error-message": "Unknown or already spent hosted_fields_token.", "error-code": 3}, status=400)
    with pytest.raises(ValidationError, match="Unknown or already spent") as caught:
        client.sale_v4(SALE)
    assert (caught.value.http_status, caught.value.error_code) == (400, "3")


def test_a_refused_signature_is_a_text_plain_reason(server, client):
    server.reply(Reply("invalid signature: oauth_signature does not verify", 401, "text/plain; charset=utf-8"))
    with pytest.raises(AuthenticationError, match="oauth_signature does not verify") as caught:
        client.create_ephemeral_ticket()
    assert caught.value.http_status == 401
    assert caught.value.error_message == "invalid signature: oauth_signature does not verify"


def test_a_body_that_is_no_json_object_is_a_failed_call(server, client):
    server.reply(Reply("<html>Bad gateway</html>", 502, "text/html"))
    with pytest.raises(ProtocolError, match="HTTP 502"):
        client.status_v4(client_orderid="hf-1", orderid="1")
    server.reply(Reply("[1, 2]", 200))
    with pytest.raises(ProtocolError, match="not an object"):
        client.status_v4(client_orderid="hf-1", orderid="1")


def test_an_answer_without_its_ticket_or_order_id_is_refused(server, client):
    server.reply({})
    with pytest.raises(ProtocolError, match="lacks ephemeralTicket"):
        client.create_ephemeral_ticket()


def test_card_fields_beside_a_token_are_refused_before_sending_naming_them(server, client):
    card = {"credit_card_number": "4444444444444448", "expire_month": "12", "expire_year": "2030", "cvv2": "123"}
    with pytest.raises(InvalidRequestError) as caught:
        client.sale_v4({**SALE, **card})
    named = {problem.field for problem in caught.value.problems if "beside hosted_fields_token" in problem.rule}
    assert named == set(card)
    assert "4444444444444448" not in str(caught.value)
    assert server.requests == []


def test_the_token_and_the_browser_data_are_required(client):
    fields = {name: value for name, value in SALE.items() if name not in ("hosted_fields_token", *BROWSER)}
    with pytest.raises(InvalidRequestError) as caught:
        client.sale_v4(fields)
    missing = {problem.field for problem in caught.value.problems}
    assert missing == {"hosted_fields_token", *BROWSER}
    assert set(get_operation("sale_v4").required) >= missing
