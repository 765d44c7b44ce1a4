"""The stateful gateway simulator: app factory, engine, store, pages, callbacks, control API.

The names below are imported when first asked for (PEP 562): ``import toolkit.simulator.settings``
or the fast start of ``SimulatorServer`` never loads the FastAPI app.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolkit.simulator.app import create_app
    from toolkit.simulator.server import SimulatorServer
    from toolkit.simulator.settings import Merchant, SimulatorSettings, default_settings, load_settings

_HOMES = {
    "create_app": "toolkit.simulator.app",
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
