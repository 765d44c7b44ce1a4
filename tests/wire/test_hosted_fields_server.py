"""Hosted Fields, the server side, by hand-built requests (hosted-fields.md sections 3, 6, 7 and 8; issue 37).

The merchant's three calls are built here as the examples build them (``python-flask-js/paynet.py``: the form body
by ``urlencode``, spaces as ``+``) and signed OAuth 1.0a RSA-SHA256 by ``tests/independent.py``; the SDK's tokenize
call is a plain JSON ``POST`` with an ``Origin``; answers are read with ``json.loads`` (integers exact) and their
types checked here.  The payer's browser is ``tests/wire/browser.py``.  Nothing of gatekit's client, catalogue,
signing or wire modules is used.  Each test names the point of hosted-fields.md it checks ([ex]: what the merchant
examples rely on; [emu]: the vendor's emulator; [sim]: the simulator's choice, ``rules.hosted_fields``).
"""

from __future__ import annotations

import json
import secrets
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus, urlencode

import pytest
import requests

from tests import independent
from tests.wire.browser import Browser, Shown
from tests.wire.gateway import CONTROL_KEY, ENDPOINT_ID, LOGIN, PRIVATE_KEY
from toolkit.callbacks import CallbackReceiver
from toolkit.keys import load_public_key
from toolkit.masking import Secret
from toolkit.simulator import SimulatorServer
from toolkit.simulator.settings import Merchant, SimulatorSettings, demo_merchant

VECTORS = Path(__file__).resolve().parents[1] / "vectors"
JSON_TYPE = "application/vnd.pay+json"
FORM_TYPE = "application/x-www-form-urlencoded"
ORIGIN = "https://shop.example"
CARD = "4444444444444448"  # the examples' sandbox card (section 10)
PASSWORD = "hint"  # the challenge password that passes (behaviour section 6)
MINUTE = 60
# A second merchant, signing with the RSA test pair of tests/vectors (its PKCS#1 private key: section 3.1 [ex])
GLOBEX = Merchant(
    login="globex",
    control_key=Secret("GLOBEX-CONTROL-KEY-7"),
    endpoint_ids=("51500",),
    rsa_public_key=load_public_key(VECTORS / "rsa-test-public.pem"),
)
# What the examples send beside the token (section 3.3): the user agent has spaces, slashes, parentheses, semicolons
BROWSER = {
    "customer_browser_info": "true",
    "customer_browser_javascript_enabled": "true",
    "customer_browser_java_enabled": "false",
    "customer_browser_accept_language": "en-US",
    "customer_browser_color_depth": "24",
    "customer_browser_screen_width": "1920",
    "customer_browser_screen_height": "1080",
    "customer_browser_time_zone": "-120",
    "customer_browser_accept_header": "text/html,application/xhtml+xml,*/*;q=0.8",
    "customer_browser_user_agent": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
}


@dataclass
class Shop:
    """One merchant's server: its three gateway calls, built and signed by hand."""

    root: str
    login: str
    key: str
    endpoint_id: str
    private_pem: bytes
    session: requests.Session

    def url(self, command: str, endpoint_id: str | None = None) -> str:
        return f"{self.root}/paynet/api/v4/{command}/{endpoint_id or self.endpoint_id}"

    def authorization(self, url: str, fields: Sequence[tuple[str, str]], *, sort_header: bool = False) -> str:
        """Section 3.1: the five oauth_* parameters and every body field signed; the header in any order."""
        oauth = [
            ("oauth_consumer_key", self.login),
            ("oauth_nonce", secrets.token_hex(16)),  # the examples send 32 hex characters
            ("oauth_signature_method", "RSA-SHA256"),
            ("oauth_timestamp", str(int(time.time()))),
            ("oauth_version", "1.0"),
        ]
        base = independent.base_string("POST", url, [*fields, *oauth])
        signed = [*oauth, ("oauth_signature", independent.rsa_sha256_sign(base, self.private_pem))]
        return independent.authorization_header(sorted(signed) if sort_header else signed[::-1])

    def post(
        self,
        command: str,
        fields: dict[str, str] | None = None,
        *,
        authorization: str | None = None,
        endpoint_id: str | None = None,
        accept: bool = True,
        sort_header: bool = False,
    ) -> requests.Response:
        """POST the fields form-encoded as the examples do (``urlencode``: a space is ``+``), signed."""
        url = self.url(command, endpoint_id)
        pairs = list((fields or {}).items())
        headers = {"Content-Type": FORM_TYPE, **({"Accept": JSON_TYPE} if accept else {})}
        headers["Authorization"] = authorization or self.authorization(url, pairs, sort_header=sort_header)
        return self.session.post(url, data=urlencode(pairs), headers=headers, timeout=30)

    def ticket(self) -> str:
        answer = self.post("tokenize/create-ephemeral-ticket")
        assert answer.status_code == 200, answer.text
        return str(json.loads(answer.text)["ephemeralTicket"]).strip()

    def sale_fields(self, token: str, redirect_url: str, **changed: str) -> dict[str, str]:
        fields = {
            **BROWSER,
            "client_orderid": "hf-" + uuid.uuid4().hex,
            "order_desc": "Hosted Fields example order",
            "amount": "1.00",
            "currency": "USD",
            "hosted_fields_token": token,
            "card_printed_name": "JOHN SMITH",
            "first_name": "John",
            "last_name": "Smith",
            "address1": "100 Main st",
            "city": "Seattle",
            "zip_code": "98102",
            "country": "US",
            "state": "WA",
            "phone": "+12063582043",
            "email": "john.smith@example.com",
            "ipaddress": "203.0.113.7",
            "redirect_url": redirect_url,
        }
        return {**fields, **changed}

    def status(self, orderid: str, client_orderid: str) -> dict[str, Any]:
        answer = self.post("status", {"login": self.login, "client_orderid": client_orderid, "orderid": orderid})
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = json.loads(answer.text)
        return body


