"""The payer on a merchant's Hosted Fields checkout over plain HTTP (``Payer.tokenize_hosted_fields``,
``Payer.follow_challenge``, ``toolkit.payer.hosted_fields``), against the real simulator on a loopback port.

The merchant's server is the demo merchant's ``GatewayClient`` (ticket, v4 sale, status_v4); its ``redirect_url`` a
``CallbackReceiver``, so that the way back after 3-D Secure lands somewhere real.  The payer does what the SDK does
from the merchant's page: the CORS preflight, then the card and the ticket to the SDK's origin.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.independent import sha1_hex
from toolkit import demo
from toolkit.callbacks import CallbackReceiver
from toolkit.client import GatewayClient
from toolkit.hosted_fields import HostedFieldsGateway
from toolkit.models import HostedSaleResponse, Status
from toolkit.payer import HostedFieldsToken, Payer, PayerError, TokenizeRefused
from toolkit.payer import hosted_fields as hf
from toolkit.payer.visits import Visit
from toolkit.simulator import SimulatorServer
from toolkit.simulator.web import hosted_fields_api, hosted_fields_pages
from toolkit.testdata import Card, card_for, new_client_orderid
from toolkit.testdata.orders import BROWSER_DATA

PAGE = "http://127.0.0.1:9/checkout"  # the merchant's checkout page (nobody listens: only its origin is sent)
CARD = "4444444444444448"  # the examples' test card


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatorServer]:
    with SimulatorServer() as running:
        yield running


@pytest.fixture(scope="module")
def gateway(server: SimulatorServer) -> HostedFieldsGateway:
    return HostedFieldsGateway.from_simulator(server)


@pytest.fixture(scope="module")
def client(server: SimulatorServer) -> Iterator[GatewayClient]:
    with GatewayClient(server.client_config()) as merchant:
        yield merchant


@pytest.fixture(scope="module")
def receiver() -> Iterator[CallbackReceiver]:
    with CallbackReceiver(demo.CONTROL_KEY) as running:
        yield running


@pytest.fixture
def seen() -> list[Visit]:
    return []


@pytest.fixture
def payer(receiver: CallbackReceiver, seen: list[Visit]) -> Iterator[Payer]:
    browser = Payer(merchant_urls=[receiver.redirect_url], observers=[seen.append])
    yield browser
    browser.session.close()


def the_card(outcome: str = "approved", number: str = CARD) -> Card:
    return card_for(outcome, number=number)


def sale(client: GatewayClient, receiver: CallbackReceiver, token: HostedFieldsToken) -> HostedSaleResponse:
    """The merchant's server charges the token as the examples do."""
    return client.sale_v4(
        BROWSER_DATA, client_orderid="hf-" + new_client_orderid(), order_desc="Hosted Fields example order",
        amount="1.00", currency="USD", hosted_fields_token=token.token, card_printed_name="ANNA WEBER",
        first_name="Anna", last_name="Weber", address1="100 Main st", city="Seattle", zip_code="98102",
        country="US", state="WA", phone="+12063582043", email="anna@example.com", ipaddress="203.0.113.7",
        redirect_url=receiver.redirect_url,
    )  # fmt: skip


def test_the_payer_tokenizes_as_the_sdk_does_and_the_token_pays(
    gateway: HostedFieldsGateway, client: GatewayClient, receiver: CallbackReceiver, payer: Payer, seen: list[Visit]
):
    ticket = client.create_ephemeral_ticket().ephemeral_ticket
    token = payer.tokenize_hosted_fields(ticket, the_card(), sdk_url=gateway.sdk_url, origin=PAGE)
    assert isinstance(token, HostedFieldsToken) and token.token.startswith("hf_")
    final = client.wait_for_status_v4(sale(client, receiver, token))
    assert (final.status, final.last_four_digits, final.cardholder_name) == (Status.APPROVED, "4448", "ANNA WEBER")

    preflight, call = payer.visits
    assert seen == payer.visits
    assert (preflight.method, preflight.url, preflight.to) == ("OPTIONS", gateway.tokenize_url, "gateway")
    assert preflight.shows == "HTTP 204, allows http://127.0.0.1:9"
    assert (call.method, call.status_code, call.to, call.shows) == ("POST", 200, "gateway", "a hosted fields token")
    assert dict(call.fields) == {"ephemeralTicket": ticket, "cardNumber": "444444******4448",
                                 "expiryDate": f"12/{the_card().expire_year[-2:]}", "cvv": "***"}  # fmt: skip
    assert call.action is not None and call.action["action"] == "tokenize"
    assert call.action["card"]["number"] == "444444******4448" and call.action["card"]["cvv2"] == "***"
    shown = repr(payer.visits) + str([visit.summary() for visit in payer.visits])
    assert CARD not in shown and "4444 4444" not in shown and "'cvv': '123'" not in shown


