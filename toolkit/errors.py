"""The whole exception tree of the toolkit.

::

    GatewayError                   anything the toolkit raises about a gateway exchange
    +-- InvalidRequestError        refused before sending: names the field and the rule
    +-- TransportError             no HTTP answer: connection refused, reset, timeout
    +-- ProtocolError              an answer that is not a gateway response
    +-- ApiError                   the gateway answered and said no
    |   +-- ValidationError        400 / type=validation-error: a field, control or state rule
    |   +-- AuthenticationError    401 / 403: OAuth signature, timestamp, nonce, unknown login
    |   +-- ServerError            500 / type=error
    +-- WaitTimeout                no final status before the deadline

Messages name the operation, the field (when known) and the serial number.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from toolkit.masking import mask_text
from toolkit.operations import Operation


class GatewayError(Exception):
    """Base of every toolkit error about the gateway."""

    def __init__(
        self,
        message: str,
        *,
        operation: str | None = None,
        field: str | None = None,
        serial_number: str | None = None,
        http_status: int | None = None,
        response: Mapping[str, str] | None = None,
    ) -> None:
        parts = [f"{operation}: " if operation else "", message]
        if field and field not in message:
            parts.append(f" (field {field})")
        if serial_number:
            parts.append(f" [serial-number {serial_number}]")
        super().__init__(mask_text("".join(parts)))  # a bad value may be a card number typed into any field
        self.message = mask_text(message)
        self.operation = operation
        self.field = field
        self.serial_number = serial_number
        self.http_status = http_status
        self.response = dict(response or {})


class InvalidRequestError(GatewayError, ValueError):
    """The request breaks a rule of the catalogue; nothing was sent."""

    def __init__(self, operation: str, problems: Sequence[Any]) -> None:
        self.problems = list(problems)
        first = self.problems[0]
        text = "; ".join(str(problem) for problem in self.problems)
        super().__init__(f"request refused before sending: {text}", operation=operation, field=first.field)


class TransportError(GatewayError):
    """The request got no HTTP answer."""


class ProtocolError(GatewayError):
    """The answer is not a gateway response (undecodable, wrong type)."""


class ApiError(GatewayError):
    """The gateway answered with an error body."""

    @property
    def error_message(self) -> str:
        return self.response.get("error-message", "")

    @property
    def error_code(self) -> str:
        return self.response.get("error-code", "")


class ValidationError(ApiError):
    """400 or ``type=validation-error``."""


class AuthenticationError(ApiError):
    """401/403: the signature, its timestamp or nonce, or the login was refused."""


class ServerError(ApiError):
    """500 or ``type=error``."""


class WaitTimeout(GatewayError):
    """No final status before the deadline; ``attempts`` holds every poll made."""

    def __init__(self, message: str, *, attempts: Sequence[Any] = (), **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.attempts = list(attempts)


def _field_named(message: str, operation: Operation | None) -> str | None:
    """The first field of the operation (or ``control``) that the gateway's message names."""
    candidates = ["control", *(operation.fields if operation else ())]
    found = []
    for name in candidates:  # whole names only: "orderid" is not found inside "client_orderid"
        match = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", message)
        if match:
            found.append((match.start(), name))
    return min(found)[1] if found else None


def error_from_response(operation: Operation | None, http_status: int, body: Mapping[str, str]) -> ApiError | None:
    """The exception an answer stands for, or None when it is a success (one mapping for all)."""
    kind = body.get("type", "").lower()
    if http_status == 200 and kind not in ("validation-error", "error"):
        return None
    message = mask_text(body.get("error-message") or f"HTTP {http_status}, type={kind or 'missing'}")
    cls: type[ApiError]
    if http_status in (401, 403):
        cls = AuthenticationError
    elif http_status >= 500 or kind == "error":
        cls = ServerError
    else:
        cls = ValidationError
    return cls(
        message,
        operation=operation.name if operation else None,
        field=_field_named(message, operation),
        serial_number=body.get("serial-number") or None,
        http_status=http_status,
        response=body,
    )
