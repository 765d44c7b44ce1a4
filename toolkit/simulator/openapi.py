"""An OpenAPI 3.1 document of the gateway operations, generated from the catalogue."""

from __future__ import annotations

from typing import Any

from toolkit.fields import FIELDS, Kind
from toolkit.operations import AuthScheme, Operation, iter_operations

_SCHEMA: dict[Kind, dict[str, Any]] = {
    Kind.AMOUNT: {"type": "string", "pattern": r"^\d+(\.\d+)?$"},
    Kind.CURRENCY: {"type": "string", "pattern": "^[A-Z]{3}$"},
    Kind.EMAIL: {"type": "string", "format": "email"},
    Kind.URL: {"type": "string", "format": "uri"},
    Kind.INT: {"type": "string", "pattern": r"^\d+$"},
    Kind.DIGITS: {"type": "string", "pattern": r"^\d+$"},
    Kind.BOOL: {"type": "string", "enum": ["true", "false"]},
    Kind.MONTH: {"type": "string", "pattern": "^(0[1-9]|1[0-2])$"},
    Kind.YEAR: {"type": "string", "pattern": r"^\d{4}$"},
    Kind.CVV: {"type": "string", "pattern": r"^\d{3,4}$"},
    Kind.CARD_NUMBER: {"type": "string", "pattern": r"^\d{12,19}$"},
    Kind.DATE: {"type": "string", "format": "date"},
}
_RESPONSE = {"type": "object", "additionalProperties": {"type": "string"}}


def _request_schema(op: Operation) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for name in op.fields:
        spec = FIELDS[name]
        schema = dict(_SCHEMA.get(spec.kind, {"type": "string"}))
        if spec.choices:
            schema["enum"] = list(spec.choices)
        schema.update(description=spec.doc, maxLength=spec.max_length)
        properties[name] = schema
    if op.control is not None:
        properties["control"] = {"type": "string", "description": op.control.text, "pattern": "^[0-9a-f]{40}$"}
    required = [*op.required, *(["control"] if op.control else [])]
    return {"type": "object", "properties": properties, "required": required}


def _operation(op: Operation, group: bool) -> dict[str, Any]:
    security: list[dict[str, list[str]]] = [] if op.auth is AuthScheme.CONTROL else [{"oauth": []}]
    description = op.summary + "".join(f"\n\nAssumed: {note}" for note in op.assumed)
    param = "endpointGroupId" if group else "endpointId"
    return {
        "operationId": op.name + ("_group" if group else ""),
        "summary": op.summary,
        "description": description,
        "parameters": [
            {"name": param, "in": "path", "required": True, "schema": {"type": "integer", "format": "int64"}},
            {
                "name": "Accept",
                "in": "header",
                "required": True,
                "schema": {"type": "string", "enum": ["application/vnd.pay+json"]},
            },
        ],
        "requestBody": {
            "required": True,
            "content": {"application/x-www-form-urlencoded": {"schema": _request_schema(op)}},
        },
        "responses": {
            str(code): {"description": text, "content": {"application/vnd.pay+json": {"schema": _RESPONSE}}}
            for code, text in (
                (200, op.response_type or op.response.value),
                (400, "ValidationErrorResponse"),
                (401, "OAuth signature refused"),
                (500, "ServerErrorResponse"),
            )
        },
        "security": security,
        "x-operation-code": op.code,
        "x-auth": op.auth.value,
    }


def openapi_document(server_url: str = "/paynet") -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for op in iter_operations():
        paths[op.path] = {"post": _operation(op, False)}
        if op.group:
            paths[op.group_path] = {"post": _operation(op, True)}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Card processing gateway (gatekit simulator)", "version": "dev"},
        "servers": [{"url": server_url}],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "oauth": {
                    "type": "http",
                    "scheme": "OAuth",
                    "description": "OAuth 1.0a HMAC-SHA1 or RSA-SHA256 (spec 5.2)",
                }
            }
        },
    }
