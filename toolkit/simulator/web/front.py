"""The simulator's front door: the first layer of its app's one middleware stack (``web.app``).

Every request takes one road: the middleware a user added (``gatekit simulate``'s request log), then ``Front``.
A gateway operation (``POST /paynet/api/.../<path_id>`` of the catalogue) is answered here: the body read whole
within ``max_body_bytes`` (a 413 beyond), the operation answered (``gateway.respond``), and a request the ``drop``
fault marked gets a closed connection instead (``faults.drop_connection``).  Anything else (the control API, the
pages, ``openapi.json``, a 404 or 405) goes on to the rest of the stack: the control API's guard, the body limit,
the router.  Either way the answer's status is left in the scope (``render.SENT_SCOPE_KEY``): the layer around it
(the request log) reads it there instead of watching what is sent (``reports_what_it_sent``).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolkit.simulator import faults
from toolkit.simulator.state import SimulatorState
from toolkit.simulator.web import gateway, limits, render

ENDPOINT_KEY = "gatekit.endpoint"  # scope key: the gateway operation a request was found to be


class Front:
    """ASGI middleware: the gateway's operations answered at once; the rest handed to ``app``."""

    reports_what_it_sent = True

    def __init__(self, app: ASGIApp, *, state: SimulatorState, owner: object) -> None:
        """``owner``: what ``request.app`` is for the handlers (the app: its ``state``)."""
        self.app = app
        self.state = state
        self.owner = owner
        self.table = gateway.dispatch_table(gateway.gateway_routes())

    def find(self, scope: Scope) -> gateway.Endpoint | None:
        """The operation of a gateway request (``POST .../<path_id>`` under a known path), else None."""
        if scope["type"] != "http" or scope["method"] != "POST" or scope.get("root_path"):
            return None
        prefix, _, path_id = scope["path"].rpartition("/")
        return self.table.get(prefix) if path_id else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = self.find(scope)
        if endpoint is None:
            if scope["type"] != "http":
                await self.app(scope, receive, send)
                return

            async def sending(message: Message) -> None:
                if message["type"] == "http.response.start":
                    scope[render.SENT_SCOPE_KEY] = message["status"]
                await send(message)

            await self.app(scope, receive, sending)
            return
        scope["app"] = self.owner
        scope["endpoint"] = endpoint.handler
        scope["path_params"] = {"path_id": scope["path"].rpartition("/")[2]}
        raw = await limits.read_body(scope, receive, send, self.state.settings.max_body_bytes)
        if raw is None:
            return  # answered 413, or the client went away
        response = await gateway.respond(Request(scope, receive), endpoint.op, endpoint.by_group, raw)
        if faults.marked_for_drop(scope):
            await faults.drop_connection(scope, send, self.state.transport_finder)
            return
        scope[render.SENT_SCOPE_KEY] = response.status_code
        await response(scope, receive, send)
