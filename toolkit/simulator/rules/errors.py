"""Rejections of the simulator, rendered in the gateway's own format (behaviour section 2).

Error codes: 1 a field rule, 2 a control mismatch, 3 a state precondition, 4 an OAuth check,
5 an unknown endpoint or merchant, 6 a faulty request body, 500 an internal or injected fault.
"""

from __future__ import annotations

from toolkit.masking import mask_text


class SimError(Exception):
    """A request the simulator refuses: HTTP status, ``type`` and an ``error-message`` that says why."""

    def __init__(
        self, message: str, *, http_status: int = 400, code: str = "1", kind: str = "validation-error"
    ) -> None:
        message = mask_text(message)  # a refused value may be a card number typed into any field
        super().__init__(message)
        self.message = message
        self.http_status = http_status
        self.code = code
        self.kind = kind


def field_error(message: str) -> SimError:
    return SimError(message, code="1")


def state_error(message: str) -> SimError:
    return SimError(message, code="3")


def control_error(message: str) -> SimError:
    return SimError(message, code="2")


def oauth_error(message: str) -> SimError:
    return SimError(message, http_status=401, code="4")


def endpoint_error(message: str) -> SimError:
    return SimError(message, code="5")


def server_error(message: str) -> SimError:
    return SimError(message, http_status=500, code="500", kind="error")


def unavailable(message: str) -> SimError:
    """The simulator cannot answer for now (its shared database does not answer): try again."""
    return SimError(f"{message}; try again", http_status=503, code="503", kind="error")
