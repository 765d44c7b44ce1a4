"""The simulator's front door: the gateway API at once, ``GET /_sim/health`` while the FastAPI app is built.

``QuickStart`` is the ASGI app that ``SimulatorServer`` gives uvicorn.  Importing FastAPI and pydantic
and building the app take most of a start; the gateway's operations do not need them, so:

- a gateway operation (``POST /paynet/api/.../<id>`` of the catalogue) is answered by
  ``routes.GatewayFront`` (plain ASGI: the body limit, the operation, the ``drop`` fault), inside the
  middleware ``add_middleware`` added (the request log), before and after the app is built: the
  framework's layers have nothing to add to these requests, and their cost per request is saved
  (middleware added to ``server.app`` itself sends them through the app, which answers them as well);
- until the app is ready, ``GET /_sim/health`` is answered at once through the app's middleware, in its
  order (the request log, ``ControlGuard``, ``BodyLimit``, the ``drop`` fault);
- anything else (pages, the rest of the control API, ``openapi.json``, a 404 or 405) waits for the app
  (an asyncio future on the builder's result: no polling), then the app answers it as always.

Both share one ``State`` (``core.build_state``); the lifespan (scheduler, callback pool) is run here,
once.  Nothing this module imports loads FastAPI or pydantic (``tests/simulator/test_quickstart.py``
checks it in a fresh interpreter).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from starlette.datastructures import State
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from toolkit.simulator import control, core, faults, pools, routes
from toolkit.simulator.guard import ControlGuard
from toolkit.simulator.limits import BodyLimit
from toolkit.simulator.store import StoreUnavailable

if TYPE_CHECKING:
    from fastapi import FastAPI

log = logging.getLogger("gatekit.simulator")

HEALTH = control.PREFIX + "/health"
Middleware = tuple[Callable[..., Any], dict[str, Any]]  # an ASGI middleware class (or factory) and its options


async def get_health(request: Request) -> JSONResponse:
    """``GET /_sim/health`` as the control API answers it (its name is the route's, for the request log)."""
    engine = request.app.state.engine
    try:
        return JSONResponse(await pools.run(pools.of(request).control, control.health, engine))
    except StoreUnavailable as exc:
        return await control.unanswered(request, exc)


async def _health(scope: Scope, receive: Receive, send: Send) -> None:
    scope["endpoint"] = get_health
    response = await get_health(Request(scope, receive))
    await response(scope, receive, send)


class QuickStart:
    """ASGI app: answers what it can before ``build()`` (the FastAPI app) is done, then hands everything to it."""

    def __init__(self, state: State, build: Callable[[], FastAPI]) -> None:
        self.state = state
        self._build = build
        self._middleware: list[Middleware] = []
        self._gateway = routes.GatewayFront(routes.dispatch_table(routes.gateway_routes()), self)
        self._front: ASGIApp | None = None  # the gateway, inside the added middleware
        self._quick: ASGIApp | None = None
        self._full: FastAPI | None = None
        self._own_middleware = 0  # the app's middleware when built: more means someone added to ``server.app``
        self._future: Future[FastAPI] | None = None
        self._builder: threading.Thread | None = None
        self._lock = threading.Lock()

    # --- the full app ------------------------------------------------------------------------------

    def add_middleware(self, factory: Callable[..., Any], **options: Any) -> None:
        """Middleware around both the quick answers and the app (outermost last, as ``app.add_middleware``).

        Call it before the server starts."""
        with self._lock:
            if self._quick is not None or self._front is not None:
                raise RuntimeError("add middleware before the simulator starts")
            if self._full is not None:  # (first: it raises once the app has answered)
                self._full.add_middleware(factory, **options)
                self._own_middleware = len(self._full.user_middleware)  # ours: the front door keeps taking the API
            self._middleware.append((factory, options))

    def build_in_background(self) -> None:
        """Start building the app in a thread (once); requests that need it wait for it."""
        future, mine = self._claim()
        if mine:
            self._builder = threading.Thread(
                target=self._run_build, args=(future,), name="gatekit-simulator-app", daemon=True
            )
            self._builder.start()

    def full_app(self, timeout: float | None = None) -> FastAPI:
        """The app: built here and now if nobody started it, else when its builder is done."""
        future, mine = self._claim()
        if mine:
            self._run_build(future)
        return future.result(timeout)

    def join(self, timeout: float | None = None) -> None:
        """Wait for a background build (a stopping server leaves no thread behind)."""
        if self._builder is not None:
            self._builder.join(timeout)

    def _claim(self) -> tuple[Future[FastAPI], bool]:
        with self._lock:
            if self._future is not None:
                return self._future, False
            self._future = Future()
            return self._future, True

    def _run_build(self, future: Future[FastAPI]) -> None:
        """Build the app; a failure answers the requests that waited for this build, is logged, and is not kept:
        the next request that needs the app builds it again (a failed build used to be served as a 500 until
        the process ended: issue 34, #2)."""
        try:
            app = self._build()
            with self._lock:
                for factory, options in self._middleware:
                    app.add_middleware(factory, **options)
                self._own_middleware = len(app.user_middleware)
                self._full = app
        except BaseException as exc:
            log.exception("the simulator's app could not be built (the next request that needs it tries again)")
            with self._lock:
                self._future = None
            future.set_exception(exc)
            return
        future.set_result(app)

    # --- ASGI --------------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        full = self._full
        endpoint = self._gateway.find(scope)
        if endpoint is not None and (full is None or len(full.user_middleware) == self._own_middleware):
            scope[routes.ENDPOINT_KEY] = endpoint  # found once: the front door reads it past the added middleware
            await (self._front or self._front_app())(scope, receive, send)
            return
        if full is None and scope["type"] == "http" and scope["method"] == "GET" and scope["path"] == HEALTH:
            scope["app"] = self  # what ``request.app`` is for the handlers: the shared ``state``
            await self._quick_app()(scope, receive, send)
            return
        if full is None:
            self.build_in_background()
            assert self._future is not None
            full = await asyncio.wrap_future(self._future)
        await full(scope, receive, send)

    def _front_app(self) -> ASGIApp:
        with self._lock:
            if self._front is None:
                app: ASGIApp = self._gateway
                for factory, options in self._middleware:
                    app = factory(app, **options)
                self._front = app
            return self._front

    def _quick_app(self) -> ASGIApp:
        if self._quick is None:
            settings = self.state.settings
            app: ASGIApp = faults.drop_middleware(_health, self.state)
            app = BodyLimit(app, limit=settings.max_body_bytes)
            app = ControlGuard(app, token=settings.control_token, public_url=settings.public_url)
            with self._lock:
                for factory, options in self._middleware:
                    app = factory(app, **options)
                self._quick = app
        return self._quick

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """The scheduler and the callback pool run from start-up to shut-down (the app's own lifespan)."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    core.start(self.state)
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                core.stop(self.state)
                await send({"type": "lifespan.shutdown.complete"})
                return