def tokenize(root: str, body: object, *, origin: str = ORIGIN, raw: str | None = None) -> requests.Response:
    """What the SDK posts from the merchant's page (section 6): JSON, cross-origin."""
    data = raw if raw is not None else json.dumps(body)
    headers = {"Content-Type": "application/json", "Origin": origin}
    return requests.post(root + "/api/v4/tokenize/hosted-fields", data=data, headers=headers, timeout=30)


def card(ticket: str, number: str = CARD, expiry: str = "12/30", cvv: str = "123") -> dict[str, str]:
    return {"ephemeralTicket": ticket, "cardNumber": number, "expiryDate": expiry, "cvv": cvv}


def json_of(answer: requests.Response) -> dict[str, Any]:
    body = json.loads(answer.text)
    assert isinstance(body, dict), answer.text
    return body


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorServer]:
    with SimulatorServer(SimulatorSettings(merchants=(demo_merchant(), GLOBEX))) as running:
        yield running


@pytest.fixture(scope="module")
def shop(simulator: SimulatorServer) -> Iterator[Shop]:
    with requests.Session() as session:
        yield Shop(simulator.root_url, LOGIN, CONTROL_KEY, ENDPOINT_ID, PRIVATE_KEY.read_bytes(), session)


@pytest.fixture(scope="module")
def globex(simulator: SimulatorServer) -> Iterator[Shop]:
    pem = (VECTORS / "rsa-test-private-pkcs1.pem").read_bytes()
    with requests.Session() as session:
        yield Shop(simulator.root_url, "globex", "GLOBEX-CONTROL-KEY-7", "51500", pem, session)


@pytest.fixture(scope="module")
def receiver() -> Iterator[CallbackReceiver]:
    """The merchant's back end: where the payer's browser returns, and the server callbacks."""
    with CallbackReceiver(CONTROL_KEY) as running:
        yield running


def token_for(shop: Shop, cvv: str = "123", number: str = CARD, expiry: str = "12/30") -> str:
    answer = tokenize(shop.root, card(shop.ticket(), number, expiry, cvv))
    assert answer.status_code == 200, answer.text
    return str(json_of(answer)["hostedFieldsToken"])


def pay(shop: Shop, receiver: CallbackReceiver, cvv: str = "123", **changed: str) -> tuple[dict[str, Any], str]:
    """A token, then a sale of it: (the sale's answer, its client_orderid)."""
    fields = shop.sale_fields(token_for(shop, cvv), receiver.redirect_url, **changed)
    answer = shop.post("sale", fields)
    assert answer.status_code == 200, answer.text
    return json_of(answer), fields["client_orderid"]


def advance(simulator: SimulatorServer, seconds: float) -> None:
    answer = requests.post(simulator.root_url + "/_sim/clock/advance", json={"seconds": seconds}, timeout=30)
    assert answer.status_code == 200, answer.text


