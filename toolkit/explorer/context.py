"""What the explorer's steps need of the panel's model, as a protocol: the steps do not import the model.

``ExplorerModel`` has these (it is passed to ``StepRunner`` and ``PayerFlow``); a test can pass anything
else that does.
"""

from __future__ import annotations

from typing import Protocol

from toolkit.explorer.history import Action, Tracked
from toolkit.explorer.session import GatewaySession
from toolkit.flows import Order
from toolkit.models import StatusResponse


class StepContext(Protocol):
    """The session, the history the exporter reads, the payer's choices, and the orders the panel follows."""

    session: GatewaySession
    history: list[Action]
    password: str  # "right" or "wrong": what the payer types on the ACS page
    method_result: str  # how the merchant reports the 3-D Secure method step ("completed", "timed out"...)
    auto_method: bool  # merchant-run: the method step reported right after Send
    road: str  # who runs 3-D Secure on an order nobody uploaded to yet: "gateway-run" or "merchant-run"

    def track(self, order: Order, parent: Tracked | None = None, *, select: bool = True) -> Tracked: ...

    def settle(self, tracked: Tracked) -> StatusResponse | None: ...