def test_the_tokenize_call_is_sent_as_the_sdk_sends_it(gateway: HostedFieldsGateway, payer: Payer, client):
    """The SDK's body (section 6 of the simulator's contract): the number's digits, MM/YY, the CVV as typed."""
    sent: list[Any] = []
    payer.session.hooks["response"].append(lambda answer, **_: sent.append(answer.request))
    card = Card("4444 4444 4444 4448", "7", "2031", "123")
    payer.tokenize_hosted_fields(client.create_ephemeral_ticket().ephemeral_ticket, card, sdk_url=gateway.sdk_url,
                                 origin="http://shop.example:8000/checkout?x=1")  # fmt: skip
    preflight, call = sent
    assert preflight.method == "OPTIONS" and preflight.headers["Origin"] == "http://shop.example:8000"
    assert preflight.headers["Access-Control-Request-Method"] == "POST"
    assert preflight.headers["Access-Control-Request-Headers"] == "content-type"
    assert call.headers["Content-Type"] == "application/json" and call.headers["Origin"] == "http://shop.example:8000"
    body = json.loads(call.body)
    assert body == {"ephemeralTicket": body["ephemeralTicket"], "cardNumber": CARD, "expiryDate": "07/31", "cvv": "123"}


def test_a_mistyped_number_is_refused_with_its_code_and_field_and_the_ticket_is_spent(
    gateway: HostedFieldsGateway, client: GatewayClient, payer: Payer
):
    ticket = client.create_ephemeral_ticket().ephemeral_ticket
    with pytest.raises(TokenizeRefused) as refused:
        mistyped = Card("4444444444444449", "12", "2031", "123")
        payer.tokenize_hosted_fields(ticket, mistyped, sdk_url=gateway.sdk_url, origin=PAGE)
    error = refused.value
    assert (error.code, error.field, error.http_status, error.spends_ticket) == (4004, "cardNumber", 400, True)
    assert error.payer_message == "That card number was not accepted."
    assert "refused the card typed into its Hosted Fields: 4004 card number rejected" in str(error)
    assert "(field cardNumber)" in str(error) and "4444444444444449" not in str(error)
    assert payer.visits[-1].shows.startswith("refused: ") and payer.visits[-1].status_code == 400
    with pytest.raises(TokenizeRefused) as again:  # a 4xxx refusal spends the ticket
        payer.tokenize_hosted_fields(ticket, the_card(), sdk_url=gateway.sdk_url, origin=PAGE)
    assert (again.value.code, again.value.field) == (4003, "")


def test_an_incomplete_card_names_the_field(gateway: HostedFieldsGateway, client: GatewayClient, payer: Payer):
    ticket = client.create_ephemeral_ticket().ephemeral_ticket
    with pytest.raises(TokenizeRefused, match=r"4002 incomplete card data.*\(field cvv\)") as refused:
        payer.tokenize_hosted_fields(ticket, Card(CARD, "12", "2031", "1"), sdk_url=gateway.sdk_url, origin=PAGE)
    assert refused.value.payer_message == "Check the expiry date and CVV."


def test_a_call_no_browser_would_make_is_a_payer_error(server: SimulatorServer, client: GatewayClient, payer: Payer):
    """An SDK address whose origin has no tokenize call (here: under /paynet): the preflight is refused."""
    wrong = server.base_url + "/sdk/hosted-fields/latest/index.js"
    with pytest.raises(PayerError, match=r"the CORS preflight of .* answered HTTP \d+ allowing 'no origin'"):
        payer.tokenize_hosted_fields("tkt_x", the_card(), sdk_url=wrong, origin=PAGE)
    assert [visit.method for visit in payer.visits] == ["OPTIONS"]


