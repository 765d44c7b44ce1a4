"""``gatekit proxy`` and Hosted Fields (hosted-fields.md section 3): the three v4 calls are recognised, their OAuth
RSA-SHA256 signature checked (and made again for the gateway's URL), their JSON answers read with the types the
merchant examples read (``paynet-order-id`` a number in the sale's answer, ``error-code`` a number: not flagged;
the other way round: flagged), a refused signature said as such; the SDK's tokenize call passing through is named
for what it is and its body never recorded; neither the card nor the hosted fields token is ever printed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.leaks import leaks
from tests.test_proxy import _Lines
from toolkit.client import GatewayClient
from toolkit.errors import AuthenticationError, ValidationError
from toolkit.hosted_fields import sdk_url_of
from toolkit.operations import get_operation
from toolkit.payer import Payer
from toolkit.proxy import Keys, ProxyServer
from toolkit.proxy.hosted import check_hosted_answer
from toolkit.proxy.routes import route
from toolkit.simulator import SimulatorServer
from toolkit.testdata import card_for, hosted_sale_fields

JSON = {"content-type": "application/vnd.pay+json; charset=utf-8"}
ASKED = {"accept": "application/vnd.pay+json"}


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorServer]:
    with SimulatorServer() as running:
        yield running


def entries(folder: Path) -> list[dict[str, Any]]:
    index = json.loads((folder / "index.json").read_text())
    return [entry for scenario in index["scenarios"] for entry in
            json.loads((folder / scenario["file"]).read_text())["log"]["entries"]]  # fmt: skip


def test_the_three_calls_and_the_sdk_s_call_through_the_proxy(simulator: SimulatorServer, tmp_path: Path) -> None:
    """The proxy in front of the simulator's root: the merchant's client takes ``{proxy}/paynet`` as its gateway,
    the page's ``SDK_URL`` the proxy's host too, so the payer's tokenize call passes through it as well."""
    config = simulator.client_config()
    out, folder = _Lines(), tmp_path / "rec"
    keys = Keys(config.login, config.control_key, config.private_key)
    card = card_for("3ds-challenge")
    with (
        ProxyServer(simulator.root_url, keys=keys, out=out, record=folder) as proxy,
        GatewayClient(config.with_overrides(base_url=proxy.base_url + "/paynet")) as client,
    ):
        ticket = client.create_ephemeral_ticket().ephemeral_ticket
        payer = Payer()
        token = payer.tokenize_hosted_fields(ticket, card, sdk_url=sdk_url_of(proxy.base_url + "/paynet"),
                                             origin="http://127.0.0.1:9")  # fmt: skip
        sale = client.sale_v4(hosted_sale_fields(token.token, redirect_url="http://127.0.0.1:9/back"))
        status = client.wait_for_payer_or_final_v4(sale)
        with pytest.raises(ValidationError, match="already spent"):
            client.sale_v4(hosted_sale_fields(token.token, redirect_url="http://127.0.0.1:9/back"))
        payer.session.close()
    assert status.redirect_to, "the 3-D Secure card's status sends the payer on"
    heads = out.heads
    assert [head.split()[1] for head in heads] == [
        "create_ephemeral_ticket", "OPTIONS", "POST", "sale_v4", *["status_v4"] * (len(heads) - 5), "sale_v4",
    ], out.text  # fmt: skip
    assert all(head.endswith("  ok") for head in heads), out.text
    assert "200 an ephemeral ticket" in heads[0] and "200 async-response" in heads[3], out.text
    assert "400 validation-error 3: Unknown or already spent hosted_fields_token." in heads[-1], out.text
    assert (
        out.text.count("OAuth signature verified for the proxy's URL and re-signed for") == 3
    )  # (a note, once per URL)
    assert out.text.count("the Hosted Fields SDK's tokenize call: the payer's browser sends the card") == 1  # (once)
    assert token.token not in out.text and ticket not in out.text and leaks(out.text) == []
    assert card.number not in out.text and card.number[-4:] not in out.text

    recorded = entries(folder)
    tokenize = [entry for entry in recorded if entry["request"]["url"].endswith("/api/v4/tokenize/hosted-fields")]
    assert [entry["request"]["method"] for entry in tokenize] == ["OPTIONS", "POST"]
    assert all("postData" not in entry["request"] or not entry["request"]["postData"].get("text") for entry in tokenize)
    archives = "".join(path.read_text() for path in folder.rglob("*.har"))
    assert card.number not in archives and leaks(archives, test_cvv2_allowed=True) == []


def test_a_signature_the_gateway_refuses_is_said_to_be_refused_not_a_broken_answer(simulator: SimulatorServer):
    """Without the merchant's keys the proxy forwards the signature made for its own URL: the gateway refuses it
    with its ``text/plain`` reason, which the proxy quotes (masked) instead of calling it no gateway answer."""
    config = simulator.client_config()
    out = _Lines()
    with (
        ProxyServer(simulator.base_url, out=out) as proxy,
        GatewayClient(config.with_overrides(base_url=proxy.base_url)) as client,
        pytest.raises(AuthenticationError),
    ):
        client.create_ephemeral_ticket()
    assert out.heads[0].split()[1:4] == ["create_ephemeral_ticket", "1001", "401"], out.text
    assert "  ! HTTP 401: the gateway refused the OAuth signature (" in out.text, out.text
    assert "not a gateway answer" not in out.text and "not a JSON object" not in out.text


