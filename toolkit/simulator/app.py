"""The app factory: ``create_app(settings, store)`` puts the routes, pages and control API on a simulator's
state (``core.build_state``: engine, store, scheduler...)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.telemetry import TelemetryConfig
from starlette.datastructures import State
from starlette.responses import JSONResponse

from toolkit.simulator import control, core, pages, routes
from toolkit.simulator.clock import SimClock
from toolkit.simulator.engine import Engine
from toolkit.simulator.guard import ControlGuard
from toolkit.simulator.limits import BodyLimit
from toolkit.simulator.openapi import openapi_document
from toolkit.simulator.settings import SimulatorSettings
from toolkit.simulator.store import Store

__all__ = ["EXTENSIONS", "NO_TELEMETRY", "create_app"]

# Held while an app is built: two simulators of one process (tests, notebooks) starting together would build
# their FastAPI apps in two threads, and pydantic then fails now and then ("AttributeError: __pydantic_core_schema__").
_BUILDING = threading.Lock()

# Parts that add routes or hooks of their own: hosted and 3-D Secure pages, control API (callbacks: ``core``).
EXTENSIONS: tuple[Callable[[FastAPI, Engine], None], ...] = (pages.install, control.install)

NO_TELEMETRY: TelemetryConfig = {"tracing": False, "metrics": False, "logs": False}


def create_app(
    settings: SimulatorSettings | None = None,
    store: Store | None = None,
    *,
    clock: SimClock | None = None,
    state: State | None = None,
) -> FastAPI:
    """A simulator app; state lives on ``app.state`` (engine, store, settings, clock, scheduler, journal,
    thread pools, delivery, destinations, fault hook and transport finder: ``core.build_state``).

    ``state``: one already built (``SimulatorServer`` answers the gateway with it before this app is
    ready), instead of ``settings``, ``store`` and ``clock``.  One app is built at a time in a process.
    """
    if state is not None and (settings is not None or store is not None or clock is not None):
        raise ValueError("create_app: give a built state, or settings, store and clock to build one; not both")
    state = state if state is not None else core.build_state(settings, store, clock=clock)
    with _BUILDING:
        return _app_on(state)


def _app_on(state: State) -> FastAPI:

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        core.start(state)
        try:
            yield
        finally:
            core.stop(state)

    app = FastAPI(
        title="gatekit simulator",
        lifespan=lifespan,
        # no trailing-slash redirects: Starlette writes them with the Host header, which the client chose
        # (a path with one more slash is a 404 that says so: ``routes._unknown_operation``)
        redirect_slashes=False,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        telemetry=NO_TELEMETRY,  # a test double: no OpenTelemetry look-ups on every request
    )
    app.state = state
    routes.install(app)

    @app.get("/paynet/openapi.json", include_in_schema=False)
    async def gateway_openapi(request: Request) -> JSONResponse:
        return JSONResponse(openapi_document(routes.public_base(request)))

    for extension in EXTENSIONS:
        extension(app, state.engine)
    # Outermost last: the control API's guard, then the body limit, before anything reads a request.
    app.add_middleware(BodyLimit, limit=state.settings.max_body_bytes)
    app.add_middleware(ControlGuard, token=state.settings.control_token, public_url=state.settings.public_url)
    return app
