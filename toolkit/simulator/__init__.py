"""The stateful gateway simulator: app factory, engine, store, pages, callbacks, control API."""

from toolkit.simulator.app import create_app
from toolkit.simulator.server import SimulatorServer
from toolkit.simulator.settings import Merchant, SimulatorSettings, default_settings, load_settings

__all__ = ["Merchant", "SimulatorServer", "SimulatorSettings", "create_app", "default_settings", "load_settings"]
