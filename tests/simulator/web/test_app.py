"""The simulator's one app (``web.app``): one middleware stack, built once as the server starts, and one road for
every request (issue 35); an app that builds no pydantic model and leaves the process's warning filters alone
(issue 34, #2).  No test here measures a time: ``benchmarks/bench_startup_simulate.py`` does.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
import warnings
from typing import Any

import pytest
import requests

from toolkit.client import GatewayClient
from toolkit.simulator import SimulatorServer, core
from toolkit.simulator.settings import default_settings
from toolkit.simulator.web import app as app_module
from toolkit.simulator.web.render import SENT_SCOPE_KEY
from toolkit.testdata import sale_fields
from toolkit.wire import FORM_TYPE, MEDIA_TYPE, decode_response


class Seen:
    """ASGI middleware that keeps each request's path, and the status the front door left in the scope."""

    def __init__(self, app: Any, lines: list[tuple[str, int]]) -> None:
        self.app = app
        self.lines = lines

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)
        if scope["type"] == "http":
            self.lines.append((scope["path"], scope.get(SENT_SCOPE_KEY, 0)))


def test_every_request_takes_one_road_through_the_added_middleware():
    """The gateway, a page, the control API, openapi.json and a 404: each once through what was added, with the
    status it was answered with in the scope (what ``gatekit simulate``'s request log reads)."""
    lines: list[tuple[str, int]] = []
    server = SimulatorServer()
    server.add_middleware(Seen, lines=lines)
    with server, GatewayClient(server.client_config()) as client:
        client.sale(sale_fields())
        requests.get(f"{server.base_url}/form/no-such-token", timeout=10)
        requests.get(f"{server.root_url}/_sim/merchants", timeout=10)
        requests.get(f"{server.base_url}/openapi.json", timeout=10)
        requests.get(f"{server.root_url}/nothing-here", timeout=10)
    assert lines == [
        ("/paynet/api/v2/sale/1001", 200),
        ("/paynet/form/no-such-token", 404),
        ("/_sim/merchants", 200),
        ("/paynet/openapi.json", 200),
        ("/nothing-here", 404),
    ]


def test_the_stack_is_built_as_the_server_starts_and_closed_then():
    server = SimulatorServer()
    server.app.add_middleware(Seen, lines=[])  # (the app's own add_middleware: the same stack)
    with server:
        with pytest.raises(RuntimeError, match="after an application has started"):
            server.add_middleware(Seen, lines=[])
        assert requests.get(f"{server.root_url}/_sim/health", timeout=10).json()["status"] == "ok"


def test_a_stack_that_cannot_be_built_fails_the_start_not_a_later_request():
    """Issue 34, #2: a failed build used to be kept, and every page and control call answered 500 until the
    process ended; now it is the start's failure, where the caller sees it."""

    def broken(app: Any) -> Any:
        raise RuntimeError("this middleware cannot be made")

    server = SimulatorServer()
    server.add_middleware(broken)
    with pytest.raises(RuntimeError, match="this middleware cannot be made"):
        server.start()
    server.stop()


def test_the_gateway_keeps_its_rules_in_the_one_road():
    """The control API's guard and the body limit, and the gateway's own format for what it refuses."""
    limit = 4096
    settings = dataclasses.replace(default_settings(), max_body_bytes=limit)
    with SimulatorServer(settings) as server:
        evil = requests.get(f"{server.root_url}/_sim/health", headers={"Host": "evil.example"}, timeout=10)
        assert (evil.status_code, evil.json()["field"]) == (403, "host")
        cross = requests.get(f"{server.root_url}/_sim/health", headers={"Sec-Fetch-Site": "cross-site"}, timeout=10)
        assert cross.status_code == 403
        big = requests.post(f"{server.base_url}/api/v2/sale/1001", data=b"a=" + b"1" * limit,
                            headers={"Content-Type": FORM_TYPE, "Accept": MEDIA_TYPE}, timeout=10)  # fmt: skip
        assert big.status_code == 413 and decode_response(big.content)["error-code"] == "6"
        missing = requests.post(f"{server.base_url}/api/v2/no-such-operation/1001", data=b"a=1",
                                headers={"Content-Type": FORM_TYPE, "Accept": MEDIA_TYPE}, timeout=10)  # fmt: skip
        assert (missing.status_code, decode_response(missing.content)["type"]) == (404, "validation-error")
        get = requests.get(f"{server.base_url}/api/v2/sale/1001", headers={"Accept": MEDIA_TYPE}, timeout=10)
        assert get.status_code == 405 and "answer POST only" in decode_response(get.content)["error-message"]


# Run in a fresh interpreter: everything a simulator loads, serving a sale, a page and a control call.
LOADED = """
import json, sys, warnings
warnings.simplefilter("error")
entered = []
original = warnings.catch_warnings.__enter__
def entering(self):
    entered.append(1)
    return original(self)
warnings.catch_warnings.__enter__ = entering
import requests
from toolkit.client import GatewayClient
from toolkit.simulator import SimulatorServer, core
from toolkit.testdata import sale_fields
with SimulatorServer() as server, GatewayClient(server.client_config()) as client:
    client.sale(sale_fields())
    requests.get(server.base_url + "/form/no-such-token", timeout=10)
    requests.get(server.root_url + "/_sim/health", timeout=10)
loaded = sorted({name.split(".")[0] for name in sys.modules} & {"fastapi", "pydantic"})
print(json.dumps({"loaded": loaded, "catch_warnings": len(entered)}))
"""


def test_the_simulator_loads_no_pydantic_and_leaves_the_warning_filters_alone():
    """``warnings.catch_warnings`` changes the whole process's filters and is not thread-safe: FastAPI entered it
    for every typed route parameter while a merchant's tests (pytest enters it for each test) ran in another
    thread; a warning the build expected to be ignored then raised (3 runs in 14 under ``filterwarnings = error``).
    The app is plain starlette now: no pydantic model, no filter touched, from import to answers."""
    done = subprocess.run([sys.executable, "-c", LOADED], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(done.stdout.splitlines()[-1]) == {"loaded": [], "catch_warnings": 0}


def test_apps_build_while_another_thread_changes_the_warning_filters():
    """The race itself: 40 apps made and built while a thread enters and leaves ``catch_warnings`` with every
    warning an error (with FastAPI's typed route parameters, about one build in 30 failed)."""
    state = core.build_state()
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            with warnings.catch_warnings():
                warnings.simplefilter("error")

    other = threading.Thread(target=churn)
    other.start()
    try:
        for _ in range(40):
            app_module.build(app_module.create_app(state=state))
    finally:
        stop.set()
        other.join(timeout=30)