# --- 3.1 the common rules of the three calls ----------------------------------------------------------------------


def test_an_answer_is_a_json_object_in_the_pay_json_media_type(shop: Shop) -> None:
    """[ex] 3.1: Accept application/vnd.pay+json; the body a JSON object."""
    answer = shop.post("tokenize/create-ephemeral-ticket")
    assert answer.headers["content-type"].startswith(JSON_TYPE)
    assert isinstance(json.loads(answer.text), dict)


def test_the_body_is_decoded_as_a_form_before_the_base_string_is_built(shop: Shop, receiver: CallbackReceiver) -> None:
    """[ex] 3.1: spaces sent as '+' (urlencode), a user agent with spaces, slashes, parentheses and semicolons."""
    fields = shop.sale_fields(token_for(shop), receiver.redirect_url, order_desc="Hosted Fields (test) order; a/b")
    assert "+" in urlencode(fields) and "%3B" in urlencode(fields)
    answer = shop.post("sale", fields)
    assert answer.status_code == 200, answer.text


def test_a_signature_over_the_raw_body_is_refused(shop: Shop) -> None:
    """[ex] 3.1: the decoded body is signed, not its bytes: a base string over '+' and '%3B' does not verify."""
    fields = {"login": shop.login, "client_orderid": "hf x;y", "orderid": "1"}
    raw = [(name, quote_plus(value)) for name, value in fields.items()]
    answer = shop.post("status", fields, authorization=shop.authorization(shop.url("status"), raw))
    assert answer.status_code == 401, answer.text


@pytest.mark.parametrize("sort_header", [True, False], ids=["names sorted (PHP)", "names in another order"])
def test_the_authorization_header_is_read_in_any_order(shop: Shop, sort_header: bool) -> None:
    """[ex] 3.1: PHP sorts the header's names, the others do not: accept any order."""
    assert shop.post("tokenize/create-ephemeral-ticket", sort_header=sort_header).status_code == 200


@pytest.mark.parametrize("broken", ["tampered body", "another key", "another URL", "no header"])
def test_a_bad_or_missing_signature_is_a_401_in_plain_text_with_a_reason(
    shop: Shop, globex: Shop, receiver: CallbackReceiver, broken: str
) -> None:
    """[ex] 3.1 "the gateway answers 401"; [emu] text/plain "invalid signature: <reason>", not JSON, so that the
    examples take it for a failed call and not for a decline."""
    fields = shop.sale_fields("hf_not-spent", receiver.redirect_url)
    url, pairs = shop.url("sale"), list(fields.items())
    impostor = Shop(**{**globex.__dict__, "login": shop.login})  # the demo login, another merchant's key
    authorization = {
        "tampered body": lambda: shop.authorization(url, list({**fields, "amount": "0.01"}.items())),
        "another key": lambda: impostor.authorization(url, pairs),
        "another URL": lambda: shop.authorization(url + "/", pairs),
        "no header": lambda: "",
    }[broken]()
    headers = {
        "Content-Type": FORM_TYPE,
        "Accept": JSON_TYPE,
        **({"Authorization": authorization} if authorization else {}),
    }
    answer = requests.post(url, data=urlencode(fields), headers=headers, timeout=30)
    assert answer.status_code == 401, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    assert answer.text.startswith("invalid signature: ") and len(answer.text) > len("invalid signature: ") + 10
    with pytest.raises(ValueError):
        json.loads(answer.text)


def test_an_endpoint_that_is_not_configured_is_refused_in_json(shop: Shop) -> None:
    """[ex] 3.1: a refusal the page shows is a JSON object with error-message (error-code a number)."""
    answer = shop.post("tokenize/create-ephemeral-ticket", endpoint_id="999999")
    body = json_of(answer)
    assert answer.status_code == 400 and "999999" in body["error-message"]
    assert type(body["error-code"]) is int


# --- 3.2 the ticket -----------------------------------------------------------------------------------------------


def test_a_ticket_is_a_one_field_object_fresh_at_every_call(shop: Shop) -> None:
    """[ex] 3.2: {"ephemeralTicket": "<string>"}, an empty form body, only the oauth parameters signed; a fresh
    one per page load."""
    answers = [shop.post("tokenize/create-ephemeral-ticket") for _ in range(2)]
    bodies = [json_of(answer) for answer in answers]
    assert all(answer.status_code == 200 for answer in answers)
    assert all(list(body) == ["ephemeralTicket"] and type(body["ephemeralTicket"]) is str for body in bodies)
    assert bodies[0]["ephemeralTicket"] != bodies[1]["ephemeralTicket"]


