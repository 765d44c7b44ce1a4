"""The control API (``/_sim/``) fuzzed: any method, path, query, headers and body give a 4xx or a 2xx, never a
5xx (issue 19: ``make fuzz`` covers the control API too).

Hypothesis draws a call: a route of the API (its path parameters anything: an orderid, a serial, digits, text,
escapes), a method, a query of known and unknown names, and a body (JSON of any shape, a form, bytes, nothing).
Orders exist for some keys, so that the calls reach the work as well as the refusals.  A long-poll is asked
for at most a second.  ``GATEKIT_FUZZ_EXAMPLES`` (default 12, as the gateway fuzz) scales the run: ``make fuzz``
runs 560 per route family.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.client import GatewayClient
from toolkit.simulator import SimulatorServer
from toolkit.simulator.web import control
from toolkit.simulator.web.controlapi import PREFIX
from toolkit.testdata import preauth_fields, sale_fields

EXAMPLES = int(os.environ.get("GATEKIT_FUZZ_EXAMPLES", "12")) * 8
# The routes as the router has them (``control.ROUTES``, the one table), and paths under the prefix that are none
ROUTES = [(route.method, PREFIX + route.path.replace("{orderid}", "{key}")) for route in control.ROUTES]
ROUTES += [("GET", "/_sim/{key}"), ("POST", "/_sim"), ("GET", "/_sim/callbacks/{key}/resend/x")]
NAMES = ["orderid", "status", "error_code", "error_message", "amount", "seconds", "limit", "login", "attempts",
         "timeout", "target", "kind", "count", "x", "", "é", "a" * 80]  # fmt: skip
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**20), 10**20), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30), st.sampled_from(["approved", "declined", "1E+999", "NaN", "-1", "0.5", "sale", "delay",
                                           "8056020", "9" * 5000]),
)  # fmt: skip
JSONS = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3),
    max_leaves=8,
)
KEYS = st.one_of(st.sampled_from(["{order}", "{serial}", "0", "-1", "99999999999999999999", "abc", "%00", "%ff",
                                   "1.5", "8056020"]), st.text(max_size=12).filter(lambda k: "/" not in k))  # fmt: skip


@pytest.fixture(scope="module")
def running() -> Iterator[tuple[SimulatorServer, dict[str, str]]]:
    with SimulatorServer() as server, GatewayClient(server.client_config()) as client:
        order = client.preauth(preauth_fields())
        sale = client.sale(sale_fields())
        yield server, {"order": order.orderid, "serial": sale.serial_number}


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, str, dict[str, str], dict[str, str], bytes]:
    method, path = draw(st.sampled_from(ROUTES))
    method = draw(st.sampled_from([method, method, "GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]))
    key = draw(KEYS)
    path = path.replace("{key}", key)
    query = {draw(st.sampled_from(NAMES)): draw(st.text(max_size=12)) for _ in range(draw(st.integers(0, 3)))}
    if "attempts" in query or path.endswith("/callbacks"):
        query["timeout"] = draw(st.sampled_from(["0", "0.2", "1", "-1", "x"]))
    kind = draw(st.sampled_from(["json", "json", "form", "bytes", "none"]))
    headers = {"Content-Type": draw(st.sampled_from(["application/json", "application/x-www-form-urlencoded",
                                                     "text/plain", ""]))}  # fmt: skip
    if kind == "json":
        body = json.dumps(draw(JSONS)).encode()
    elif kind == "form":
        body = "&".join(f"{draw(st.sampled_from(NAMES))}={draw(st.text(max_size=8))}" for _ in range(3)).encode()
    elif kind == "bytes":
        body = draw(st.binary(max_size=200))
    else:
        body = b""
    return method, path, query, headers, body


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(call=calls())
def test_no_control_call_gets_a_server_error(running: tuple[SimulatorServer, dict[str, str]], call) -> None:
    server, ids = running
    method, path, query, headers, body = call
    path = path.replace("{order}", ids["order"]).replace("{serial}", ids["serial"])
    if path == "/_sim/reset":
        return  # (a reset forgets the orders the other calls use: it is fuzzed with the rest of its module)
    answer = requests.request(method, server.root_url + path, params=query, data=body, headers=headers, timeout=30)
    assert answer.status_code < 500 or (answer.status_code == 503 and "wait already" in answer.text), (
        method, path, query, body[:200], answer.status_code, answer.text[:300],
    )  # fmt: skip
    if answer.headers.get("content-type", "").startswith("application/json") and answer.status_code >= 400:
        assert isinstance(answer.json(), dict)
