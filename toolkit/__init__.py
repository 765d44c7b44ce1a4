"""gatekit: an integration-testing toolkit for the card-processing gateway.

``import toolkit`` gives the client, the catalogue, signing, profiles and test data.  The names
are imported on first use (PEP 562): ``import toolkit`` alone (as ``gatekit --help`` does) costs
nothing, ``from toolkit import GatewayClient`` imports the client then.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from toolkit._ipython import register_by_name as _register_display
from toolkit._version import __version__

if TYPE_CHECKING:  # what mypy sees; at run time __getattr__ imports each name when first asked for
    from toolkit.client import GatewayClient, PreparedCall
    from toolkit.config import GatewayConfig, PollSchedule, load_config, simulator_config
    from toolkit.errors import (
        ApiError,
        AuthenticationError,
        GatewayError,
        InvalidRequestError,
        ProtocolError,
        ServerError,
        TransportError,
        ValidationError,
        WaitTimeout,
    )
    from toolkit.exchange import Exchange
    from toolkit.masking import Secret, mask_fields, mask_pan, mask_text
    from toolkit.models import (
        AsyncResponse,
        CardInfoResponse,
        CardRefResponse,
        EphemeralTicketResponse,
        FormResponse,
        HostedSaleResponse,
        HostedStatusResponse,
        RecurringPaymentResponse,
        Response,
        Status,
        StatusResponse,
    )
    from toolkit.operations import OPERATIONS, AuthScheme, Operation, get_operation
    from toolkit.simcontrol import SimulatorControl
    from toolkit.waiting import PollAttempt

# public name -> the module that defines it (as the TYPE_CHECKING imports above; tests/test_lazy_imports.py checks)
_LAZY = {
    "GatewayClient": "toolkit.client",
    "PreparedCall": "toolkit.client",
    **dict.fromkeys(("GatewayConfig", "PollSchedule", "load_config", "simulator_config"), "toolkit.config"),
    **dict.fromkeys(
        (
            "ApiError",
            "AuthenticationError",
            "GatewayError",
            "InvalidRequestError",
            "ProtocolError",
            "ServerError",
            "TransportError",
            "ValidationError",
            "WaitTimeout",
        ),
        "toolkit.errors",
    ),
    "Exchange": "toolkit.exchange",
    **dict.fromkeys(("Secret", "mask_fields", "mask_pan", "mask_text"), "toolkit.masking"),
    **dict.fromkeys(
        (
            "AsyncResponse",
            "CardInfoResponse",
            "CardRefResponse",
            "EphemeralTicketResponse",
            "FormResponse",
            "HostedSaleResponse",
            "HostedStatusResponse",
            "RecurringPaymentResponse",
            "Response",
            "Status",
            "StatusResponse",
        ),
        "toolkit.models",
    ),
    **dict.fromkeys(("OPERATIONS", "AuthScheme", "Operation", "get_operation"), "toolkit.operations"),
    "SimulatorControl": "toolkit.simcontrol",
    "PollAttempt": "toolkit.waiting",
}

__all__ = [
    "OPERATIONS",
    "ApiError",
    "AsyncResponse",
    "AuthScheme",
    "AuthenticationError",
    "CardInfoResponse",
    "CardRefResponse",
    "EphemeralTicketResponse",
    "Exchange",
    "FormResponse",
    "GatewayClient",
    "GatewayConfig",
    "GatewayError",
    "HostedSaleResponse",
    "HostedStatusResponse",
    "InvalidRequestError",
    "Operation",
    "PollAttempt",
    "PollSchedule",
    "PreparedCall",
    "ProtocolError",
    "RecurringPaymentResponse",
    "Response",
    "Secret",
    "ServerError",
    "SimulatorControl",
    "Status",
    "StatusResponse",
    "TransportError",
    "ValidationError",
    "WaitTimeout",
    "__version__",
    "get_operation",
    "load_config",
    "mask_fields",
    "mask_pan",
    "mask_text",
    "simulator_config",
]


def __getattr__(name: str) -> Any:
    """A public name, imported from its module the first time it is asked for (then kept as a global)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


_register_display()  # in a running IPython kernel: responses, exchanges, orders and pages show as masked HTML
