"""Exchange records: what observers, logs and reports receive; masked at birth."""

from __future__ import annotations

import pytest

from tests.recording_server import RecordingServer, Reply
from tests.sample_requests import CVV, PAN, SALE
from toolkit import demo
from toolkit.client import GatewayClient
from toolkit.errors import TransportError, ValidationError
from toolkit.exchange import Exchange
from toolkit.recording import Recorder

DESTINATION = "4444000011118888"
PAYOUT = {
    "client_orderid": "p-1",
    "amount": "10.42",
    "currency": "EUR",
    "credit_card_number": PAN,
    "destination-card-no": DESTINATION,
    "cvv2": CVV,
    "expire_month": "12",
    "expire_year": "2099",
}


@pytest.fixture
def recorded(config):
    exchanges: list[Exchange] = []
    with GatewayClient(config, observers=[exchanges.append]) as gateway:
        yield gateway, exchanges


def everything_in(exchange: Exchange) -> str:
    return repr(exchange) + exchange.as_curl() + str(exchange.signature)


@pytest.mark.parametrize(
    ("operation", "fields", "reply"),
    [
        ("payout", PAYOUT, {"type": "async-response", "paynet-order-id": "1"}),
        ("transfer", PAYOUT, {"type": "async-response", "paynet-order-id": "1"}),
        ("sale", SALE, {"type": "validation-error", "error-message": f"card {PAN} refused"}),
    ],
    ids=["HMAC-SHA1 payout", "RSA-SHA256 transfer", "control sale, card echoed in the answer"],
)
def test_records_carry_no_card_data_and_no_secret(server, recorded, operation, fields, reply):
    gateway, exchanges = recorded
    refused = reply["type"] == "validation-error"
    server.reply(Reply(reply, 400 if refused else 200))
    if refused:
        with pytest.raises(ValidationError) as raised:
            gateway.call(operation, fields)
        assert PAN not in str(raised.value)
    else:
        gateway.call(operation, fields)
    [exchange] = exchanges
    shown = everything_in(exchange)
    for secret in (PAN, DESTINATION, f"cvv2={CVV}", f"cvv2%3D{CVV}", f"cvv2%253D{CVV}", demo.CONTROL_KEY):
        assert secret not in shown, secret
    assert dict(exchange.request_fields)["credit_card_number"] == "444455******1111"
    assert dict(exchange.request_fields)["cvv2"] == "***"


def test_a_record_keeps_what_is_needed_to_debug(server, recorded):
    gateway, exchanges = recorded
    server.reply({"type": "async-response", "paynet-order-id": "1"})
    gateway.payout(PAYOUT)
    [exchange] = exchanges
    assert (exchange.operation, exchange.method, exchange.status_code) == ("payout", "POST", 200)
    assert exchange.url == f"{server.base_url}/api/v2/payout/1001"
    assert exchange.request_headers["Authorization"].startswith("OAuth ")
    assert exchange.signature is not None and exchange.signature.scheme == "HMAC-SHA1"
    assert "credit_card_number%3D444455******1111" in exchange.signature.base_string
    assert exchange.elapsed > 0 and exchange.error is None
    assert '"paynet-order-id": "1"' in exchange.response_body


def test_curl_uses_placeholders_for_card_data_and_signatures(server, recorded):
    gateway, exchanges = recorded
    server.reply({"type": "async-response"})
    gateway.sale(SALE)
    curl = exchanges[0].as_curl()
    assert curl.startswith(f"curl -sS -X POST {server.base_url}/api/v2/sale/1001")
    assert "credit_card_number=$CARD_NUMBER" in curl and "cvv2=$CVV2" in curl and "control=$CONTROL" in curl
    assert "'Accept: application/vnd.pay+json'" in curl


def test_a_transport_failure_is_recorded_too(config):
    with RecordingServer() as gone:
        url = gone.base_url
    exchanges: list[Exchange] = []
    gateway = GatewayClient(config.with_overrides(base_url=url), observers=[exchanges.append])
    with gateway, pytest.raises(TransportError):
        gateway.status(client_orderid="inv-1")
    [exchange] = exchanges
    assert exchange.status_code is None and exchange.error


def test_the_record_is_built_once_and_every_observer_gets_it(config, server):
    """One hook list: a recorder is an observer like any other, and gets the very record the others get."""
    seen: list[Exchange] = []
    recorder = Recorder()
    server.reply({"type": "async-response", "paynet-order-id": "1"})
    with GatewayClient(config, observers=[seen.append, recorder]) as gateway:
        gateway.sale(SALE)
    [exchange] = seen
    assert recorder.records == [exchange] and recorder.records[0] is exchange
    assert dict(exchange.request_fields)["cvv2"] == "***" and exchange.outcome_values == {"cvv2": CVV}
    assert "outcome_values" not in repr(exchange) and f"'{CVV}'" not in repr(exchange)  # (kept apart, not shown)


def test_a_custom_observer_sees_each_exchange_and_a_recorder_given_as_record_joins_the_observers(config, server):
    class Counter:
        def __init__(self) -> None:
            self.operations: list[str] = []

        def __call__(self, exchange: Exchange) -> None:
            self.operations.append(exchange.operation)

    counter, recorder = Counter(), Recorder()
    server.reply({"type": "status-response", "status": "approved"})
    with GatewayClient(config, observers=[counter], record=recorder) as gateway:
        assert gateway.observers == [counter, recorder]
        gateway.status(client_orderid="inv-1")
        gateway.observers.remove(recorder)
        gateway.status(client_orderid="inv-1")
    assert counter.operations == ["status", "status"] and len(recorder) == 1


def test_the_client_s_recorder_attribute_is_deprecated_for_the_observers(config):
    first, second = Recorder(), Recorder()
    with GatewayClient(config, record=first) as gateway:
        with pytest.deprecated_call(match="a recorder is an observer of exchanges like any other"):
            gateway.recorder = second
        assert gateway.observers == [second]
        with pytest.deprecated_call():
            assert gateway.recorder is second