def test_a_ticket_is_single_use(shop: Shop) -> None:
    """[ex] 3.2 and 7: one tokenization per ticket."""
    ticket = shop.ticket()
    assert tokenize(shop.root, card(ticket)).status_code == 200
    again = tokenize(shop.root, card(ticket))
    assert again.status_code == 400 and json_of(again)["code"] == 4003, again.text


def test_a_ticket_lives_fifteen_minutes_on_the_simulator_s_clock(simulator: SimulatorServer, shop: Shop) -> None:
    """[ex] 3.2: valid 15 minutes (the control API moves the simulator's clock)."""
    young, old = shop.ticket(), shop.ticket()
    advance(simulator, 15 * MINUTE - 5)
    assert tokenize(shop.root, card(young)).status_code == 200
    advance(simulator, 10)
    late = tokenize(shop.root, card(old))
    assert late.status_code == 400 and json_of(late)["code"] == 4003
    assert "expired" in json_of(late)["message"]


# --- 6 the tokenize call of the SDK ---------------------------------------------------------------------------------


def test_the_preflight_is_a_204_with_the_cors_headers(shop: Shop) -> None:
    """[emu] 6: OPTIONS 204; Allow-Origin the request's Origin, Allow-Headers content-type, Allow-Methods POST,
    OPTIONS, Vary: Origin (the page's fetch is cross-origin, its JSON content type asks for a preflight)."""
    answer = requests.options(
        shop.root + "/api/v4/tokenize/hosted-fields",
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type",
        },
        timeout=30,
    )
    assert answer.status_code == 204 and answer.content == b""
    assert answer.headers["access-control-allow-origin"] == ORIGIN
    assert answer.headers["access-control-allow-headers"] == "content-type"
    assert answer.headers["access-control-allow-methods"] == "POST, OPTIONS"
    assert answer.headers["vary"] == "Origin"


@pytest.mark.parametrize("refused", [False, True], ids=["token", "refusal"])
def test_every_answer_of_the_tokenize_call_carries_the_cors_headers(shop: Shop, refused: bool) -> None:
    origin = "https://another-shop.example:8443"
    answer = tokenize(shop.root, card("tkt_unknown" if refused else shop.ticket()), origin=origin)
    assert answer.status_code == (400 if refused else 200)
    assert (answer.headers["access-control-allow-origin"], answer.headers["vary"]) == (origin, "Origin")
    assert answer.headers["access-control-allow-methods"] == "POST, OPTIONS"


def test_a_card_gives_a_hosted_fields_token(shop: Shop) -> None:
    """[emu] 6: 200 {"hostedFieldsToken": "<string>"}; the number as typed, with spaces."""
    answer = tokenize(shop.root, card(shop.ticket(), "4444 4444 4444 4448"))
    body = json_of(answer)
    assert answer.status_code == 200 and list(body) == ["hostedFieldsToken"] and type(body["hostedFieldsToken"]) is str


@pytest.mark.parametrize(
    ("body", "raw"),
    [
        (None, "{not json"),
        (None, "[1, 2]"),
        ({"cardNumber": 4444444444444448, "expiryDate": "12/30", "cvv": "1"}, None),
    ],
    ids=["not JSON", "not an object", "a number where a string goes"],
)
def test_a_malformed_request_is_4001(shop: Shop, body: object, raw: str | None) -> None:
    answer = tokenize(shop.root, body, raw=raw)
    assert (answer.status_code, json_of(answer)["code"]) == (400, 4001), answer.text
    assert json_of(answer)["message"].startswith("malformed tokenize request")


@pytest.mark.parametrize(
    ("expiry", "cvv", "field"),
    [("", "123", "expiryDate"), ("12/30", "", "cvv"), ("13/30", "123", "expiryDate"), ("12/30", "12", "cvv")],
    ids=["no expiry", "no cvv", "month 13", "two-digit cvv"],
)
def test_incomplete_card_data_is_4002_with_a_payer_message(shop: Shop, expiry: str, cvv: str, field: str) -> None:
    answer = tokenize(shop.root, card(shop.ticket(), expiry=expiry, cvv=cvv))
    body = json_of(answer)
    assert (answer.status_code, body["code"], body["field"]) == (400, 4002, field), answer.text
    assert body["message"].startswith("incomplete card data") and body["payerMessage"]


