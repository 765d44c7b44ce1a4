"""The stateful gateway simulator: three wings (``web``: the app, its routes, pages and control API; ``rules``: the
engine and what each operation does; ``storage``: SQLite and PostgreSQL) and its runtime here (the server, the
scheduler, callbacks' delivery, faults, the journal, settings and the clock).

The names below are imported when first asked for (PEP 562): ``import toolkit.simulator.settings`` loads no
server.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolkit.simulator.server import SimulatorServer
    from toolkit.simulator.settings import Merchant, SimulatorSettings, default_settings, load_settings
    from toolkit.simulator.web.app import create_app

_HOMES = {
    "create_app": "toolkit.simulator.web.app",
    "SimulatorServer": "toolkit.simulator.server",
    "Merchant": "toolkit.simulator.settings",
    "SimulatorSettings": "toolkit.simulator.settings",
    "default_settings": "toolkit.simulator.settings",
    "load_settings": "toolkit.simulator.settings",
}

__all__ = ["Merchant", "SimulatorServer", "SimulatorSettings", "create_app", "default_settings", "load_settings"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
