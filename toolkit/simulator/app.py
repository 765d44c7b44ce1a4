"""The app factory: ``create_app(settings, store)`` wires the engine, the scheduler and the routes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.telemetry import TelemetryConfig
from starlette.responses import JSONResponse

from toolkit.simulator import cards, control, delivery, followups, pages, payments, payouts, routes, threeds
from toolkit.simulator.clock import SimClock
from toolkit.simulator.engine import Engine
from toolkit.simulator.guard import ControlGuard
from toolkit.simulator.journal import open_journal
from toolkit.simulator.limits import BodyLimit
from toolkit.simulator.openapi import openapi_document
from toolkit.simulator.pools import Pools
from toolkit.simulator.scheduler import Scheduler
from toolkit.simulator.settings import SimulatorSettings, default_settings
from toolkit.simulator.store import Store

# Parts that add routes or hooks of their own: hosted and 3-D Secure pages, callbacks, control API.
EXTENSIONS: tuple[Callable[[FastAPI, Engine], None], ...] = (pages.install, delivery.install, control.install)

NO_TELEMETRY: TelemetryConfig = {"tracing": False, "metrics": False, "logs": False}


def build_engine(settings: SimulatorSettings, store: Store, clock: SimClock, scheduler: Scheduler) -> Engine:
    engine = Engine(settings, store, clock, wake=scheduler.wake)
    for module in (payments, followups, cards, payouts, threeds):
        module.install(engine)
    clock.on_change(scheduler.wake)
    return engine


def create_app(
    settings: SimulatorSettings | None = None,
    store: Store | None = None,
    *,
    clock: SimClock | None = None,
) -> FastAPI:
    """A simulator app; state lives on ``app.state`` (engine, store, settings, clock, scheduler, journal,
    thread pools, and the delivery, destinations, fault hook and transport finder that the extensions add)."""
    settings = settings or default_settings()
    store = store or Store()
    clock = clock or SimClock()
    scheduler = Scheduler()
    engine = build_engine(settings, store, clock, scheduler)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        delivery.worker(app).start()
        scheduler.start(engine)
        try:
            yield
        finally:
            scheduler.stop()
            delivery.worker(app).stop()

    app = FastAPI(
        title="gatekit simulator",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        telemetry=NO_TELEMETRY,  # a test double: no OpenTelemetry look-ups on every request
    )
    app.state.engine = engine
    app.state.store = store
    app.state.settings = settings
    app.state.clock = clock
    app.state.scheduler = scheduler
    app.state.fault_hook = None
    app.state.journal = open_journal(store, settings)
    app.state.pools = Pools()
    routes.install(app)

    @app.get("/paynet/openapi.json", include_in_schema=False)
    async def gateway_openapi(request: Request) -> JSONResponse:
        return JSONResponse(openapi_document(routes.public_base(request)))

    for extension in EXTENSIONS:
        extension(app, engine)
    # Outermost last: the control API's guard, then the body limit, before anything reads a request.
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    app.add_middleware(ControlGuard, token=settings.control_token, public_url=settings.public_url)
    return app