def test_an_unknown_ticket_is_4003(shop: Shop) -> None:
    answer = tokenize(shop.root, card("tkt_" + secrets.token_hex(8)))
    body = json_of(answer)
    assert (answer.status_code, body["code"]) == (400, 4003)
    assert body["message"] == "the ephemeral ticket is unknown or already spent"


@pytest.mark.parametrize(
    "number", ["44444444448", "4444444444444449", "4444-abcd-4444-4448"], ids=["too short", "not Luhn", "letters"]
)
def test_a_card_number_that_cannot_be_one_is_4004_naming_the_field(shop: Shop, number: str) -> None:
    """[ex] 4: 4004 "card number rejected", the everyday mistyped card, with its own payer message."""
    answer = tokenize(shop.root, card(shop.ticket(), number))
    body = json_of(answer)
    assert (answer.status_code, body["code"], body["field"]) == (400, 4004, "cardNumber"), answer.text
    assert body["message"].startswith("card number rejected") and body["payerMessage"]


def test_a_refusal_of_the_4xxx_class_spends_the_ticket(shop: Shop) -> None:
    """[ex] 4 and 7: the page then offers only a reload; the same ticket with a good card is refused."""
    ticket = shop.ticket()
    assert json_of(tokenize(shop.root, card(ticket, "4444444444444449")))["code"] == 4004
    again = tokenize(shop.root, card(ticket))
    assert json_of(again)["code"] == 4003 and "already spent" in json_of(again)["message"]


def test_the_journal_keeps_the_card_masked_and_never_the_cvv(simulator: SimulatorServer, shop: Shop) -> None:
    """Issue 37: the card never appears in clear in the journal (PAN as BIN and last four, the CVV never)."""
    number, cvv = "4539 1488 0343 6467", "987"
    answer = tokenize(shop.root, card(shop.ticket(), number, cvv=cvv))
    assert answer.status_code == 200
    entries = requests.get(simulator.root_url + "/_sim/journal", params={"limit": 500}, timeout=30).json()["entries"]
    line = [entry for entry in entries if entry["operation"] == "tokenize_hosted_fields"][-1]
    assert (line["login"], line["http_status"]) == (LOGIN, 200)
    kept = line["fields"]["cardNumber"]
    assert kept.replace(" ", "").startswith("453914") and kept.endswith("6467") and "*" in kept
    assert line["fields"]["cvv"] != cvv
    text = json.dumps(entries)
    assert number.replace(" ", "") not in text.replace(" ", "") and f'"{cvv}"' not in text


# --- 3.3 and 7 the sale of a token ----------------------------------------------------------------------------------


def test_the_sale_answer_s_order_id_is_a_json_number(shop: Shop, receiver: CallbackReceiver) -> None:
    """[ex] 3.3: paynet-order-id a number (a string in every other answer), merchant-order-id the client_orderid,
    serial-number a string."""
    sale, client_orderid = pay(shop, receiver)
    assert type(sale["paynet-order-id"]) is int and sale["paynet-order-id"] > 0
    assert (sale["merchant-order-id"], type(sale["serial-number"])) == (client_orderid, str)


def test_card_fields_beside_a_token_are_refused_naming_them(shop: Shop, receiver: CallbackReceiver) -> None:
    """[ex] 3.3: "sending those is an error"; the token is not spent by the refusal."""
    token = token_for(shop)
    fields = shop.sale_fields(token, receiver.redirect_url)
    with_card = {**fields, "credit_card_number": CARD, "expire_month": "12", "expire_year": "2030", "cvv2": "123"}
    answer = shop.post("sale", with_card)
    body = json_of(answer)
    assert answer.status_code == 400 and type(body["error-code"]) is int, answer.text
    assert all(name in body["error-message"] for name in ("credit_card_number", "expire_month", "expire_year", "cvv2"))
    assert CARD not in answer.text
    assert shop.post("sale", fields).status_code == 200  # the token still pays


def test_a_token_is_single_use(shop: Shop, receiver: CallbackReceiver) -> None:
    """[emu] 3.5 "Unknown or already spent hosted_fields_token."; [sim] 7: the first sale spends it."""
    token = token_for(shop)
    assert shop.post("sale", shop.sale_fields(token, receiver.redirect_url)).status_code == 200
    again = shop.post("sale", shop.sale_fields(token, receiver.redirect_url))
    body = json_of(again)
    assert again.status_code == 400 and body["error-message"] == "Unknown or already spent hosted_fields_token."
    assert type(body["error-code"]) is int


