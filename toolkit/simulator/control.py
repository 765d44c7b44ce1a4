"""(being written)"""

from __future__ import annotations

from fastapi import FastAPI

from toolkit.simulator.engine import Engine


def install(app: FastAPI, engine: Engine) -> None:
    """Add this part's routes and hooks to the app."""
