"""The control API described, for clients in any language: the index (``GET /_sim/``) and an OpenAPI 3.1 document
(``GET /_sim/openapi.json``), both written from the table of routes the router is built from (``control.ROUTES``):
a route, an argument or a refusal is said once, there.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from toolkit._version import __version__
from toolkit.simulator.web.controlargs import Arg, Rule

PREFIX = "/_sim"
OPENAPI_PATH = "/openapi.json"
REFUSALS = {
    400: "bad arguments: every problem named, with what is valid",
    401: "the simulator has a control token and the call did not carry it (Authorization: Bearer)",
    403: "not a loopback client without a token, a Host that is not this simulator, or a cross-site request",
    404: "no such order",
    409: "the order's state refuses it",
    503: "the store does not answer, or too many calls wait already; try again",
}
COMMON = (400, 401, 403)  # what any route may answer besides its own


@dataclass(frozen=True)
class ControlRoute:
    """A route of the control API: the router, the index and the OpenAPI document read it (nothing else says it)."""

    method: str
    path: str  # under PREFIX: "/transactions/{orderid}/status"
    view: Callable[..., Awaitable[dict[str, Any]]]  # (request, engine, values) -> the JSON answer
    summary: str
    answer: str  # what a success answers
    args: tuple[Arg, ...] = ()
    status: int = 200
    refusals: tuple[int, ...] = ()  # beyond COMMON: 404, 409, 503
    rule: Rule | None = None  # problems of the arguments together

    @property
    def name(self) -> str:
        return self.view.__name__

    @property
    def label(self) -> str:
        return f"{self.method} {PREFIX}{self.path}"

    def listing(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": PREFIX + self.path,
            "summary": self.summary,
            "answer": f"{self.status}: {self.answer}",
            "arguments": [arg.listing() for arg in self.args],
            "refusals": {str(code): REFUSALS[code] for code in (*COMMON, *self.refusals)},
        }


def index(routes: Sequence[ControlRoute]) -> dict[str, Any]:
    """``GET /_sim/``: every route with its arguments and what each takes."""
    return {
        "name": "gatekit simulator control API",
        "version": __version__,
        "openapi": PREFIX + OPENAPI_PATH,
        "refused": '4xx {"error": "<field>: <why>; ...", "field": "<the first>", "problems": [{"field", "error", '
        '"valid"}, ...]}: every problem of a call in one answer',
        "routes": [route.listing() for route in routes],
    }


def openapi_document(routes: Sequence[ControlRoute], server_url: str) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the control API at ``server_url`` (the simulator's root)."""
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        paths.setdefault(PREFIX + route.path, {})[route.method.lower()] = _operation(route)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "gatekit simulator control API",
            "version": __version__,
            "description": "Steer a running gatekit simulator: reset, clock, settlement, forced statuses, "
            "chargebacks, callbacks, fault plans. Not part of the gateway.",
        },
        "servers": [{"url": server_url}],
        "security": [{}, {"bearer": []}],  # loopback clients need no token, unless the simulator has one
        "paths": paths,
        "components": {"schemas": _SCHEMAS, "securitySchemes": {"bearer": _BEARER}},
    }


def _operation(route: ControlRoute) -> dict[str, Any]:
    described: dict[str, Any] = {"operationId": route.name, "summary": route.summary}
    parameters = [_parameter(arg) for arg in route.args if arg.where != "body"]
    if parameters:
        described["parameters"] = parameters
    body = [arg for arg in route.args if arg.where == "body"]
    if body:
        schema = {
            "type": "object",
            "properties": {arg.name: arg.schema() for arg in body},
            "additionalProperties": False,
        }
        required = [arg.name for arg in body if arg.required]
        schema.update({"required": required} if required else {})
        described["requestBody"] = {"required": bool(required), "content": {"application/json": {"schema": schema}}}
    described["responses"] = {
        str(route.status): {"description": route.answer, "content": {"application/json": {"schema": _ANSWER}}},
        **{str(code): _refusal(code) for code in (*COMMON, *route.refusals)},
    }
    return described


def _parameter(arg: Arg) -> dict[str, Any]:
    return {"name": arg.name, "in": arg.where, "required": arg.required, "schema": arg.schema(), "description": arg.doc}


def _refusal(code: int) -> dict[str, Any]:
    return {
        "description": REFUSALS[code],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Refusal"}}},
    }


_ANSWER = {"type": "object"}
_BEARER = {
    "type": "http",
    "scheme": "bearer",
    "description": "the simulator's --control-token (GATEKIT_CONTROL_TOKEN); without one, loopback clients only",
}
_SCHEMAS: dict[str, Any] = {
    "Refusal": {
        "type": "object",
        "required": ["error", "field"],
        "properties": {
            "error": {"type": "string", "description": "every problem: '<field>: <why>', joined by '; '"},
            "field": {"type": "string", "description": "the field of the first problem"},
            "problems": {"type": "array", "items": {"$ref": "#/components/schemas/Problem"}},
            "route": {"type": "string", "description": "the route refused: 'POST /_sim/faults'"},
            "see": {"type": "string", "description": "where the routes are listed"},
        },
    },
    "Problem": {
        "type": "object",
        "required": ["field", "error"],
        "properties": {
            "field": {"type": "string"},
            "error": {"type": "string"},
            "valid": {"type": "string", "description": "what the field takes"},
        },
    },
}