def test_the_same_sale_again_is_answered_with_its_order(shop: Shop, receiver: CallbackReceiver) -> None:
    """[sim] a repeated request (same client_orderid, amount, the token it spent) gets the order it made."""
    fields = shop.sale_fields(token_for(shop), receiver.redirect_url)
    first, again = (json_of(shop.post("sale", fields)) for _ in range(2))
    assert first["paynet-order-id"] == again["paynet-order-id"]


def test_another_merchant_s_token_is_unknown(shop: Shop, globex: Shop, receiver: CallbackReceiver) -> None:
    """[sim] a token is bound to the merchant of its ticket (signed here with a PKCS#1 key, section 3.1)."""
    token = token_for(globex)
    answer = shop.post("sale", shop.sale_fields(token, receiver.redirect_url))
    assert json_of(answer)["error-message"] == "Unknown or already spent hosted_fields_token."
    assert globex.post("sale", globex.sale_fields(token, receiver.redirect_url)).status_code == 200


def test_the_order_s_amount_is_the_sale_s(shop: Shop, receiver: CallbackReceiver) -> None:
    """[ex] 12 point 5: the amount is the server's (the Sale's), never the page's."""
    sale, client_orderid = pay(shop, receiver, amount="12.34")
    status = shop.status(str(sale["paynet-order-id"]), client_orderid)
    assert (status["amount"], status["currency"]) == ("12.34", "USD")


# --- 3.4 status, and the outcomes of the CVV table ---------------------------------------------------------------


def test_an_approved_status_has_the_keys_the_page_reads_with_their_types(
    shop: Shop, receiver: CallbackReceiver
) -> None:
    """[ex] 3.4 (status.js): status, paynet-order-id a STRING, merchant-order-id, amount, currency, card-type,
    last-four-digits, cardholder-name; approval-code, processor-rrn and bank_message once approved."""
    sale, client_orderid = pay(shop, receiver, "123")
    status = shop.status(str(sale["paynet-order-id"]), client_orderid)
    assert status["status"] == "approved"
    assert status["paynet-order-id"] == str(sale["paynet-order-id"])
    expected = {"merchant-order-id": client_orderid, "amount": "1.00", "currency": "USD", "card-type": "VISA",
                "last-four-digits": "4448", "cardholder-name": "JOHN SMITH"}  # fmt: skip
    assert {name: status[name] for name in expected} == expected
    assert all(
        type(status[name]) is str and status[name] for name in ("approval-code", "processor-rrn", "bank_message")
    )
    assert "redirect-to" not in status and "html" not in status


@pytest.mark.parametrize(("cvv", "code"), [("116", 51), ("209", 43), ("999", 5)], ids=["funds", "stolen", "other"])
def test_a_declined_status_carries_its_message_and_a_numeric_code(
    shop: Shop, receiver: CallbackReceiver, cvv: str, code: int
) -> None:
    """[ex] 3.4: declined, error-message a string; [emu] error-code a number; the CVV table of behaviour 6."""
    sale, client_orderid = pay(shop, receiver, cvv)
    status = shop.status(str(sale["paynet-order-id"]), client_orderid)
    assert status["status"] == "declined" and type(status["error-message"]) is str and status["error-message"]
    assert status["error-code"] == code and type(status["error-code"]) is int


def test_an_expired_card_is_tokenized_and_declined_at_the_sale(shop: Shop, receiver: CallbackReceiver) -> None:
    """[sim] as the sandbox declines a direct sale on an expired card."""
    fields = shop.sale_fields(token_for(shop, expiry="01/20"), receiver.redirect_url)
    sale = json_of(shop.post("sale", fields))
    status = shop.status(str(sale["paynet-order-id"]), fields["client_orderid"])
    assert (status["status"], status["error-code"]) == ("declined", 54)


def test_the_status_of_an_unknown_order_is_refused_in_json(shop: Shop) -> None:
    """[emu] 3.5: 400 {"error-message"}."""
    answer = shop.post("status", {"login": shop.login, "client_orderid": "hf-none", "orderid": "99999999"})
    assert answer.status_code == 400 and "99999999" in json_of(answer)["error-message"]


# --- 8 3-D Secure: redirect-to, the challenge, the way back --------------------------------------------------------


