"""Hosted Fields answers read with their JSON types (hosted-fields.md section 3), for ``GatewayClient``.

The merchant examples decode an answer as JSON whatever its HTTP status, and rely on its types: ``paynet-order-id``
is a number in the v4 sale's answer and a string in every other one, ``error-code`` a number.  ``read`` checks the
types the catalogue lists (``Operation.numbers``: integers; every other value a string), keeps a long integer's
digits exactly (``wire.loads_json``), and turns the answer into its typed response (``models.HOSTED_FIELDS_MODELS``)
or the exception it stands for (``errors.error_from_response``).  A refused signature is a 401 ``text/plain`` reason
(section 3.1): an ``AuthenticationError`` that quotes it; any other body that is not a JSON object is a
``ProtocolError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from toolkit.errors import AuthenticationError, ProtocolError, error_from_response
from toolkit.masking import mask_text
from toolkit.models import HOSTED_FIELDS_MODELS, Response
from toolkit.operations import Operation, ResponseKind
from toolkit.wire import DecodeError, loads_json

# What a successful answer must carry, by response kind (section 3): the ticket, the order id, the status.
NEEDED = {
    ResponseKind.TICKET: ("ephemeralTicket",),
    ResponseKind.ASYNC: ("paynet-order-id",),
    ResponseKind.STATUS: ("status", "paynet-order-id"),
}
MAX_REASON = 300  # characters of a text/plain refusal quoted in the exception


def read(op: Operation, http_status: int, content: bytes) -> Response:
    """The typed response of a Hosted Fields answer, or the ``GatewayError`` it stands for."""
    try:
        data = loads_json(content)
    except DecodeError as exc:
        data, problem = None, str(exc)
    else:
        problem = "" if isinstance(data, dict) else "the JSON body is not an object"
    if data is None or problem:
        text = mask_text(content.decode("utf-8", "replace").strip())[:MAX_REASON]
        if http_status in (401, 403):  # the signature refused: a reason in text/plain (section 3.1)
            reason = text or "no reason given"
            raise AuthenticationError(f"HTTP {http_status}: {reason}", operation=op.name, http_status=http_status,
                                      response={"error-message": reason})  # fmt: skip
        raise ProtocolError(f"HTTP {http_status}: {problem}: {text[:80]!r}", operation=op.name, http_status=http_status)
    assert isinstance(data, dict)
    wrong = type_problems(op, data)
    if wrong:
        raise ProtocolError(f"HTTP {http_status}: " + "; ".join(wrong), operation=op.name, http_status=http_status)
    body = {name: str(value).strip() for name, value in data.items()}  # (trimmed; an integer's digits, exactly)
    error = error_from_response(op, http_status, body)
    if error is not None:
        raise error
    missing = [name for name in NEEDED.get(op.response, ()) if not body.get(name)]
    if missing:
        raise ProtocolError(f"HTTP {http_status}: the answer lacks {', '.join(missing)}", operation=op.name)
    return HOSTED_FIELDS_MODELS[op.response].from_mapping(body)


def type_problems(op: Operation, data: Mapping[str, object]) -> list[str]:
    """Each value whose JSON type is not the one section 3 gives it: a number for the names in ``op.numbers``
    (an integer: ``paynet-order-id``, ``error-code``), a string for every other name.  Values are never quoted."""
    problems = []
    for name, value in data.items():
        number = name in op.numbers
        if number and type(value) is not int:
            problems.append(f"{name} is a JSON {_json_type(value)}, not a number (hosted-fields.md section 3)")
        elif not number and type(value) is not str:
            problems.append(f"{name} is a JSON {_json_type(value)}, not a string (hosted-fields.md section 3)")
    return problems


def _json_type(value: object) -> str:
    """The JSON type of a decoded value (``wire.loads_json`` reads a fraction as a ``Decimal``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if type(value) is int:
        return "number"
    if isinstance(value, (Decimal, float)):
        return "non-integer number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"
