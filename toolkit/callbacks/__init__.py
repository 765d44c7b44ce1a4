"""A local receiver for server callbacks and payer redirects; verifies control (behaviour sections 4, 5).

``CallbackReceiver`` serves on loopback, records every arrival as a masked ``Received``, answers
as a test tells it to (``fail_next``, ``delay_next``), and wakes waiters the moment something comes.
"""

from toolkit.callbacks.inbox import CallbackTimeout, OrderWaker
from toolkit.callbacks.receiver import CallbackReceiver, forwarded_callback_url
from toolkit.callbacks.records import CALLBACK, REDIRECT, Received, mask_params

__all__ = [
    "CALLBACK",
    "REDIRECT",
    "CallbackReceiver",
    "CallbackTimeout",
    "OrderWaker",
    "Received",
    "forwarded_callback_url",
    "mask_params",
]
