"""gatekit: an integration-testing toolkit for the card-processing gateway.

``import toolkit`` gives the client, the catalogue, signing, profiles and test data.
"""

from toolkit._version import __version__
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
    FormResponse,
    RecurringPaymentResponse,
    Response,
    Status,
    StatusResponse,
)
from toolkit.operations import OPERATIONS, AuthScheme, Operation, get_operation
from toolkit.simcontrol import SimulatorControl
from toolkit.waiting import PollAttempt

__all__ = [
    "OPERATIONS",
    "ApiError",
    "AsyncResponse",
    "AuthScheme",
    "AuthenticationError",
    "CardInfoResponse",
    "CardRefResponse",
    "Exchange",
    "FormResponse",
    "GatewayClient",
    "GatewayConfig",
    "GatewayError",
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
