"""What holds a simulator's parts (``app.state``): the engine, the store, the settings, the clock...

``core.build_state`` fills a ``SimulatorState``; the app (``web.app``) serves it (``HasState``).  A module of its
own, so that the parts can name it without importing ``core``.
"""

from __future__ import annotations

from typing import Protocol

from starlette.datastructures import State


class HasState(Protocol):
    """An app with the simulator's ``state``."""

    @property
    def state(self) -> State: ...


class SimulatorState(State):
    """``app.state`` with plain attributes: Starlette's ``State`` finds each through ``__getattr__`` (a Python
    call), and every gateway request reads several (engine, settings, journal, fault hook...)."""

    def __setattr__(self, key: str, value: object) -> None:
        object.__setattr__(self, key, value)

    def __delattr__(self, key: str) -> None:
        object.__delattr__(self, key)
