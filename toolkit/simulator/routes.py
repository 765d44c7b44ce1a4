"""The gateway API: every catalogue operation at ``/paynet/api/...``, by endpoint and by group.

Thin handlers: parse -> check -> engine -> render.  Bad input never gives a 500: every
rejection is a ``SimError`` rendered in the gateway's format; only a bug or an injected fault
answers ``type=error``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.datastructures import State
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from toolkit.hosts import url_host
from toolkit.operations import AuthScheme, Operation, iter_operations
from toolkit.simulator import checks, destinations, faults, journal, limits, pools, render, urls
from toolkit.simulator.batch import Deferred
from toolkit.simulator.engine import Call, Engine
from toolkit.simulator.errors import SimError, endpoint_error, server_error, unavailable
from toolkit.simulator.shaping import TIMEOUT_HOLD
from toolkit.simulator.store import Store, StoreBusy, StoreUnavailable
from toolkit.wire import FORM_TYPE, MEDIA_TYPE, asks_for_json

if TYPE_CHECKING:
    from fastapi import FastAPI

log = logging.getLogger("gatekit.simulator")
# A fault plan hook (the control API installs one), run in a gateway thread: raises SimError or returns the
# seconds to delay the answer (0: none); None by default.
FaultHook = Callable[[Request, Operation], float]
Answer = render.GatewayResponse
Handler = Callable[[Request], Awaitable[Answer]]  # a gateway operation's endpoint (a route's)


def public_base(request: Request) -> str:
    """The base URL handed out (``http://host:port/paynet``): ``public_url`` if set, else the socket's own address.

    Never the ``Host`` header: a client must not choose the addresses the simulator gives to others.
    """
    return (request.app.state.settings.public_url or _local_root(request)) + urls.PAGE_ROOT


def _local_root(request: Request) -> str:
    scheme = request.scope.get("scheme", "http")  # what ``request.url.scheme`` reads, without building the URL
    server = request.scope.get("server")
    if not server or server[1] is None:
        return f"{scheme}://127.0.0.1"
    root = _ROOTS.get((scheme, server))
    if root is None:
        host, port = server
        root = f"{scheme}://{url_host(host)}:{port}"
        if len(_ROOTS) < 64:  # (a server has one or two addresses)
            _ROOTS[(scheme, server)] = root
    return root


_ROOTS: dict[tuple[str, tuple[str, int]], str] = {}  # (scheme, the socket's address) -> its root URL


def _path(request: Request) -> str:
    """``request.url.path`` without building the URL when the scope's path is already what it gives."""
    path: str = request.scope["path"]
    if request.scope.get("root_path") or "?" in path or "#" in path or not path.isprintable():
        return request.url.path  # (isprintable: no tab, carriage return or line feed)
    return path


def _wants_json(request: Request) -> bool:
    """JSON for ``Accept: application/vnd.pay+json``; the legacy ``key=value`` form otherwise.

    Media types are compared without regard to case (RFC 9110 8.3.1): ``Application/Vnd.Pay+JSON`` asks for JSON."""
    return asks_for_json(_header(request, b"accept"))


def _header(request: Request, name: bytes) -> str:
    """A request header (its first value; "" when absent) without building the request's ``Headers``."""
    for key, value in request.scope["headers"]:
        if key == name:
            return value.decode("latin-1")  # type: ignore[no-any-return]
    return ""


def _parse_body(pairs: list[tuple[str, str]] | None, warnings: list[str], content_type: str) -> list[tuple[str, str]]:
    if content_type.split(";")[0].strip().lower() != FORM_TYPE:
        warnings.append(f"Content-Type is {content_type or 'missing'}; the spec requires {FORM_TYPE}")
    if pairs is None:  # (limits.parse_form refused the body before: this is never reached)
        raise SimError("the request body is not UTF-8 form data", code="6")
    return pairs


def accept(
    engine: Engine,
    request: Request,
    op: Operation,
    path_id: str,
    by_group: bool,
    body: list[tuple[str, str]] | None,
    warnings: list[str],
    serial: str,
) -> Call:
    """Every check of a request, in order; returns the Call (with the request's ``serial``) for the engine."""
    address = checks.resolve(engine.settings, op, path_id, by_group)
    lenient = engine.settings.is_lenient(address.merchant)
    pairs = _parse_body(body, warnings, _header(request, b"content-type"))
    fields = checks.canonical_fields(op, pairs, warnings, lenient=lenient)
    if not op.auth.is_oauth:
        checks.check_login(op, fields, address)
    else:  # the signature first: an unsigned request learns nothing about its fields, nor about logins
        url = str(request.url.replace(query=""))
        checks.check_oauth(
            op,
            request.headers.get("authorization"),
            url,
            pairs,
            address,
            engine.store,
            engine.clock.wall(),  # the client's clock is real time, whatever a test did to ours
            engine.settings.timestamp_window,
        )
        checks.check_login(op, fields, address)
    checks.check_fields(op, fields, warnings, lenient=lenient)
    destinations.check_fields(request, fields)  # callback addresses: the allow-list and the port rule
    if op.auth is AuthScheme.CONTROL:  # the control is computed over valid fields
        money = lambda: engine.order_money(address.merchant.login, fields.get("orderid", ""))  # noqa: E731
        checks.check_control(op, fields, address, warnings, order_money=money)
    return Call(op, address.merchant, address.endpoint_id, address.group_id, fields, serial, warnings, lenient)


# A body up to this size is answered on the event loop when the store is free (in-memory stores): the work
# is a fraction of a millisecond, less than the hop to a worker thread.  Bigger bodies, a busy store (a thread
# holds it) and file stores (a commit may wait for the disk) go to the gateway's threads: the loop never waits.
INLINE_BYTES = 8 * 1024


@dataclass(frozen=True)
class Endpoint:
    """A gateway operation at one addressing mode (by endpoint or endpoint group), and its route's handler."""

    op: Operation
    by_group: bool
    handler: Handler


def make_handler(op: Operation, by_group: bool) -> Handler:
    async def handler(request: Request) -> Answer:
        raw = await limits.whole_body(request.receive)  # whole and small: limits.BodyLimit read it
        return await respond(request, op, by_group, raw)

    handler.__name__ = f"{op.name}{'_group' if by_group else ''}"
    return handler


async def respond(request: Request, op: Operation, by_group: bool, raw: bytes) -> Answer:
    """The answer to the body ``raw`` of a request for ``op`` (a delay fault waits here: no thread held)."""
    serial = render.new_serial()
    settings = request.app.state.settings
    delay = settings.answer_delay + (settings.answer_latency.draw() if settings.answer_latency else 0.0)
    if delay > 0:  # (a slow gateway or network, answer_latency: no thread is held while it waits)
        await asyncio.sleep(delay)
    answered = await _answer(request, op, by_group, raw, serial, faults=True)
    if isinstance(answered, float):  # a delay fault: wait here, then answer
        await asyncio.sleep(answered)
        answered = await _answer(request, op, by_group, raw, serial, faults=False)
    assert isinstance(answered, render.GatewayResponse)
    if request.scope.get(faults.HOLD):  # a timeout fault (fault_rate): done, and answered too late
        await asyncio.sleep(TIMEOUT_HOLD)
    return answered


async def _answer(
    request: Request, op: Operation, by_group: bool, raw: bytes, serial: str, *, faults: bool
) -> Answer | float:
    """``answer`` on the event loop when it need not wait there, else in a thread.

    On the loop: a small body, and an in-memory store no other thread holds, or a SQLite file whose writes do not
    wait (``Store.without_waiting``: a write lock held by another thread, or by another process beyond a moment,
    gives the request to a thread before anything is written).  A thread hand-off costs more than a sale's
    work; PostgreSQL answers over the network, always in a thread."""
    store: Store = request.app.state.store
    if len(raw) <= INLINE_BYTES:
        if store.in_memory:
            if store.hold_if_free():
                try:
                    answered = answer(request, op, by_group, raw, serial, faults=faults)
                finally:
                    store.release()
                assert not isinstance(answered, Pending)  # (no batch: in memory, a write costs no commit)
                return answered
        elif isinstance(store, Store):
            batcher = request.app.state.engine.batcher
            assert batcher is not None  # (core.build_state gives a SQLite file's engine one)
            try:
                with store.without_waiting(), batcher.collect():
                    answered = answer(request, op, by_group, raw, serial, faults=faults)
            except StoreBusy:
                pass
            else:
                if not isinstance(answered, Pending):
                    return answered
                try:
                    outcome = await batcher.submit(answered.write, pools.of(request).gateway)
                except Exception as exc:  # (the write's refusal, or a failure: answered as in answer)
                    outcome = exc
                return answered.finish(outcome)
    answered = await pools.run(pools.of(request).gateway, answer, request, op, by_group, raw, serial, faults=faults)
    assert not isinstance(answered, Pending)  # (only the loop's thread collects writes)
    return answered


@dataclass(frozen=True)
class Pending:
    """A request answered on the loop whose write joins the loop's batch (``toolkit.simulator.batch``):
    ``finish`` answers with what ``write`` gave (or raised) once the batch is written."""

    write: Callable[[], Any]
    finish: Callable[[Any], Answer]


def answer(
    request: Request, op: Operation, by_group: bool, raw: bytes, serial: str, *, faults: bool
) -> Answer | float | Pending:
    """parse -> check -> engine -> render, journaled; first the fault plans (``faults``): a delay is returned.

    Run in a gateway thread, or on the event loop by ``_answer`` when nothing in it can wait; there, a sale's
    write is left to the loop's batch (``Pending``)."""
    engine: Engine = request.app.state.engine
    json_mode = _wants_json(request)
    warnings = [] if json_mode else [f"no Accept: {MEDIA_TYPE} header; the gateway answers in its legacy form"]
    sent = journal.NOTHING_SENT
    login = ""
    try:
        fault: FaultHook | None = request.app.state.fault_hook if faults else None
        if fault is not None and (delay := fault(request, op)) > 0:
            return delay
        pairs = limits.parse_form(raw)
        sent = journal.sent(pairs)  # (masked now: the values found clean are stored without a second look)
        call = accept(engine, request, op, request.path_params["path_id"], by_group, pairs, warnings, serial)
        login = call.merchant.login
        done = functools.partial(_finish, request, op, by_group, json_mode, serial, call, sent, warnings)
        try:
            result = engine.handle(call)
        except Deferred as later:
            return Pending(later.write, done)
    except StoreBusy:  # (on the event loop, nothing written: answered again in a thread)
        raise
    except Exception as exc:
        body, status = _failure(op, serial, exc)
        return _reply(request, op, by_group, json_mode, status, body, sent, warnings, login)
    return done(result)


def _finish(
    request: Request,
    op: Operation,
    by_group: bool,
    json_mode: bool,
    serial: str,
    call: Call,
    sent: journal.Sent,
    warnings: list[str],
    outcome: Any,
) -> Answer:
    """The answer to an accepted request: ``outcome`` is the engine's result, or what it raised (a write the loop's
    batch did)."""
    engine: Engine = request.app.state.engine
    try:
        if isinstance(outcome, BaseException):
            raise outcome
        body, status = render.result_body(engine, outcome, call, public_base(request)), 200
    except Exception as exc:
        body, status = _failure(op, serial, exc)
    return _reply(request, op, by_group, json_mode, status, body, sent, warnings, call.merchant.login)


def _failure(op: Operation, serial: str, exc: Exception) -> tuple[dict[str, Any], int]:
    """A refusal (``SimError``) in the gateway's format; anything else is a bug: said so, and logged."""
    if isinstance(exc, SimError):
        return render.error_body(serial, exc), exc.http_status
    if isinstance(exc, StoreUnavailable):  # (a shared database stopped or restarting: not a bug, and passing)
        return render.error_body(serial, unavailable(str(exc))), 503
    log.error("simulator failure in %s", op.name, exc_info=exc)
    return render.error_body(serial, server_error(f"internal error: {exc.__class__.__name__}")), 500


def _reply(
    request: Request,
    op: Operation,
    by_group: bool,
    json_mode: bool,
    status: int,
    body: dict[str, Any],
    sent: journal.Sent,
    warnings: list[str],
    login: str,
) -> Answer:
    """The answer, journaled."""
    engine: Engine = request.app.state.engine
    login = login or _login_of(engine, request.path_params["path_id"], by_group)
    line = journal.entry(
        at=engine.clock.now(),
        login=login,
        operation=op.name,
        path=_path(request),
        http_status=status,
        body=body,
        sent=sent,
        warnings=warnings,
    )
    request.app.state.journal.record(line)
    request.scope[render.ANSWER_SCOPE_KEY] = (body.get("type", ""), body.get("paynet-order-id", ""))
    return render.respond(json_mode, status, body)


def _login_of(engine: Engine, path_id: str, by_group: bool) -> str:
    for merchant in engine.settings.merchants:
        if path_id in (merchant.endpoint_group_ids if by_group else merchant.endpoint_ids):
            return merchant.login
    return ""


async def _no_operation(request: Request, exc: Exception) -> Response:
    """A 404 or 405 under ``/paynet/api/`` in the gateway's format (spec 2.1: every response); elsewhere FastAPI's."""
    assert isinstance(exc, HTTPException)
    if exc.status_code not in (404, 405) or not request.url.path.startswith(urls.PAGE_ROOT + "/api/"):
        from fastapi.exception_handlers import http_exception_handler  # only the full app gets here

        return await http_exception_handler(request, exc)
    if exc.status_code == 405:
        error = SimError(f"{request.method} {request.url.path}: gateway operations answer POST only", code="6")
        body = render.error_body(render.new_serial(), error)
        return render.respond(_wants_json(request), exc.status_code, body)
    return _unknown_operation(request, exc.status_code)


def _unknown_operation(request: Request, status: int) -> Answer:
    """The gateway's answer to a path under ``/paynet/api/`` that names no operation."""
    path = request.url.path
    hint = f"; without the trailing slash: {path.rstrip('/')}" if path.endswith("/") and len(path) > 1 else ""
    error = endpoint_error(f"{path} is not an operation of the gateway{hint} (see {urls.PAGE_ROOT}/openapi.json)")
    return render.respond(_wants_json(request), status, render.error_body(render.new_serial(), error))


class GatewayDispatch:
    """ASGI middleware: a gateway operation (``POST /paynet/api/.../<path_id>``) goes straight to its handler.

    A dict from the path without its last segment to the handler, instead of the router's walk over every
    route and the framework's request/response wrapping; what does not match (another method, another path,
    a ``root_path``) goes on to the app, whose routes answer as before (a 405 for a GET, a 404 elsewhere).
    The route's ``endpoint`` and ``path_params`` are set in the scope as the router sets them.
    """

    def __init__(self, app: ASGIApp, table: dict[str, Endpoint]) -> None:
        self.app = app
        self.table = table

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and not scope.get("root_path"):
            prefix, _, path_id = scope["path"].rpartition("/")
            endpoint = self.table.get(prefix)
            if endpoint is not None and path_id:
                scope["endpoint"] = endpoint.handler
                scope["path_params"] = {"path_id": path_id}
                response = await endpoint.handler(Request(scope, receive))
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


ENDPOINT_KEY = "gatekit.endpoint"  # scope key: the gateway operation QuickStart found for GatewayFront


class GatewayFront:
    """ASGI app for the gateway operations only (``find`` tells which requests): what the app's middleware
    and ``GatewayDispatch`` do for them, in one step.

    The body is read whole within ``max_body_bytes`` (``limits.read_body``: a 413 beyond), the operation
    answers (``respond``), and a request the ``drop`` fault marked gets a closed connection instead
    (``faults.drop_connection``).  ``ControlGuard`` has nothing to do here (it guards ``/_sim/``), nor the
    framework's error pages (``answer`` turns any failure into the gateway's ``type=error``).
    ``SimulatorServer`` sends every gateway operation here (``quickstart``), before and after its app is built.
    What it sends is left in the scope (``render.SENT_SCOPE_KEY``, with ``ANSWER_SCOPE_KEY``): a request log
    directly around it (``reports_what_it_sent``) reads it there.
    """

    reports_what_it_sent = True

    def __init__(self, table: dict[str, Endpoint], app: Any) -> None:
        self.table = table
        self.app = app  # what ``request.app`` is for the handlers (its ``state``: engine, settings...)
        self.state: State = app.state

    def find(self, scope: Scope) -> Endpoint | None:
        """The operation of a gateway request (``POST .../<path_id>`` under a known path), else None."""
        if scope["type"] != "http" or scope["method"] != "POST" or scope.get("root_path"):
            return None
        prefix, _, path_id = scope["path"].rpartition("/")
        return self.table.get(prefix) if path_id else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint: Endpoint | None = scope.get(ENDPOINT_KEY) or self.find(scope)  # (QuickStart found it before)
        if endpoint is None:  # a middleware changed the request on its way: not a gateway operation any more
            await _unknown_operation(Request(scope, receive), 404)(scope, receive, send)
            return
        scope["app"] = self.app
        scope["endpoint"] = endpoint.handler
        scope["path_params"] = {"path_id": scope["path"].rpartition("/")[2]}
        raw = await limits.read_body(scope, receive, send, self.state.settings.max_body_bytes)
        if raw is None:
            return  # answered 413, or the client went away
        response = await respond(Request(scope, receive), endpoint.op, endpoint.by_group, raw)
        if faults.marked_for_drop(scope):
            await faults.drop_connection(scope, send, self.state.transport_finder)
            return
        scope[render.SENT_SCOPE_KEY] = response.status_code
        await response(scope, receive, send)


def gateway_routes() -> list[tuple[str, Endpoint]]:
    """(path template, endpoint): one per operation and addressing mode (group routes answer a clear error
    when not allowed), in the catalogue's order."""
    found = []
    for op in iter_operations():
        for by_group, path in ((False, op.path), (True, op.group_path)):
            template = urls.PAGE_ROOT + path.replace("{endpointId}", "{path_id}").replace(
                "{endpointGroupId}", "{path_id}"
            )
            assert template.endswith("/{path_id}") and template.count("{") == 1, template
            found.append((template, Endpoint(op, by_group, make_handler(op, by_group))))
    return found


def dispatch_table(found: list[tuple[str, Endpoint]]) -> dict[str, Endpoint]:
    """``GatewayDispatch``'s table: the path without ``/{path_id}`` -> the endpoint (the first route wins,
    as in the router)."""
    table: dict[str, Endpoint] = {}
    for template, endpoint in found:
        table.setdefault(template.removesuffix("/{path_id}"), endpoint)
    return table


def install(app: FastAPI) -> None:
    """One route per operation and addressing mode, and ``GatewayDispatch`` in front of them."""
    app.add_exception_handler(HTTPException, _no_operation)
    found = gateway_routes()
    for template, endpoint in found:
        # A plain Starlette route: the handler reads its own body, FastAPI's parameter solving is not needed
        app.router.add_route(template, endpoint.handler, methods=["POST"], include_in_schema=False)
    app.add_middleware(GatewayDispatch, table=dispatch_table(found))  # innermost: the limit and faults run first