def test_card_fields_beside_the_token_are_flagged_without_their_values(simulator: SimulatorServer):
    config = simulator.client_config()
    out = _Lines()
    card = card_for("approved")
    keys = Keys(config.login, config.control_key, config.private_key)
    fields = hosted_sale_fields("hf_not-a-token", redirect_url="http://127.0.0.1:9/back", **card.fields())
    with (
        ProxyServer(simulator.base_url, keys=keys, out=out) as proxy,
        GatewayClient(config.with_overrides(base_url=proxy.base_url)) as client,
        pytest.raises(ValidationError),
    ):
        client.call("sale_v4", fields, validate=False)
    assert "  ! credit_card_number: is refused beside hosted_fields_token, which replaces it" in out.lines, out.text
    assert "  ! cvv2: is refused beside hosted_fields_token, which replaces it" in out.lines, out.text
    assert card.number not in out.text and "hf_not-a-token" not in out.text and leaks(out.text) == []


SALE = {"type": "async-response", "serial-number": "s-1", "merchant-order-id": "hf-1"}
STATUS = {"type": "status-response", "serial-number": "s-2", "merchant-order-id": "hf-1", "status": "declined"}
NUMBER_NOT_STRING = "paynet-order-id is a JSON number, not a string (hosted-fields.md section 3)"
NO_TICKET = "create_ephemeral_ticket answer without ephemeralTicket (the examples refuse such an answer)"
TYPES = {
    "sale: paynet-order-id a number": ("sale_v4", 200, {**SALE, "paynet-order-id": 8056020}, []),
    "sale: paynet-order-id a string": ("sale_v4", 200, {**SALE, "paynet-order-id": "8056020"},
                                       ["paynet-order-id is a JSON string, not a number (hosted-fields.md section 3)"]),
    "status: paynet-order-id a string, error-code a number": (
        "status_v4", 200, {**STATUS, "paynet-order-id": "8056020", "error-code": 5, "error-message": "Do not honor"},
        []),
    "status: paynet-order-id a number": ("status_v4", 200, {**STATUS, "paynet-order-id": 8056020},
                                         [NUMBER_NOT_STRING]),
    "refusal: error-code a string": ("sale_v4", 400, {"error-message": "Unknown login x.", "error-code": "2"},
                                     ["error-code is a JSON string, not a number (hosted-fields.md section 3)"]),
    "ticket": ("create_ephemeral_ticket", 200, {"ephemeralTicket": "tkt_1"}, []),
    "ticket without one": ("create_ephemeral_ticket", 200, {"ephemeralTicket": ""},
                           [NO_TICKET]),
}  # fmt: skip


@pytest.mark.parametrize(("operation", "status", "answer", "problems"), TYPES.values(), ids=TYPES.keys())
def test_json_types_are_held_to_what_the_examples_read(
    operation: str, status: int, answer: dict[str, Any], problems: list[str]
) -> None:
    sent = {"client_orderid": "hf-1"}
    checked = check_hosted_answer(get_operation(operation), sent, ASKED, status, JSON, json.dumps(answer).encode())
    assert [str(check) for check in checked.checks if check.problem] == problems
    assert checked.fields.get("paynet-order-id", "8056020") == "8056020"  # (the number's digits, as text)


def test_a_body_that_is_no_json_object_is_a_failed_call_to_the_examples() -> None:
    checked = check_hosted_answer(get_operation("status_v4"), {}, ASKED, 200, {"content-type": "text/html"}, b"<p>")
    assert [str(check) for check in checked.checks] == [
        "HTTP 200 text/html: not a JSON object; the Hosted Fields examples decode every answer as JSON and take "
        "anything else for a failed call"
    ]
    refused = check_hosted_answer(get_operation("sale_v4"), {}, ASKED, 401, {"content-type": "text/plain"},
                                  b"invalid signature: 4444555566661111 mismatch")  # fmt: skip
    assert refused.summary.startswith("signature refused: invalid signature: 444455******1111")


@pytest.mark.parametrize(
    ("path", "operation"),
    [("/paynet/api/v4/tokenize/create-ephemeral-ticket/1001", "create_ephemeral_ticket"),
     ("/api/v4/sale/1001", "sale_v4"), ("/gw/paynet/api/v4/status/1001", "status_v4"),
     ("/paynet/api/v2/sale/1001", "sale")],
)  # fmt: skip
def test_routes_tell_the_v4_hosted_fields_calls_from_the_family_s(path: str, operation: str) -> None:
    found = route(path)
    assert found is not None and (found.operation.name, found.path_id) == (operation, "1001")
    assert route("/api/v4/tokenize/hosted-fields") is None
