"""A request that is no form (issue 36, point 2): spec 2.1 and behaviour sections 1 and 12.

The gateway reads ``application/x-www-form-urlencoded`` bodies only; a servlet-style form reader sees any other
body (no Content-Type, ``text/plain``, ``application/json``) as an empty form.  The strict simulator refuses such
a request and names the Content-Type (a JSON body was refused as "a field name of 460 characters"); a lenient one
reads it all the same and warns in the journal.  The client refuses to send it, and the proxy flags it, in the
same words.  The requests are hand-built and signed by ``tests/independent.py`` (``tests/wire/gateway.py``).
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest
import requests

from tests.proxy_wire import Output
from tests.wire.build import minimal
from tests.wire.gateway import FORM_TYPE, JSON_TYPE, LOGIN, Answer, Gateway, names_field
from tests.wire.orders import Orders
from tests.wire.table import wire
from toolkit.client import GatewayClient
from toolkit.errors import InvalidRequestError, ValidationError
from toolkit.proxy import ProxyServer
from toolkit.simulator import SimulatorServer

SALE = wire("sale")
# name -> (the Content-Type sent, None for none; how the signed fields are written in the body)
BODIES = {
    "none": (None, urlencode),
    "text/plain": ("text/plain; charset=utf-8", urlencode),
    "application/json": ("application/json", lambda fields: json.dumps(dict(fields))),
}


def signed_sale(orders: Orders) -> dict[str, str]:
    return orders.gateway.with_control(SALE, minimal(SALE, orders))


def post_as(gateway: Gateway, content_type: str | None, body: str, *, json_mode: bool = True) -> Answer:
    """POST ``body`` to the sale address with ``content_type`` (None: no Content-Type header at all)."""
    headers = {"Accept": JSON_TYPE} if json_mode else {}
    if content_type is not None:
        headers["Content-Type"] = content_type
    response = gateway.session.post(gateway.url(SALE), data=body.encode("utf-8"), headers=headers, timeout=30)
    return Answer.of(response)


def names_content_type(message: str, content_type: str | None) -> bool:
    shown = (content_type or "missing").split(";")[0]
    return names_field(message, "Content-Type") and shown in message


@pytest.mark.parametrize("kind", BODIES, ids=BODIES.keys())
@pytest.mark.parametrize("json_mode", [True, False], ids=["json", "legacy"])
def test_a_request_that_is_no_form_is_refused_naming_its_content_type(
    gateway: Gateway, orders: Orders, kind: str, json_mode: bool
) -> None:
    content_type, write = BODIES[kind]
    answer = post_as(gateway, content_type, write(signed_sale(orders)), json_mode=json_mode)
    assert answer.http_status == (400 if json_mode else 200), answer.describe()
    assert answer.type == "validation-error", answer.describe()
    assert names_content_type(answer.message, content_type), answer.describe()
    assert "field name" not in answer.message and "is required" not in answer.message, answer.describe()


def test_the_form_type_is_read_in_any_case_and_with_a_charset(gateway: Gateway, orders: Orders) -> None:
    answer = post_as(gateway, "Application/X-WWW-Form-URLEncoded; charset=UTF-8", urlencode(signed_sale(orders)))
    assert answer.http_status == 200 and answer.type == "async-response", answer.describe()


def journal_warnings(root_url: str, answer: Answer) -> list[str]:
    """The journal's warnings for the request that got ``answer`` (``GET /_sim/journal``, by serial number)."""
    entries = requests.get(f"{root_url}/_sim/journal", params={"login": LOGIN, "limit": 200}, timeout=10).json()
    matching = [entry for entry in entries["entries"] if entry.get("serial") == answer.fields.get("serial-number")]
    assert matching, f"no journal entry for serial {answer.fields.get('serial-number')}"
    return [str(warning) for warning in matching[-1]["warnings"]]


@pytest.mark.parametrize("kind", BODIES, ids=BODIES.keys())
def test_lenient_reads_a_request_that_is_no_form_and_warns_naming_its_content_type(
    lenient: SimulatorServer, lenient_orders: Orders, kind: str
) -> None:
    content_type, write = BODIES[kind]
    fields = signed_sale(lenient_orders)
    answer = post_as(lenient_orders.gateway, content_type, write(fields))
    assert answer.http_status == 200 and answer.type == "async-response", answer.describe()
    assert answer["merchant-order-id"] == fields["client_orderid"], answer.describe()
    warnings = journal_warnings(lenient.root_url, answer)
    assert any(names_content_type(warning, content_type) and "lenient" in warning for warning in warnings), warnings


def test_the_client_refuses_to_send_what_the_simulator_refuses_in_the_same_words(
    simulator: SimulatorServer, gateway: Gateway, orders: Orders
) -> None:
    """A prepared call whose Content-Type was changed: refused before sending, or (``validate=False``) refused
    by the simulator; the proxy flags it.  One sentence in all three."""
    said = post_as(gateway, "application/json", json.dumps(signed_sale(orders))).message
    config = simulator.client_config()
    fields = {name: value for name, value in minimal(SALE, orders).items() if name != "login"}
    with GatewayClient(config) as client:
        call = client.prepare("sale", fields)
        call.request.headers["Content-Type"] = "application/json"
        with pytest.raises(InvalidRequestError) as refused:
            client.send(call)
    assert [str(problem) for problem in refused.value.problems] == [said]
    out = Output()
    with (
        ProxyServer(simulator.base_url, out=out) as proxy,
        GatewayClient(config.with_overrides(base_url=proxy.base_url), validate=False) as client,
    ):
        call = client.prepare("sale", fields)
        call.request.headers["Content-Type"] = "application/json"
        with pytest.raises(ValidationError) as answered:
            client.send(call)
    assert answered.value.error_message == said
    assert f"  ! {said}" in out.text.splitlines(), out.text


def test_the_proxy_says_nothing_else_of_a_body_the_gateway_reads_no_field_of(
    simulator: SimulatorServer, orders: Orders
) -> None:
    """Not every mandatory field "missing", nor the JSON text as one unknown field: the Content-Type only."""
    out = Output()
    with ProxyServer(simulator.base_url, out=out) as proxy:
        sender = Gateway(proxy.base_url)
        answer = post_as(sender, "application/json", json.dumps(signed_sale(orders)))
        sender.close()
    assert answer.type == "validation-error", answer.describe()
    head, *findings = out.text.strip().splitlines()
    assert head.endswith("1 problem") and findings == [f"  ! {answer.message}"], out.text
    assert FORM_TYPE in answer.message
