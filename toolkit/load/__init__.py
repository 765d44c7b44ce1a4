"""Load tests of a checkout with Locust: the certification flows as Locust users (``gatekit load``).

``from toolkit.load import GatewayUser`` imports Locust (and its gevent patching), as ``toolkit.load.users`` and
``toolkit.load.ending`` (the end of a run: the users stop, then the reports) do: do it in a locustfile. The plan
and its cap (``toolkit.load.plan``), the pacing (``pacing``), the report (``report``) and the Locust process of
``gatekit load`` (``process``) import no Locust.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "GatewayUser":
        from toolkit.load.users import GatewayUser

        return GatewayUser
    raise AttributeError(name)


__all__ = ["GatewayUser"]
