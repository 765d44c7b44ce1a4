"""What ``gatekit proxy`` records and says of a request's body and an answer's header fields (issue 36, point 8).

- A body that is no form (JSON, text) is recorded as its text, card data masked by value; the line says only what
  the gateway makes of it.  A JSON sale left the CVV2 in clear in ``other-requests.har``: its text was read as a
  form, and a "field name" that held ``"cvv2": "987"`` was kept as it was.
- Repeated answer header fields stay apart, in what the client gets and in the recording.
- Blanks around a value, which the gateway ignores (behaviour section 1), are no problem: the answer's
  ``merchant-order-id`` answers the ``client_orderid`` sent with them, and the order keeps one recording.

The gateway is the strict simulator, or a hostile one (``tests/hostile_server.py``) for scripted answers; the
requests are hand-built and signed by ``tests/independent.py`` (``tests/wire/gateway.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.hostile_server import HostileServer
from tests.leaks import har_errors, leaks
from tests.proxy_wire import Output, Raw, request
from tests.wire.build import minimal
from tests.wire.gateway import JSON_TYPE, LOGIN, Gateway
from tests.wire.orders import SAMPLE, Orders, new_id
from tests.wire.table import wire
from toolkit.proxy import Keys, ProxyServer
from toolkit.simulator import SimulatorServer

SALE = wire("sale")
CVV = "987"  # no public test value: a recording masks it as any CVV2
MASKED_PAN = SAMPLE["credit_card_number"][:6] + "******" + SAMPLE["credit_card_number"][-4:]


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorServer]:
    with SimulatorServer() as running:
        yield running


@pytest.fixture(scope="module")
def orders(simulator: SimulatorServer) -> Iterator[Orders]:
    sender = Gateway(simulator.base_url)
    yield Orders(sender)
    sender.close()


def entries(har: Path) -> list[dict[str, Any]]:
    return list(json.loads(har.read_text())["log"]["entries"])


def post(proxy: ProxyServer, body: str, content_type: str) -> None:
    sender = Gateway(proxy.base_url)
    headers = {"Content-Type": content_type, "Accept": JSON_TYPE}
    sender.session.post(sender.url(SALE), data=body.encode(), headers=headers, timeout=30)
    sender.close()


def test_a_body_that_is_no_form_is_recorded_as_its_text_with_card_data_masked(
    simulator: SimulatorServer, orders: Orders, tmp_path: Path
) -> None:
    fields = orders.gateway.with_control(SALE, {**minimal(SALE, orders), "cvv2": CVV})
    first = {"cvv2": CVV, "redirect_url": "https://shop.example/back?a=1", **fields}  # ("=": a form's separator)
    out = Output()
    with ProxyServer(simulator.base_url, out=out, record=tmp_path) as proxy:
        post(proxy, json.dumps(first), "application/json")
        post(proxy, json.dumps(fields, indent=2), "application/json; charset=utf-8")
        post(proxy, urlencode(fields), "text/plain")
    har = tmp_path / "other-requests.har"
    assert leaks(har.read_text()) == [] and leaks(out.text) == [], (leaks(har.read_text()), out.text)
    assert har_errors(har) == []
    sent = [entry["request"]["postData"] for entry in entries(har)]
    assert [post["mimeType"] for post in sent] == ["application/json", "application/json; charset=utf-8",
                                                   "text/plain"], sent  # fmt: skip
    assert all("params" not in post and MASKED_PAN in post["text"] for post in sent), sent
    assert json.loads(sent[0]["text"])["cvv2"] == "***" and json.loads(sent[0]["text"])["amount"] == fields["amount"]
    assert f"cvv2={CVV}" not in sent[2]["text"] and "cvv2=***" in sent[2]["text"], sent[2]


REPEATED = (b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.pay+json\r\nSet-Cookie: a=1; Path=/\r\n"
            b"Set-Cookie: b=2; Path=/\r\nLink: <https://a.example>; rel=a\r\nLink: <https://b.example>; rel=b\r\n"
            b'Content-Length: 59\r\n\r\n{"type": "status-response", "status": "approved", "s": "1"}')  # fmt: skip


def test_repeated_answer_header_fields_stay_apart_for_the_client_and_in_the_recording(tmp_path: Path) -> None:
    with (
        HostileServer([(REPEATED, 0.0)]) as hostile,
        ProxyServer(hostile.base_url, out=Output(), record=tmp_path) as p,
        Raw(p.base_url) as client,
    ):
        client.send(request("POST /api/v2/status/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"))
        while b"\r\n\r\n" not in client.buffer:
            assert client.receive(), "the connection ended early"
    head = client.buffer.partition(b"\r\n\r\n")[0].decode().split("\r\n")
    assert [line for line in head if line.startswith(("Set-Cookie", "Link"))] == [
        "Set-Cookie: a=1; Path=/", "Set-Cookie: b=2; Path=/", "Link: <https://a.example>; rel=a",
        "Link: <https://b.example>; rel=b"]  # fmt: skip
    [entry] = entries(tmp_path / "other-requests.har")
    kept = [(h["name"], h["value"]) for h in entry["response"]["headers"] if h["name"] in ("Link", "Set-Cookie")]
    assert kept == [("Link", "<https://a.example>; rel=a"), ("Link", "<https://b.example>; rel=b")], kept


def test_blanks_around_values_are_no_problem_and_the_order_keeps_one_recording(
    simulator: SimulatorServer, orders: Orders, tmp_path: Path
) -> None:
    """The control signs the values as the gateway reads them (blanks ignored); the status that follows names the
    order without blanks."""
    client_orderid = new_id("blanks")
    fields = {**minimal(SALE, orders), "client_orderid": client_orderid}
    signed = orders.gateway.with_control(SALE, fields)
    sent = {**signed, "client_orderid": f" {client_orderid} ", "email": f"{fields['email']}  ", "amount": " 10.00"}
    out = Output()
    keys = Keys(LOGIN, simulator.client_config().control_key)
    with ProxyServer(simulator.base_url, out=out, record=tmp_path, keys=keys) as proxy:
        sender = Gateway(proxy.base_url)
        answer = sender.post(SALE, sent)
        status = wire("status")
        sender.post(status, sender.with_control(status, {"login": LOGIN, "client_orderid": client_orderid,
                                                         "orderid": answer["paynet-order-id"]}))  # fmt: skip
        sender.close()
    assert answer.type == "async-response" and answer["merchant-order-id"] == client_orderid, answer.describe()
    heads = [line for line in out.text.splitlines() if line[:2].isdigit()]
    assert len(heads) == 2 and all(head.endswith("ok") for head in heads), out.text
    assert [entry["_operation"] for entry in entries(tmp_path / f"order-{client_orderid}.har")] == ["sale", "status"]
