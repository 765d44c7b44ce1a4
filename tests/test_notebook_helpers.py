"""toolkit.notebook: the simulator in the kernel, profiles, masked views, the timeline, the signing debugger."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest
import requests
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from tests.vector_files import VECTORS, load_vectors
from toolkit import demo, notebook
from toolkit.debugger.oauth_check import base_string
from toolkit.exchange import Exchange
from toolkit.explorer import GatewaySession, diagnose
from toolkit.explorer.timeline import Timeline
from toolkit.explorer.views import ExchangeView, FieldsView, Note, SignatureView, TimelineView, show
from toolkit.flows import Merchant
from toolkit.models import Status
from toolkit.signing import OAuthParams, authorization_header
from toolkit.simcontrol import SimulatorControl
from toolkit.simulator.server import SimulatorServer
from toolkit.testdata.cards import card_for

ROOT = Path(__file__).resolve().parents[1]
PAN = "4538977399606732"


@pytest.fixture(scope="module")
def sim() -> Iterator[GatewaySession]:
    session = notebook.start_simulator()
    yield session
    session.stop()


# --- start_simulator and connect ----------------------------------------------------------------


def test_start_simulator_gives_a_wired_handle(sim: GatewaySession):
    assert isinstance(sim.merchant, Merchant) and sim.merchant.receiver is sim.receiver
    assert sim.merchant.callback_url == sim.receiver.callback_url and sim.client is sim.merchant.client
    assert isinstance(sim.control, SimulatorControl) and sim.control.health()
    order = sim.merchant.pay("sale", card_for("approved"), Decimal("10.42"))
    assert sim.merchant.final_status(order).status is Status.APPROVED
    assert sim.receiver.wait_for_callback(orderid=order.orderid).control_ok is True


def test_the_handle_never_shows_the_control_key(sim: GatewaySession):
    shown = repr(sim) + sim._repr_html_() + str(sim.describe()) + repr(sim.config)
    assert demo.CONTROL_KEY not in shown and "embedded simulator" in shown and "gatekit-demo" in shown


def test_stop_is_idempotent_and_options_reach_the_simulator():
    session = notebook.start_simulator(log_level="error")
    assert session.server is not None and session.server.port > 0
    session.stop()
    session.stop()
    assert session.stopped and "stopped" in session._repr_html_()
    with pytest.raises(requests.ConnectionError):
        requests.get(session.server.root_url + "/_sim/health", timeout=2)


def test_the_simulator_is_stopped_at_interpreter_exit():
    script = textwrap.dedent(
        """
        import atexit
        from toolkit import notebook
        holder = {}
        atexit.register(lambda: print("stopped at exit:", holder["sim"].stopped))  # runs after the session's
        holder["sim"] = notebook.start_simulator()
        print("running:", not holder["sim"].stopped)
        """
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["running:", "True", "stopped", "at", "exit:", "True"]


def test_connect_to_a_simulator_on_this_machine(clean_env: Path):
    with SimulatorServer() as server:
        session = notebook.connect("simulator", base_url=server.base_url)
        try:
            assert session.control is not None and session.server is None
            order = session.merchant.pay("sale", card_for("approved"), Decimal("5.00"))
            assert session.merchant.final_status(order).status is Status.APPROVED
            assert session.receiver.wait_for_callback(orderid=order.orderid).control_ok is True
        finally:
            session.stop()


def test_connect_to_a_remote_profile_asks_nothing_of_it(clean_env: Path):
    session = notebook.connect(
        "sandbox", base_url="https://sandbox.gateway.example/paynet", login="acme", control_key="k", endpoint_id="7"
    )
    try:
        assert session.control is None and session.callback_url is None
        assert ("callbacks to", "none: status polling only") in session.describe()
    finally:
        session.stop()


# --- views --------------------------------------------------------------------------------------


def _sale_exchange(sim: GatewaySession) -> Exchange:
    sim.merchant.pay("sale", card_for("approved", number=PAN), Decimal("10.42"))
    return next(e for e in reversed(sim.exchanges) if e.operation == "sale")


def test_exchange_view_shows_the_request_masked_with_its_control_formula(sim: GatewaySession):
    view = show(_sale_exchange(sim))
    assert isinstance(view, ExchangeView)
    for text in (view._repr_html_(), str(view)):
        assert PAN not in text and "453897******6732" in text and "cvv2=123" not in text
        assert "endpointId + client_orderid + amount_in_minor_units + email" in text
        assert "&lt;merchant_control_key&gt;" in text or "<merchant_control_key>" in text
        assert demo.CONTROL_KEY not in text


def test_oauth_signature_view_shows_the_base_string_masked(sim: GatewaySession):
    sim.merchant.payout("payout", Decimal("7.00"), card_for("approved", number=PAN))
    exchange = next(e for e in reversed(sim.exchanges) if e.operation == "payout")
    assert exchange.signature is not None
    view = show(exchange.signature)
    assert isinstance(view, SignatureView)
    text = str(view)
    assert "OAuth 1.0a HMAC-SHA1" in text and "oauth_nonce" in text and PAN not in text


def test_views_of_responses_callbacks_orders_and_mappings_are_masked(sim: GatewaySession):
    order = sim.merchant.pay("sale", card_for("approved", number=PAN), Decimal("3.00"))
    status = sim.merchant.final_status(order)
    callback = sim.receiver.wait_for_callback(orderid=order.orderid)
    for obj in (status, callback, order, {"note": f"card {PAN} cvv2=123"}):
        view = show(obj)
        assert isinstance(view, FieldsView)
        html, text = view._repr_html_(), str(view)
        assert PAN not in html + text and "cvv2=123" not in html + text
    assert "status-response" in show(status)._repr_html_()
    assert isinstance(show(42), Note) and show(sim) is sim


def test_timeline_of_an_order_holds_its_requests_polls_callbacks_and_follow_ups(sim: GatewaySession):
    order = sim.merchant.pay("sale", card_for("approved"), Decimal("10.00"))
    sim.merchant.final_status(order)
    sim.receiver.wait_for_callback(orderid=order.orderid)
    refund = sim.merchant.return_(order, Decimal("4.00"))
    sim.merchant.final_status(refund)
    view = sim.timeline_of(order)
    kinds = [event.kind for event in view.events]
    assert kinds[0] == "request" and "poll" in kinds and "callback" in kinds
    assert any(event.operation == "return" for event in view.events)
    assert all(event.concerns(order.orderid, order.client_orderid) for event in view.events)
    assert "sale 10.00 EUR: HTTP 200 async-response, orderid" in str(view)
    everything = sim.timeline_of().events
    assert [event for event in everything if event.concerns(order.orderid, order.client_orderid)] == view.events


def test_timeline_collapses_repeated_polls_and_notifies_listeners():
    timeline, seen = Timeline(), []
    timeline.subscribe(seen.append)
    for _ in range(3):
        timeline.note("status: processing", kind="poll", orderid="1")
    timeline.note("payer did something", orderid="1")
    assert [row[1:] for row in TimelineView(timeline.events()).rows()] == [
        ("↻ status ×3", "status: processing"),
        ("☺ payer", "payer did something"),
    ]
    assert len(seen) == 4 and timeline.for_order(orderid="2") == []
    timeline.clear()
    assert len(timeline) == 0


# --- the signing debugger: control --------------------------------------------------------------

KEY, LOGIN = demo.CONTROL_KEY, demo.LOGIN
CAPTURE = {"client_orderid": "inv-42", "orderid": "8056020", "amount": "10.42", "currency": "EUR"}


def sha1(*parts: str, key: str = KEY) -> str:
    return hashlib.sha1(("".join(parts) + key).encode()).hexdigest()


def capture_body(control: str, **fields: str) -> str:
    return urlencode({**CAPTURE, **fields, "control": control})


def diagnose_capture(control: str, **kwargs: Any) -> Any:
    return diagnose("capture", capture_body(control), endpoint_id="1001", login=LOGIN, control_key=KEY, **kwargs)


def test_a_right_control_verifies():
    result = diagnose_capture(sha1(LOGIN, "inv-42", "8056020", "1042", "EUR"))
    assert result.ok and result.findings == () and result.verdict.startswith("the control verifies")
    assert ("amount", "1042") in result.parts and ("merchant_control_key", "<merchant_control_key>") in result.parts


@pytest.mark.parametrize(
    ("control", "part", "expected", "found"),
    [
        (sha1(LOGIN, "inv-42", "8056020", "10.42", "EUR"), "amount", "1042", "10.42"),
        (sha1("inv-42", LOGIN, "8056020", "1042", "EUR"), "order of the parts",
         "login + client_orderid + orderid + amount + currency",
         "client_orderid + login + orderid + amount + currency"),
        (sha1("1001", "inv-42", "8056020", "1042", "EUR"), "login", LOGIN, "1001"),
        (sha1(LOGIN, "inv-42", "8056020", "1042", "EUR", key=KEY + "\n"), "merchant_control_key",
         "<merchant_control_key>", "<merchant_control_key>: the key followed by a newline (read from a file?)"),
        (sha1(LOGIN, "inv-42", "8056020", "1042", key=KEY), "currency", "EUR", "(left out)"),
        (sha1(LOGIN, "inv-42", "8056020", key=KEY), "formula",
         "SHA-1(login + client_orderid + orderid + amount_in_minor_units + currency + merchant_control_key)",
         "SHA-1(login + client_orderid + orderid + merchant_control_key)"),
        (hashlib.sha256((LOGIN + "inv-42" + "8056020" + "1042" + "EUR" + KEY).encode()).hexdigest(), "digest",
         "SHA-1, lower-case hex", "SHA-256"),
        (sha1(LOGIN, "inv-42", "8056020", "1042", "EUR", key="not-the-key"), "merchant_control_key",
         "this merchant's control key", "another key?"),
    ],
    ids=["amount-units", "field-order", "endpoint-for-login", "key-newline", "part-left-out", "other-formula",
         "sha256", "wrong-key"],
)  # fmt: skip
def test_a_wrong_control_names_the_part_that_differs(control: str, part: str, expected: str, found: str):
    result = diagnose_capture(control)
    assert not result.ok
    assert (result.mismatch.part, result.mismatch.expected, result.mismatch.found) == (part, expected, found)
    assert KEY not in str(result) + result._repr_html_()


def test_the_endpoint_id_is_the_one_in_the_path():
    fields = {"client_orderid": "inv-1", "amount": "0.94", "email": "a@b.example", "currency": "EUR"}
    signed_for_1002 = sha1("1002", "inv-1", "94", "a@b.example")
    body = urlencode({**fields, "control": signed_for_1002})
    url = "http://127.0.0.1:8080/paynet/api/v2/sale/1001"
    by_url = diagnose("sale", body, url=url, endpoint_id="1002", login=LOGIN, control_key=KEY)
    assert (by_url.mismatch.part, by_url.mismatch.expected, by_url.mismatch.found) == ("endpointId", "1001", "1002")
    assert "the URL addresses endpoint 1001, not the merchant's endpoint 1002" in by_url.notes
    searched = diagnose("sale", body, endpoint_id="1001", login=LOGIN, control_key=KEY)
    assert (searched.mismatch.expected, searched.mismatch.found) == ("1001", "1002")
    group = diagnose("sale", urlencode({**fields, "control": sha1("2001", "inv-1", "94", "a@b.example")}),
                     endpoint_id="1001", group_id="2001", login=LOGIN, control_key=KEY)  # fmt: skip
    assert group.mismatch.found == "2001" and "behaviour 1" in group.mismatch.why


def test_a_missing_control_an_untrimmed_value_and_upper_case_hex():
    missing = diagnose("capture", urlencode(CAPTURE), endpoint_id="1001", login=LOGIN, control_key=KEY)
    assert missing.verdict == "no control in the body" and missing.mismatch.found == "(missing)"
    untrimmed = diagnose("capture", capture_body(sha1(LOGIN, " inv-42", "8056020", "1042", "EUR"),
                         client_orderid=" inv-42"), endpoint_id="1001", login=LOGIN, control_key=KEY)  # fmt: skip
    assert untrimmed.mismatch.part == "client_orderid" and "trims blanks" in untrimmed.mismatch.why
    upper = diagnose_capture(sha1(LOGIN, "inv-42", "8056020", "1042", "EUR").upper())
    assert upper.ok and any("upper-case" in note for note in upper.notes)
    made_up = diagnose_capture("deadbeef")
    assert made_up.verdict == "the control sent is not a SHA-1 digest" and made_up.mismatch.found == "deadbeef"
    assert "40 digits 0-9 and a-f (spec 5.1); 8 characters were sent" in made_up.mismatch.why


@pytest.mark.parametrize("vector", load_vectors("control.json")["vectors"], ids=lambda v: v["case"])
def test_every_control_vector_verifies(vector: dict[str, Any]):
    meta = load_vectors("control.json")["meta"]
    operation = {"sale, doc example": "sale", "sale / preauth / sale-form / preauth-form": "preauth",
                 "account-verification(-form)": "account_verification", "make-rebill": "make_rebill",
                 "get-card-info": "get_card_info", "3DS upload (method-url / cres / pares)": "upload_cres_result",
                 "create-card-ref v2": "create_card_ref"}.get(vector["case"], vector["case"].split()[0])  # fmt: skip
    names = [part.strip() for part in vector["formula"].split("+")][:-1]
    fields = {"amount": vector.get("amount", ""), "currency": "EUR"} if "amount_minor" in names else {}
    for name, value in zip(names, vector["parts"], strict=False):
        if name not in ("endpointId", "login", "amount_minor", "''"):
            fields[name] = value
    fields["control"] = vector["sha1_hex"]
    endpoint = vector["parts"][0] if names[0] == "endpointId" else meta["endpoint_id"]
    result = diagnose(operation, fields, endpoint_id=endpoint, login=meta["login"],
                      control_key=meta["merchant_control_key"])  # fmt: skip
    assert result.ok, str(result)


# --- the signing debugger: OAuth ----------------------------------------------------------------

OAUTH = load_vectors("oauth.json")
PAYOUT = next(v for v in OAUTH["vectors"] if v["case"].startswith("HMAC-SHA1 payout"))
VECTOR_KEY = OAUTH["meta"]["merchant_control_key"]


def _params(vector: dict[str, Any]) -> OAuthParams:
    o = vector["oauth"]
    return OAuthParams(o["oauth_consumer_key"], o["oauth_signature_method"], o["oauth_timestamp"], o["oauth_nonce"])


def _hmac_header(text: str, key: str = VECTOR_KEY) -> str:
    signature = base64.b64encode(hmac.new(f"{key}&".encode(), text.encode(), hashlib.sha1).digest()).decode()
    return authorization_header(_params(PAYOUT), signature)


def diagnose_payout(header: str, url: str = PAYOUT["url"], body: Any = None, **kwargs: Any) -> Any:
    body = PAYOUT["body"] if body is None else body
    return diagnose("payout", body, authorization=header, url=url, login=OAUTH["meta"]["login"],
                    control_key=VECTOR_KEY, **kwargs)  # fmt: skip


def _naive_base_string(url: str, pairs: list[tuple[str, str]]) -> str:
    """What a client does with urlencode (spaces as '+') instead of RFC 3986."""
    return "&".join(quote(part, safe="") for part in ("POST", url, urlencode(sorted(pairs))))


VECTOR_OPERATIONS = {"send": "pan_eligibility_send", "payout": "payout", "transfer": "transfer",
                     "payout-check": "payout_check"}  # fmt: skip


@pytest.mark.parametrize("vector", OAUTH["vectors"], ids=lambda v: v["case"])
def test_the_oauth_vectors_verify(vector: dict[str, Any]):
    operation = VECTOR_OPERATIONS[vector["url"].split("/")[-2]]
    header = authorization_header(_params(vector), vector["signature"])
    public = (VECTORS / "rsa-test-public.pem").read_bytes()
    result = diagnose(operation, vector["body"], authorization=header, url=vector["url"], login=OAUTH["meta"]["login"],
                      control_key=VECTOR_KEY, public_key=public)  # fmt: skip
    assert result.ok, f"{vector['case']}: {result}"
    assert "4444555566661111" not in str(result) + result._repr_html_()


def test_our_base_string_builder_is_the_rfc_one():
    assert base_string(PAYOUT["url"], [*PAYOUT["body"].items(), *_params(PAYOUT).pairs()]) == PAYOUT["base_string"]


@pytest.mark.parametrize(
    ("mangle", "part", "why"),
    [
        (lambda bs: bs.replace("%2520", "%2B"), "encoding of spaces", "%20, never +"),
        (lambda bs: bs.replace("%26card_recurring_payment_id%3D%26", "%26"),
         "empty parameter (card_recurring_payment_id)", "empty parameter still takes part"),
        (lambda bs: bs.replace("sandbox.gateway.example", "sandbox.gateway.example%3A8443"), "URL", "not port 8443"),
        (lambda bs: bs.replace("sandbox.gateway.example", "sandbox.gateway.example%3A443"), "URL",
         "default ports are omitted"),
        (lambda bs: bs.replace("https%3A", "http%3A"), "URL", "not http"),
        (lambda bs: bs.replace("POST&", "post&", 1), "HTTP method", "upper case"),
    ],
    ids=["plus-for-space", "empty-parameter-left-out", "wrong-port", "default-port", "scheme", "method"],
)  # fmt: skip
def test_a_wrong_oauth_signature_names_the_part_that_differs(mangle: Any, part: str, why: str):
    result = diagnose_payout(_hmac_header(mangle(PAYOUT["base_string"])))
    assert not result.ok and result.mismatch.part.startswith(part) and why in result.mismatch.why, str(result)
    good = diagnose_payout(_hmac_header(PAYOUT["base_string"]))
    assert (result.compared, result.expected) == ("oauth_signature", good.sent), "a signature beside a signature"
    assert "4444555566661111" not in str(result) + result._repr_html_() and VECTOR_KEY not in str(result)


def test_a_client_that_url_encodes_with_plus_signs():
    pairs = [*PAYOUT["body"].items(), *_params(PAYOUT).pairs()]
    result = diagnose_payout(_hmac_header(_naive_base_string(PAYOUT["url"], pairs)))
    assert result.mismatch.part.startswith("encoding of spaces") and "+" in result.mismatch.found


def test_unsorted_parameters_and_a_wrong_key():
    pairs = [*PAYOUT["body"].items(), *_params(PAYOUT).pairs()]
    joined = "&".join(f"{quote(k, safe='~')}={quote(v, safe='~')}" for k, v in pairs)
    unsorted = "&".join(quote(part, safe="") for part in ("POST", PAYOUT["url"], joined))
    assert diagnose_payout(_hmac_header(unsorted)).mismatch.part == "order of the parameters"
    wrong = diagnose_payout(_hmac_header(PAYOUT["base_string"], key="another-key"))
    assert wrong.verdict == "signature mismatch: most likely the control key"


def test_header_problems_are_reported():
    assert diagnose_payout("").verdict == "no Authorization header"
    assert "cannot be read" in diagnose_payout("OAuth oauth_nonce=bare").verdict
    good = _hmac_header(PAYOUT["base_string"])
    stale = diagnose_payout(good, now=float(PAYOUT["oauth"]["oauth_timestamp"]) + 3600)
    assert not stale.ok and stale.mismatch.part == "oauth_timestamp"
    in_body = diagnose_payout(good, body={**PAYOUT["body"], "oauth_nonce": "x"})
    assert in_body.findings[0].part == "oauth_nonce" and "belong in the Authorization header" in in_body.findings[0].why
    partial = diagnose_payout('OAuth oauth_consumer_key="gatekit-demo", oauth_version="2.0"')
    assert partial.verdict.startswith(
        "incomplete header: oauth_signature_method, oauth_signature, oauth_timestamp, oauth_nonce missing"
    )
    assert any(f.part == "oauth_version" and f.found == "2.0" for f in partial.findings)
    login = diagnose("payout", PAYOUT["body"], authorization=good, url=PAYOUT["url"], login="other", control_key="k")
    assert any(f.part == "oauth_consumer_key" for f in login.findings)
    doubled = good.replace('%3D"', '%253D"')  # the signature's Base64 padding, encoded once more
    assert diagnose_payout(doubled).verdict == "oauth_signature is encoded twice"


def test_rsa_signatures_need_the_public_key_and_name_a_wrong_digest():
    vector = next(v for v in OAUTH["vectors"] if v["case"].endswith("payout-check"))
    header = authorization_header(_params(vector), vector["signature"])
    args: dict[str, Any] = {"authorization": header, "url": vector["url"], "login": OAUTH["meta"]["login"]}
    assert "without the public key" in diagnose("payout_check", vector["body"], **args).verdict
    private = serialization.load_pem_private_key((VECTORS / "rsa-test-private-pkcs8.pem").read_bytes(), None)
    assert isinstance(private, rsa.RSAPrivateKey)
    raw = private.sign(vector["base_string"].encode(), padding.PKCS1v15(), hashes.SHA1())
    args["authorization"] = authorization_header(_params(vector), base64.b64encode(raw).decode())
    result = diagnose("payout_check", vector["body"], private_key=private, **args)
    assert result.mismatch.part == "digest" and result.mismatch.found == "SHA-1"


def test_config_fills_in_the_merchant_and_the_live_gateway_agrees(sim: GatewaySession):
    fields = {"login": LOGIN, "client_orderid": "inv-9", "orderid": "8056020", "amount": "10.42", "currency": "EUR"}
    body = urlencode({**fields, "control": sha1(LOGIN, "inv-9", "8056020", "10.42", "EUR")})
    headers = {"Accept": "application/vnd.pay+json", "Content-Type": "application/x-www-form-urlencoded"}
    answer = requests.post(sim.config.base_url + "/api/v2/capture/1001", data=body, headers=headers, timeout=10)
    assert answer.status_code == 400 and "control mismatch" in answer.json()["error-message"]
    result = notebook.diagnose("capture", body, config=sim.config)
    assert result.mismatch.part == "amount" and result.mismatch.found == "10.42"


def test_a_request_signed_by_the_client_verifies_and_a_tampered_one_does_not(sim: GatewaySession):
    call = sim.client.prepare("payout_check", client_orderid="inv-9", amount="5.00", currency="EUR",
                              credit_card_number=PAN)  # fmt: skip
    args: dict[str, Any] = {"authorization": call.request.headers["Authorization"], "url": call.request.url}
    assert notebook.diagnose("payout_check", call.fields, config=sim.config, **args).ok
    tampered = [(name, "5.01" if name == "amount" else value) for name, value in call.fields]
    result = notebook.diagnose("payout_check", tampered, config=sim.config, **args)
    assert result.verdict == "signature mismatch: the body was changed after signing (the key pair is right)"
    assert result.mismatch.part == "body" and PAN not in str(result) + result._repr_html_()
    assert result.compared == "SHA-256 digest" and len(result.expected) == len(result.sent) == 64
    assert result.expected != result.sent and result.base_string.startswith("POST&")
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    header = call.request.headers["Authorization"]
    signature = re.search(r'oauth_signature="([^"]+)"', header)
    assert signature is not None
    forged = other.sign(result.base_string.encode(), padding.PKCS1v15(), hashes.SHA256())  # another key pair
    args["authorization"] = header.replace(signature.group(1), quote(base64.b64encode(forged).decode(), safe=""))
    wrong_key = notebook.diagnose("payout_check", call.fields, config=sim.config, **args)
    assert wrong_key.verdict == "signature mismatch: most likely the RSA key pair"
    assert wrong_key.sent == "(it does not open with the merchant's public key)"


def test_an_oauth_diagnosis_compares_signatures_with_signatures():
    good = diagnose_payout(_hmac_header(PAYOUT["base_string"]))
    assert good.ok and good.compared == "oauth_signature" and good.expected == good.sent
    assert good.base_string.startswith("POST&https%3A%2F%2F") and good.expected != good.base_string
    wrong = diagnose_payout(_hmac_header(PAYOUT["base_string"], key="another-key"))
    assert wrong.expected == good.expected and wrong.sent != wrong.expected
    shown = wrong._repr_html_()
    assert "expected oauth_signature" in shown and "sent oauth_signature" in shown and "base string" in shown
