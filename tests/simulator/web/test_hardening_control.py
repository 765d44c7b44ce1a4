"""Who may use the control API, and which addresses the simulator hands out (issue 9, items 5 and 11).

Loopback clients only unless a control token is set; with a token, every ``/_sim/`` call needs it;
``Host`` and ``Origin`` checked against DNS rebinding and cross-site requests; the addresses handed
out (``redirect-url``, 3-D Secure pages, the OpenAPI server) never come from the ``Host`` header.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from toolkit.client import GatewayClient
from toolkit.masking import Secret
from toolkit.simcontrol import SimulatorControl, SimulatorControlError
from toolkit.simulator import SimulatorServer
from toolkit.simulator.server import exposed_warning
from toolkit.simulator.settings import default_settings
from toolkit.simulator.web.guard import ControlGuard
from toolkit.testdata import form_fields

TOKEN = "control-token-for-tests-1b4e"


@pytest.mark.parametrize(
    ("method", "path", "headers"),
    [
        ("GET", "journal", {"Host": "attacker.example"}),
        ("GET", "journal", {"Host": "attacker.example:8080"}),
        ("POST", "reset", {"Origin": "http://evil.example"}),
        ("POST", "reset", {"Origin": "null"}),
        ("POST", "clock/advance", {"Sec-Fetch-Site": "cross-site"}),
        ("DELETE", "faults", {"Sec-Fetch-Site": "same-site"}),
    ],
    ids=["rebound host", "rebound host and port", "cross-site origin", "null origin", "cross-site", "same-site"],
)
def test_dns_rebinding_and_cross_site_requests_are_refused(server: SimulatorServer, method, path, headers):
    answer = requests.request(method, f"{server.root_url}/_sim/{path}", headers=headers, json={}, timeout=5)
    assert answer.status_code == 403
    assert answer.json()["field"] in ("host", "origin") and "refused" in answer.json()["error"]


@pytest.mark.parametrize(
    "headers",
    [{}, {"Host": "localhost"}, {"Host": "localhost:1"}, {"Host": "[::1]:8080"}, {"Origin": "same"}],
    ids=["as addressed", "localhost", "localhost and a port", "ipv6 loopback", "same origin"],
)
def test_this_machine_may_use_the_control_api(server: SimulatorServer, headers):
    if headers.get("Origin") == "same":
        headers = {"Origin": server.root_url}
    answer = requests.get(f"{server.root_url}/_sim/health", headers=headers, timeout=5)
    assert answer.status_code == 200 and answer.json()["status"] == "ok"


@pytest.fixture(scope="module")
def guarded() -> Iterator[SimulatorServer]:
    with SimulatorServer(default_settings(control_token=Secret(TOKEN))) as running:
        yield running


@pytest.mark.parametrize(
    ("authorization", "message"),
    [(None, "needs Authorization: Bearer"), ("Bearer wrong", "the control token is wrong"), ("Basic x", "Bearer")],
    ids=["none", "wrong", "not bearer"],
)
def test_with_a_token_every_control_call_needs_it(guarded: SimulatorServer, authorization, message):
    headers = {"Authorization": authorization} if authorization else {}
    for method, path in (("GET", "health"), ("GET", "journal"), ("POST", "reset"), ("POST", "clock/advance")):
        answer = requests.request(method, f"{guarded.root_url}/_sim/{path}", headers=headers, json={}, timeout=5)
        assert answer.status_code == 401 and message in answer.json()["error"]
        assert answer.headers["WWW-Authenticate"].startswith("Bearer")


def test_simulator_control_sends_the_token(guarded: SimulatorServer):
    with SimulatorControl(guarded.root_url, token=TOKEN) as control:
        assert control.reset()["reset"] is True
        assert control.health()["status"] == "ok"
    with guarded.control() as own:  # SimulatorServer.control() knows its token
        assert own.clock()["offset"] == 0
    with SimulatorControl(guarded.root_url) as anonymous, pytest.raises(SimulatorControlError) as refused:
        anonymous.health()
    assert refused.value.http_status == 401 and refused.value.field == "authorization"
    assert TOKEN not in repr(SimulatorControl(guarded.root_url, token=TOKEN))


def test_with_a_token_any_host_name_may_be_used(guarded: SimulatorServer):
    headers = {"Authorization": f"Bearer {TOKEN}", "Host": "sim.lan:8080"}
    assert requests.get(f"{guarded.root_url}/_sim/health", headers=headers, timeout=5).status_code == 200


def test_the_gateway_api_needs_no_control_token(guarded: SimulatorServer):
    with GatewayClient(guarded.client_config()) as client:
        assert client.sale_form(form_fields()).redirect_url.startswith(guarded.base_url)


# --- the addresses handed out ---------------------------------------------------------------------------


def _form_answer(server: SimulatorServer, with_control, headers: dict[str, str]) -> dict[str, str]:
    fields = with_control("sale_form", form_fields())
    url = f"{server.base_url}/api/v2/sale-form/1001"
    answer = requests.post(url, data=fields, headers={"Accept": "application/vnd.pay+json", **headers}, timeout=10)
    assert answer.status_code == 200, answer.text
    body: dict[str, str] = answer.json()
    return body


def test_the_host_header_does_not_decide_the_addresses_handed_out(server: SimulatorServer, with_control):
    body = _form_answer(server, with_control, {"Host": "attacker.example"})
    assert body["redirect-url"].startswith(f"{server.base_url}/form/")
    spec = requests.get(f"{server.base_url}/openapi.json", headers={"Host": "attacker.example"}, timeout=5).json()
    assert spec["servers"] == [{"url": server.base_url}]


def test_the_public_url_decides_them(with_control):
    with SimulatorServer(default_settings(public_url="https://sim.example:8443")) as public:
        body = _form_answer(public, with_control, {"Host": "attacker.example"})
        assert body["redirect-url"].startswith("https://sim.example:8443/paynet/form/")
        # the public host may address the control API (a proxy in front of the simulator forwards to loopback)
        health = requests.get(f"{public.root_url}/_sim/health", headers={"Host": "sim.example:8443"}, timeout=5)
        assert health.status_code == 200


# --- clients from other machines (a socket on another interface is not made here: the guard is asked directly)


def _scope(client: str, **headers: str) -> dict[str, object]:
    raw = [(name.lower().encode(), value.encode()) for name, value in {"Host": "10.0.0.5:8080", **headers}.items()]
    return {"type": "http", "scheme": "http", "path": "/_sim/journal", "headers": raw, "client": (client, 50000)}


def test_a_client_from_another_machine_is_refused_without_a_token():
    refusal = ControlGuard(_no_app, token=None).refusal(_scope("203.0.113.9"))
    assert refusal is not None and refusal[:2] == (403, "client") and "--control-token" in refusal[2]


def test_a_client_from_another_machine_is_served_with_the_token():
    guard = ControlGuard(_no_app, token=Secret(TOKEN))
    assert guard.refusal(_scope("203.0.113.9", Authorization=f"Bearer {TOKEN}")) is None
    refusal = guard.refusal(_scope("203.0.113.9"))
    assert refusal is not None and refusal[:2] == (401, "authorization")


def test_binding_another_interface_is_warned_about():
    plain = exposed_warning("0.0.0.0", 8080, default_settings())
    assert "reachable from other machines" in plain and "--control-token opens it" in plain
    assert "--public-url" in plain
    guarded_text = exposed_warning("0.0.0.0", 8080, default_settings(control_token=Secret(TOKEN)))
    assert "needs the control token" in guarded_text and TOKEN not in guarded_text


async def _no_app(scope: object, receive: object, send: object) -> None:
    raise AssertionError("the guard was asked only")


def test_a_trailing_slash_is_no_redirect_built_from_the_host_header(server: SimulatorServer):
    """Issue 19, #9: Starlette's trailing-slash redirects wrote the client's Host header into Location."""
    for path in ("/paynet/openapi.json/", "/paynet/api/v2/sale/1001/", "/paynet/form/none/"):
        headers = {"Host": "attacker.example", "Accept": "application/vnd.pay+json"}  # (legacy: 200 for everything)
        answer = requests.post(server.root_url + path, headers=headers, allow_redirects=False, timeout=5)
        assert answer.status_code == 404 and "location" not in answer.headers, (path, answer.headers)
    answer = requests.post(server.base_url + "/api/v2/sale/1001/", headers={"Accept": "application/vnd.pay+json"},
                           timeout=5)  # fmt: skip
    assert "without the trailing slash: /paynet/api/v2/sale/1001" in answer.json()["error-message"]