@pytest.mark.parametrize(("password", "final"), [("hint", "approved"), ("not-the-password", "declined")])
def test_the_payer_follows_redirect_to_through_the_challenge_back_to_the_merchant(
    gateway: HostedFieldsGateway, client: GatewayClient, receiver: CallbackReceiver, payer: Payer, password, final
):
    ticket = client.create_ephemeral_ticket().ephemeral_ticket
    token = payer.tokenize_hosted_fields(ticket, the_card("3ds-challenge"), sdk_url=gateway.sdk_url, origin=PAGE)
    order = sale(client, receiver, token)
    asks = client.wait_for_payer_or_final_v4(order)
    assert asks.status is Status.PROCESSING and asks.redirect_to.startswith(gateway.api_url + "/3ds/")

    delivered = payer.follow_challenge(asks, password)
    assert delivered.url == receiver.redirect_url and delivered.status_code == 200
    assert set(delivered.fields) == {"status", "orderid", "merchant_order", "control"}
    fields = delivered.fields
    assert (fields["status"], fields["orderid"], fields["merchant_order"]) == (final, order.orderid,
                                                                               order.client_orderid)  # fmt: skip
    assert fields["control"] == sha1_hex(final + order.orderid + order.client_orderid + demo.CONTROL_KEY)
    assert receiver.wait_for_redirect(orderid=order.orderid).control_ok is True
    assert client.wait_for_status_v4(order).status.value == final
    hops = [(visit.step, visit.to) for visit in payer.visits]
    assert hops[:2] == [("the CORS preflight of the tokenize call", "gateway"),
                        ("tokenize the card (the SDK's call)", "gateway")]  # fmt: skip
    assert hops[2] == ("follow redirect-to", "acs") and ("answer the 3-D Secure challenge", "acs") in hops
    assert hops[-1] == ("go back to the merchant", "merchant")


def test_follow_challenge_takes_the_redirect_to_address_itself(
    gateway: HostedFieldsGateway, client: GatewayClient, receiver: CallbackReceiver, payer: Payer
):
    """As a merchant's page does with the JSON its server passed on: ``location.href = status['redirect-to']``."""
    ticket = client.create_ephemeral_ticket().ephemeral_ticket
    token = payer.tokenize_hosted_fields(ticket, the_card("3ds-challenge"), sdk_url=gateway.sdk_url, origin=PAGE)
    order = sale(client, receiver, token)
    address = client.wait_for_payer_or_final_v4(order).redirect_to
    assert payer.follow_challenge(address).fields["status"] == "approved"
    assert client.status_v4(client_orderid=order.client_orderid, orderid=order.orderid).redirect_to == ""


# --- what both payers share (toolkit.payer.hosted_fields) -------------------------------------------------------


@pytest.mark.parametrize(
    ("sdk_url", "tokenize"),
    [("https://gw.example/sdk/hosted-fields/latest/index.js?segment=paynet", "https://gw.example"),
     ("https://gw.example/assets/libs/hosted-fields/latest/index.js?segment=paynet", "https://gw.example"),
     ("https://gw.example/prefix/sdk/hosted-fields/1.2.3/index.js", "https://gw.example/prefix"),
     ("https://gw.example:8443/other/bundle.js", "https://gw.example:8443")],
    ids=["sdk", "assets-libs", "under-a-prefix", "another-shape"],
)  # fmt: skip
def test_the_tokenize_call_goes_to_the_sdks_root(sdk_url: str, tokenize: str):
    assert hf.tokenize_url(sdk_url) == tokenize + "/api/v4/tokenize/hosted-fields"
    assert hf.is_tokenize_call(hf.tokenize_url(sdk_url)) and not hf.is_tokenize_call(sdk_url)


