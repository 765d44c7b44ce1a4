"""An OpenAPI 3.1 document of the gateway operations, generated from the catalogue."""

from __future__ import annotations

from typing import Any

from toolkit.fields import FIELDS, Kind
from toolkit.hosted_answers import NEEDED
from toolkit.money import CURRENCY_EXPONENTS, WIRE_AMOUNT
from toolkit.operations import AnswerStyle, AuthScheme, Operation, iter_operations
from toolkit.simulator.web.limits import MAX_FIELDS, MAX_NAME_LENGTH, MAX_VALUE_LENGTH
from toolkit.wire import LEGACY_TYPE, MEDIA_TYPE, RESPONSE_TYPES

# As strict as the simulator's checks (``toolkit.fields.format_problem``, ``toolkit.money``), so that a
# fuzzer learns them: what these schemas allow, the checks let through (Luhn and per-currency decimals aside).
_SCHEMA: dict[Kind, dict[str, Any]] = {
    Kind.AMOUNT: {"type": "string", "pattern": WIRE_AMOUNT.pattern.join("^$")},
    Kind.CURRENCY: {"type": "string", "enum": sorted(CURRENCY_EXPONENTS)},
    Kind.EMAIL: {"type": "string", "pattern": r"^[^@\s]+@[^@\s]+\.[^@\s]+$"},
    Kind.URL: {"type": "string", "pattern": r"^https?://[^\s/?#]+[^\s]*$"},
    Kind.INT: {"type": "string", "pattern": r"^[0-9]{1,9}$"},
    Kind.DIGITS: {"type": "string", "pattern": r"^[0-9]+$"},
    Kind.ID: {"type": "string", "minLength": 1},
    Kind.BOOL: {"type": "string", "enum": ["true", "false"]},
    Kind.MONTH: {"type": "string", "pattern": "^(0[1-9]|1[0-2])$"},
    Kind.YEAR: {"type": "string", "pattern": r"^[0-9]{4}$"},
    Kind.CVV: {"type": "string", "pattern": r"^[0-9]{3,4}$"},
    Kind.CARD_NUMBER: {"type": "string", "pattern": r"^[0-9]{12,19}$", "description": "Luhn-valid"},
    Kind.DATE: {"type": "string", "pattern": r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"},
    Kind.IP: {"type": "string", "pattern": r"^([0-9]{1,3}\.){3}[0-9]{1,3}$|^[0-9A-Fa-f:.]+$"},
}
_RESPONSE = {
    "type": "object",
    "required": ["type", "serial-number"],
    "properties": {"type": {"type": "string", "enum": sorted(RESPONSE_TYPES)}},
    "additionalProperties": {"type": "string"},
}
# Without ``Accept: application/vnd.pay+json`` the gateway answers its legacy key=value form, HTTP 200.
_LEGACY = {"type": "string", "description": "type=...\\n&serial-number=...\\n (url-encoded pairs)"}
_ANSWERS = (
    (200, None),
    (400, "ValidationErrorResponse: a field, control, state or endpoint rule (error-message says which)"),
    (401, "OAuth signature, timestamp or nonce refused (oauth_* in the body too)"),
    (413, "the request body is larger than the simulator's max_body_bytes (64 KB by default)"),
    (500, "ServerErrorResponse: an injected fault"),
)
_PATH_ID = {"type": "integer", "format": "int64", "minimum": 0, "maximum": 2**63 - 1}


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
        properties["control"] = {"type": "string", "description": op.control.text, "pattern": "^[0-9a-fA-F]{40}$"}
    required = [*op.required, *(["control"] if op.control else [])]
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "maxProperties": MAX_FIELDS,  # other fields are accepted with a conformance warning in the journal
        "additionalProperties": {"type": "string", "maxLength": MAX_VALUE_LENGTH},
        "propertyNames": {"maxLength": MAX_NAME_LENGTH, "not": {"pattern": "^oauth_"}},
    }


def _operation(op: Operation, group: bool) -> dict[str, Any]:
    security: list[dict[str, list[str]]] = [] if op.auth is AuthScheme.CONTROL else [{"oauth": []}]
    description = op.summary + "".join(f"\n\nAssumed: {note}" for note in op.assumed)
    param = "endpointGroupId" if group else "endpointId"
    return {
        "operationId": op.name + ("_group" if group else ""),
        "summary": op.summary,
        "description": description + f"\n\nAsk for JSON with `Accept: {MEDIA_TYPE}`; without it, the legacy form.",
        "parameters": [
            {"name": param, "in": "path", "required": True, "schema": _PATH_ID},
        ],
        "requestBody": {
            "required": True,
            "content": {"application/x-www-form-urlencoded": {"schema": _request_schema(op)}},
        },
        "responses": {
            str(code): {
                "description": text or op.response_type or op.response.value,
                "content": _content(op, code),
            }
            for code, text in _ANSWERS
        },
        "security": security,
        "x-operation-code": op.code,
        "x-auth": op.auth.value,
    }


def _content(op: Operation, code: int) -> dict[str, Any]:
    """An answer's media types and schemas: the family's (behaviour section 2), or a Hosted Fields call's
    (hosted-fields.md section 3: JSON with its types, ``Operation.numbers`` integers; a refused signature in
    ``text/plain``)."""
    if op.answers is not AnswerStyle.HOSTED_FIELDS or code == 413:  # (a body too big: refused before the operation)
        return {MEDIA_TYPE: {"schema": _RESPONSE}, LEGACY_TYPE: {"schema": _LEGACY}}
    if code == 401:
        return {"text/plain": {"schema": {"type": "string", "pattern": "^invalid signature: "}}}
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: {"type": "integer"} for name in op.numbers},
        "additionalProperties": {"type": "string"},
    }
    schema["required"] = list(NEEDED.get(op.response, ())) if code == 200 else ["error-message"]
    return {MEDIA_TYPE: {"schema": schema}, LEGACY_TYPE: {"schema": _LEGACY}}


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
