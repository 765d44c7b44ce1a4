"""The client's short ways (a prepared template per URL, proxies kept per origin) give what requests' own ways give."""

from __future__ import annotations

import pytest
import requests

from tests.recording_server import RecordingServer
from tests.sample_requests import SALE
from toolkit import transport
from toolkit.client import GatewayClient
from toolkit.config import GatewayConfig
from toolkit.wire import decode_request_body

PAYOUT_CHECK = {
    "client_orderid": "inv-2",
    "amount": "5.00",
    "currency": "USD",
    "order_desc": "Payout check",
    "credit_card_number": "4444555566661111",
    "expire_month": "01",
    "expire_year": "2030",
    "card_printed_name": "A B",
}


class _RequestsWay(requests.Session):
    """A session whose own prepare_request is used: what requests itself builds."""

    def prepare_request(self, request: requests.Request) -> requests.PreparedRequest:
        return super().prepare_request(request)


def _fixed(config: GatewayConfig, session: requests.Session | None = None) -> GatewayClient:
    return GatewayClient(config, session=session, clock=lambda: 1669966913.0, nonce=lambda: "fixed-nonce")


@pytest.mark.parametrize(("operation", "fields"), [("sale", SALE), ("payout_check", PAYOUT_CHECK)])
def test_a_request_from_the_template_is_the_one_requests_prepares(config: GatewayConfig, operation, fields):
    transport._TEMPLATES.clear()
    with _fixed(config) as short, _fixed(config, _RequestsWay()) as long:
        for _ in range(2):  # the second comes from the template
            mine, theirs = short.prepare(operation, fields).request, long.prepare(operation, fields).request
            assert (mine.method, mine.url, mine.body) == (theirs.method, theirs.url, theirs.body)
            assert list(mine.headers.items()) == list(theirs.headers.items())
            assert mine.hooks == theirs.hooks == {"response": []}
    assert len(transport._TEMPLATES) == 1  # the short way kept one template (the requests way keeps none)


def test_session_headers_changed_between_calls_are_sent(server: RecordingServer, config: GatewayConfig):
    server.reply({"type": "status-response", "status": "approved", "paynet-order-id": "1", "serial-number": "s"})
    with GatewayClient(config) as client:
        client.status(client_orderid="inv-1")
        client.session.headers["X-Trace"] = "one"
        client.status(client_orderid="inv-1")
        client.session.headers["X-Trace"] = "two"
        client.status(client_orderid="inv-1")
    assert [request.header("X-Trace") for request in server.requests] == [None, "one", "two"]


def test_a_session_with_cookies_or_hooks_is_prepared_the_requests_way(config: GatewayConfig):
    with GatewayClient(config) as client:
        client.session.cookies.set("session", "abc")
        prepared = client.prepare("status", client_orderid="inv-1").request
        assert prepared.headers["Cookie"] == "session=abc"
        client.session.cookies.clear()
        calls: list[object] = []
        client.session.hooks["response"].append(lambda answer, **kwargs: calls.append(answer))
        assert client.prepare("status", client_orderid="inv-1").request.hooks["response"]


def test_a_hook_registered_on_one_request_stays_on_it(config: GatewayConfig):
    with GatewayClient(config) as client:
        first = client.prepare("status", client_orderid="inv-1").request
        first.register_hook("response", lambda answer, **kwargs: answer)
        second = client.prepare("status", client_orderid="inv-1").request
        assert second.hooks == {"response": []}
        assert decode_request_body(second.body) == decode_request_body(first.body)


def test_proxies_follow_the_environment(monkeypatch: pytest.MonkeyPatch, config: GatewayConfig):
    session = requests.Session()
    prepared = _fixed(config, session).prepare("status", client_orderid="inv-1").request
    for value in (None, "http://proxy.example:3128", "http://other.example:8080"):
        if value is None:
            monkeypatch.delenv("HTTP_PROXY", raising=False)
            monkeypatch.delenv("http_proxy", raising=False)
        else:
            monkeypatch.setenv("http_proxy", value)
        monkeypatch.setenv("no_proxy", "")
        monkeypatch.delenv("NO_PROXY", raising=False)
        expected = requests.utils.resolve_proxies(prepared, session.proxies, session.trust_env)
        assert transport._proxies(session, prepared) == expected
        assert transport._proxies(session, prepared) == expected  # kept, and still right
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    assert transport._proxies(session, prepared) == requests.utils.resolve_proxies(prepared, session.proxies, True)