def test_the_payers_addresses_are_the_simulators(server: SimulatorServer, gateway: HostedFieldsGateway):
    assert gateway.tokenize_url == gateway.root_url + hosted_fields_api.PATH
    assert gateway.sdk_url.split("?")[0] == gateway.root_url + hosted_fields_pages.SDK_PATHS[0]
    assert hf.tokenize_url(gateway.sdk_url) == gateway.tokenize_url
    assert (gateway.root_url, gateway.api_url, gateway.endpoint_id) == (server.root_url, server.base_url, "1001")
    assert gateway.private_key_pem == demo.private_key_pem() and gateway.control_key == demo.CONTROL_KEY


@pytest.mark.parametrize(
    ("declared", "title", "src", "kind"),
    [("pan", "", "", "pan"), ("", "exp", "", "exp"), ("", "Security code", "https://gw/hf/cvv?id=cvv", "cvv"),
     ("", "Card", "https://gw/fields/card", ""), ("PAN", "", "", "pan")],
    ids=["data-hf-type", "title", "address", "nothing-said", "upper-case"],
)  # fmt: skip
def test_a_card_iframe_says_which_field_it_is(declared: str, title: str, src: str, kind: str):
    from toolkit.payer.hosted_frames import kind_of

    assert kind_of(declared, title, src) == kind


@pytest.mark.parametrize(
    ("status", "body", "headers", "message"),
    [(200, '{"hostedFieldsToken": "hf_x"}', {"Access-Control-Allow-Origin": "http://else.example"},
      "allows the origin 'http://else.example', not the merchant page's http://shop.example"),
     (200, '{"hostedFieldsToken": "hf_x"}', {}, "allows the origin 'of nobody'"),
     (502, "<html>Bad gateway 4444444444444448</html>", {"Access-Control-Allow-Origin": "*"},
      r"HTTP 502\) is not a JSON object .*444444\*\*\*\*\*\*4448"),
     (200, '{"hostedFieldsToken": ""}', {"Access-Control-Allow-Origin": "*"}, "neither a token nor a code"),
     (400, '{"code": "4004"}', {"Access-Control-Allow-Origin": "*"}, "neither a token nor a code")],
    ids=["another-origin", "no-cors", "not-json", "empty-token", "code-not-a-number"],
)  # fmt: skip
def test_an_answer_the_sdk_cannot_use_is_a_payer_error(status, body, headers, message):
    with pytest.raises(PayerError, match=message) as raised:
        hf.read_answer(status, body.encode(), headers, "http://shop.example")
    assert not isinstance(raised.value, TokenizeRefused)


def test_a_token_is_read_and_a_refusal_keeps_what_the_payer_reads():
    assert hf.read_answer(200, '{"hostedFieldsToken": "hf_1"}') == HostedFieldsToken("hf_1", 200)
    with pytest.raises(TokenizeRefused) as refused:
        hf.read_answer(400, json.dumps({"code": 4002, "message": "incomplete", "payerMessage": "Check.",
                                        "field": "expiryDate"}))  # fmt: skip
    assert (refused.value.code, refused.value.field, refused.value.payer_message) == (4002, "expiryDate", "Check.")


@pytest.mark.parametrize(
    ("document", "kind"),
    [('<input id="value" autocomplete="cc-number">', "pan"), ("<input autocomplete='cc-exp' id=v>", "exp"),
     ('<INPUT type="tel" AUTOCOMPLETE="cc-csc">', "cvv"), ('<input autocomplete="cc-name">', ""),
     ('<p>autocomplete="cc-number"</p>', ""), ("<form><input name=threeDSMethodData></form>", "")],
    ids=["number", "expiry", "cvv", "holder-name", "not-an-input", "method-frame"],
)  # fmt: skip
def test_a_card_field_document_is_known_by_the_input_it_offers(document: str, kind: str):
    assert hf.field_kind(document) == kind


def test_the_simulators_field_documents_are_known_as_card_fields(server: SimulatorServer):
    import requests

    kinds = {
        kind: requests.get(f"{server.root_url}/hf/{kind}?id=box", timeout=10).text for kind in ("pan", "exp", "cvv")
    }
    assert {kind: hf.field_kind(document) for kind, document in kinds.items()} == {"pan": "pan", "exp": "exp",
                                                                                   "cvv": "cvv"}  # fmt: skip
