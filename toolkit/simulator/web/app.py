"""The app factory: ``create_app(settings, store)``, the simulator's one ASGI app on its state (``core.build_state``:
engine, store, scheduler...).

One middleware stack, built once, and one road for every request (starlette's own shape: the stack is the
middleware list around the router):

    the middleware a user added (outermost last: ``app.add_middleware``, before the app serves)
      -> ``front.Front``: a gateway operation is answered here
      -> ``ControlGuard`` (who may use ``/_sim/``) -> ``BodyLimit`` (413) -> the router: the control API, the pages,
         ``/paynet/openapi.json``, the gateway's paths (a GET is a 405 in the gateway's format)

``build`` makes the stack at once (``SimulatorServer`` calls it as it starts: a failure is seen there, not served
as a 500 later); middleware added after that is refused.  Its lifespan runs the scheduler and the callback pool.
The app is plain starlette: nothing here builds pydantic models or touches the process's warning filters.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.datastructures import State
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from toolkit.simulator import core
from toolkit.simulator.clock import SimClock
from toolkit.simulator.settings import SimulatorSettings
from toolkit.simulator.state import SimulatorState
from toolkit.simulator.storage import Store, StoreUnavailable
from toolkit.simulator.web import control, gateway, hosted_fields_api, hosted_fields_pages, pages
from toolkit.simulator.web.controlargs import ControlError
from toolkit.simulator.web.front import Front
from toolkit.simulator.web.guard import ControlGuard
from toolkit.simulator.web.limits import BodyLimit
from toolkit.simulator.web.openapi import openapi_document

__all__ = ["build", "create_app"]


def create_app(
    settings: SimulatorSettings | None = None,
    store: Store | None = None,
    *,
    clock: SimClock | None = None,
    state: State | None = None,
) -> Starlette:
    """A simulator app; state lives on ``app.state`` (engine, store, settings, clock, scheduler, journal,
    thread pools, delivery, destinations, fault hook and transport finder: ``core.build_state``).

    ``state``: one already built (``SimulatorServer``'s), instead of ``settings``, ``store`` and ``clock``."""
    if state is not None and (settings is not None or store is not None or clock is not None):
        raise ValueError("create_app: give a built state, or settings, store and clock to build one; not both")
    state = state if state is not None else core.build_state(settings, store, clock=clock)
    assert isinstance(state, SimulatorState)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        core.start(state)
        try:
            yield
        finally:
            core.stop(state)

    settings = state.settings
    app = Starlette(
        routes=_routes(state),
        exception_handlers={
            HTTPException: gateway.no_operation,
            ControlError: control.refused,
            StoreUnavailable: control.unanswered,
        },
        lifespan=lifespan,
    )
    app.state = state
    # (no trailing-slash redirects: starlette writes them with the Host header, which the client chose; a path
    # with one more slash is a 404 that says so: ``gateway._unknown_operation``)
    app.router.redirect_slashes = False
    app.user_middleware = [
        Middleware(Front, state=state, owner=app),
        Middleware(ControlGuard, token=settings.control_token, public_url=settings.public_url),
        Middleware(BodyLimit, limit=settings.max_body_bytes),
    ]
    return app


def build(app: Starlette) -> None:
    """The middleware stack, built now (once): what is added after is refused."""
    if app.middleware_stack is None:
        app.middleware_stack = app.build_middleware_stack()


async def gateway_openapi(request: Request) -> JSONResponse:
    return JSONResponse(openapi_document(gateway.public_base(request)))


def _routes(state: State) -> list[BaseRoute]:
    return [
        *control.routes(state.engine),
        *pages.routes(),
        *hosted_fields_pages.routes(),
        *hosted_fields_api.routes(),
        Route("/paynet/openapi.json", gateway_openapi, methods=["GET"]),
        *gateway.routes(),
    ]
