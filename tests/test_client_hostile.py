"""The client against a hostile gateway (issue 9, items 9 and 10): a deadline per call, a bounded answer,
and every malformed answer a ``ProtocolError`` (the CLI exits 4, never with a traceback)."""

from __future__ import annotations

import json
import time

import pytest

from tests.hostile_server import HostileServer, answer, drip
from tests.recording_server import RecordingServer, Reply
from toolkit.cli import main
from toolkit.client import GatewayClient
from toolkit.config import GatewayConfig
from toolkit.errors import ProtocolError, TransportError
from toolkit.testdata import sale_fields

ACK = {"type": "async-response", "serial-number": "s-1", "paynet-order-id": "8056020", "merchant-order-id": "inv-1"}


def hostile_client(config: GatewayConfig, hostile: HostileServer, timeout: float) -> GatewayClient:
    return GatewayClient(config.with_overrides(base_url=hostile.base_url, timeout=timeout))


@pytest.mark.parametrize(
    "script",
    [
        drip(answer(json.dumps(ACK).encode()), 0.1),
        [(answer(json.dumps(ACK).encode())[:-40], 0.0), *drip(answer(json.dumps(ACK).encode())[-40:], 0.1)],
    ],
    ids=["head and body one byte at a time", "the body one byte at a time"],
)
def test_a_dripping_gateway_cannot_hold_a_call_past_its_deadline(config, script):
    with HostileServer(script) as hostile, hostile_client(config, hostile, 0.5) as client:
        started = time.monotonic()
        with pytest.raises(TransportError, match=r"within 0\.5s \(the call's deadline"):
            client.status(client_orderid="inv-1")
        assert time.monotonic() - started < 1.5  # the script lasts 4 s or more


def test_a_slow_but_timely_answer_still_arrives(config):
    with (
        HostileServer(drip(answer(json.dumps(ACK).encode()), 0.002)) as hostile,
        hostile_client(config, hostile, 5) as client,
    ):
        assert client.sale(sale_fields()).orderid == "8056020"


@pytest.mark.parametrize(
    ("head", "message"),
    [
        (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.pay+json\r\nContent-Length: 10485760\r\n\r\n{",
            "announces",
        ),
        (b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.pay+json\r\nTransfer-Encoding: chunked\r\n\r\n", "larger"),
    ],
    ids=["announced", "chunked"],
)
def test_an_answer_above_the_size_limit_is_a_protocol_error(config, head, message):
    chunk = b"10000\r\n" + b" " * 0x10000 + b"\r\n"
    with (
        HostileServer([(head, 0.0), *[(chunk, 0.0)] * 40]) as hostile,
        hostile_client(config, hostile, 5) as client,
        pytest.raises(ProtocolError, match=f"{message}.*1048576 bytes"),
    ):
        client.status(client_orderid="inv-1")


MALFORMED = [
    ("[" * 100_000, "not JSON"),
    ('{"type": "async-response", "x": ' + "[" * 100_000 + "}", "nested 100001 levels"),
    ('{"type": "async-response", "paynet-order-id": ' + "7" * 5001 + "}", "a number of 5001 characters"),
    ('{"type": "async-response", "paynet-order-id": NaN}', "NaN is not a number"),
    ('{"type": "async-response", "paynet-order-id": "nan"}', "paynet-order-id 'nan' is not a gateway orderid"),
    ('{"type": "hello"}', "type 'hello' is not a gateway response type"),
    ('{"serial-number": "s-1"}', "no type field"),
    ("\x00\x9c\x01=\x02\x7f&\x10\x11=\x12", "not key=value pairs of the gateway"),
]


@pytest.mark.parametrize(("body", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
def test_a_malformed_answer_is_a_protocol_error(server: RecordingServer, client: GatewayClient, body, message):
    server.reply(Reply(body, 200, "application/vnd.pay+json"))
    with pytest.raises(ProtocolError, match="HTTP 200") as raised:
        client.sale(sale_fields())
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("body", "message"), MALFORMED[:4] + MALFORMED[7:], ids=["deep", "nested", "digits", "nan", "binary"]
)
def test_the_cli_exits_4_on_a_malformed_answer_without_a_traceback(capsys, server: RecordingServer, body, message):
    server.reply(Reply(body, 200, "application/vnd.pay+json"))
    code = main(["call", "status", "client_orderid=inv-1", "orderid=8056020", "--base-url", server.base_url])
    err = capsys.readouterr().err
    assert code == 4 and message in err and "Traceback" not in err and len(err.splitlines()) == 1


# --- second round (issue 19, #9): what the client accepted ---------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (json.dumps({**ACK, "type": "status-response", "status": "approved", "amount": "1E+999"}),
         r"amount '1E\+999' is not an amount of the gateway"),
        ('{"type": "status-response", "status": "approved", "amount": 1E+999, "serial-number": "s"}',
         r"amount '1E\+999' is not an amount of the gateway"),
        (json.dumps({**ACK, "type": "status-response", "status": "approved", "amount": "-0.001"}),
         "amount '-0.001' is not an amount of the gateway"),
    ],
    ids=["amount 1E+999 as text", "amount 1E+999 as a number", "a negative amount"],
)  # fmt: skip
def test_an_answer_with_an_amount_that_is_no_amount_is_a_protocol_error(config, body, message):
    with (
        HostileServer([(answer(body.encode()), 0.0)]) as hostile,
        hostile_client(config, hostile, 5) as client,
        pytest.raises(ProtocolError, match=message),
    ):
        client.status(client_orderid="inv-1")


def test_an_answer_that_is_not_utf8_is_a_protocol_error(config):
    body = b'{"type": "status-response", "status": "approved", "descriptor": "caf\xe9"}'
    with (
        HostileServer([(answer(body), 0.0)]) as hostile,
        hostile_client(config, hostile, 5) as client,
        pytest.raises(ProtocolError, match=r"not UTF-8 text \(byte 68\)"),
    ):
        client.status(client_orderid="inv-1")


def test_a_field_that_cannot_be_sent_as_utf8_is_refused_before_sending(config):
    from toolkit.errors import InvalidRequestError

    with (
        GatewayClient(config.with_overrides(base_url="http://127.0.0.1:9/paynet")) as client,
        pytest.raises(InvalidRequestError, match="order_desc: holds a character that is not text"),
    ):
        client.sale(sale_fields(order_desc="caf\udce9"))