def challenged(shop: Shop, receiver: CallbackReceiver, **changed: str) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """A sale of a CVV 321 card: (its answer, client_orderid, the first status)."""
    sale, client_orderid = pay(shop, receiver, "321", server_callback_url=receiver.callback_url, **changed)
    return sale, client_orderid, shop.status(str(sale["paynet-order-id"]), client_orderid)


def through_the_challenge(redirect_to: str, receiver: CallbackReceiver, password: str) -> Shown:
    """The payer's browser goes to redirect-to, answers the ACS page, and is sent back to the merchant."""
    browser = Browser(receiver.redirect_url)
    first = browser.session.get(redirect_to, timeout=30)
    assert first.status_code == 200, first.text[:400]
    shown = browser.show(first.text, first.url)
    assert shown.challenge is not None, shown.html[:800]
    back = browser.answer(shown, password)
    assert back.to_merchant is not None and back.to_merchant.method == "post", back.html[:800]
    return back


def test_a_challenge_is_processing_with_an_absolute_redirect_to_and_never_html(
    shop: Shop, receiver: CallbackReceiver
) -> None:
    """[ex] 8: the sale answer sends the payer nowhere; a status processing with redirect-to does (an absolute URL
    the browser can reach); the pages do not handle html."""
    sale, _, status = challenged(shop, receiver)
    assert set(sale) == {"type", "serial-number", "paynet-order-id", "merchant-order-id"}
    assert status["status"] == "processing" and "html" not in status
    assert status["redirect-to"].startswith(shop.root + "/"), status


@pytest.mark.parametrize(("password", "final"), [(PASSWORD, "approved"), ("not-the-password", "declined")])
def test_after_the_challenge_the_browser_posts_exactly_four_signed_fields_to_redirect_url(
    shop: Shop, receiver: CallbackReceiver, password: str, final: str
) -> None:
    """[ex] 8: status, orderid, merchant_order and control = sha1_hex(status + orderid + merchant_order + control
    key), form-encoded, to the Sale's redirect_url; the order final; merchant_order the Sale's client_orderid."""
    sale, client_orderid, status = challenged(shop, receiver)
    back = through_the_challenge(status["redirect-to"], receiver, password).to_merchant
    assert back is not None and back.action == receiver.redirect_url
    sent = back.fields
    orderid = str(sale["paynet-order-id"])
    assert set(sent) == {"status", "orderid", "merchant_order", "control"}, sent
    assert (sent["status"], sent["orderid"], sent["merchant_order"]) == (final, orderid, client_orderid)
    assert sent["control"] == independent.sha1_hex(final + orderid + client_orderid + CONTROL_KEY)
    assert shop.status(orderid, client_orderid)["status"] == final


def test_the_payer_is_sent_to_the_challenge_once(shop: Shop, receiver: CallbackReceiver) -> None:
    """[ex] 8 (status.js follows redirect-to whenever it is there): once the ACS page is answered the status no
    longer carries it, so the return page's poll does not send the payer back; the ACS page is used up."""
    sale, client_orderid, status = challenged(shop, receiver)
    through_the_challenge(status["redirect-to"], receiver, PASSWORD)
    after = shop.status(str(sale["paynet-order-id"]), client_orderid)
    assert after["status"] == "approved" and "redirect-to" not in after
    assert requests.get(status["redirect-to"], timeout=30).status_code == 409


def test_a_challenge_the_payer_never_answers_declines(simulator: SimulatorServer, shop: Shop,
                                                     receiver: CallbackReceiver) -> None:  # fmt: skip
    """[sim] 13: a challenge not answered in time (challenge_timeout) declines; redirect-to is gone."""
    sale, client_orderid, status = challenged(shop, receiver)
    assert status["redirect-to"]
    advance(simulator, 20 * MINUTE)
    late = shop.status(str(sale["paynet-order-id"]), client_orderid)
    assert late["status"] == "declined" and "redirect-to" not in late


def test_the_callback_goes_out_as_for_any_sale(shop: Shop, receiver: CallbackReceiver) -> None:
    """Issue 37: callbacks as for any sale when a server_callback_url is given."""
    sale, _, status = challenged(shop, receiver)
    through_the_challenge(status["redirect-to"], receiver, PASSWORD)
    callback = receiver.wait_for_callback(orderid=str(sale["paynet-order-id"]), timeout=10)
    assert (callback.params["status"], callback.control_ok) == ("approved", True), callback.summary()
