"""Load tests of a checkout with Locust: the certification flows as Locust users (``gatekit load``).

``from toolkit.load import GatewayUser`` imports Locust (and its gevent patching): do it in a locustfile.
The plan (``toolkit.load.plan``) and the report (``toolkit.load.report``) import no Locust.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "GatewayUser":
        from toolkit.load.users import GatewayUser

        return GatewayUser
    raise AttributeError(name)


__all__ = ["GatewayUser"]
