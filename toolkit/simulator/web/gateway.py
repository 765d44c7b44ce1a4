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
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toolkit.hosts import url_host
from toolkit.operations import AnswerStyle, AuthScheme, Operation, iter_operations
from toolkit.simulator import destinations, faults, journal, pools
from toolkit.simulator.rules import checks
from toolkit.simulator.rules.engine import Call, Engine
from toolkit.simulator.rules.errors import SimError, endpoint_error, server_error, unavailable
from toolkit.simulator.shaping import TIMEOUT_HOLD
from toolkit.simulator.storage import StoreBusy, StoreUnavailable, serving
from toolkit.simulator.web import hosted_fields_answers, limits, render, urls
from toolkit.wire import MEDIA_TYPE, asks_for_json, content_type_problem

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


def read_body(engine: Engine, gr: GatewayRequest) -> list[tuple[str, str]]:
    """The request's fields as the gateway reads them: a form body (spec 2.1).  Any other Content-Type (none,
    ``text/plain``, ``application/json``) is refused, naming it (behaviour 12: the gateway sees an empty form); a
    lenient simulator reads the body all the same (a JSON object's members, else the body as a form) and warns."""
    content_type = _header(gr.http, b"content-type")
    problem = content_type_problem(content_type)
    if not problem:
        return limits.parse_form(gr.body)
    address = checks.resolve(engine.settings, gr.operation, gr.path_id, gr.by_group)  # (an unknown one: said first)
    if not engine.settings.is_lenient(address.merchant):
        raise SimError(problem, code=limits.BODY_CODE)
    is_json = content_type.partition(";")[0].strip().lower().endswith(("/json", "+json"))
    gr.warnings.append(f"{problem} (lenient: accepted, read as {'JSON' if is_json else 'a form'})")
    return limits.parse_json(gr.body) if is_json else limits.parse_form(gr.body)


def accept(engine: Engine, gr: GatewayRequest, pairs: list[tuple[str, str]]) -> Call:
    """Every check of a request's fields (``read_body``'s), in order; returns the Call (with the request's
    ``serial``) for the engine."""
    op, request, warnings = gr.operation, gr.http, gr.warnings
    address = checks.resolve(engine.settings, op, gr.path_id, gr.by_group)
    lenient = engine.settings.is_lenient(address.merchant)
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
    return Call(op, address.merchant, address.endpoint_id, address.group_id, fields, gr.serial, warnings, lenient)


# A body up to this size may be answered on the event loop (``storage.serving`` says when the store lets it): the
# work is a fraction of a millisecond, less than the hop to a worker thread.  Bigger bodies go to the gateway's
# threads: parsing them is not done on the loop.
INLINE_BYTES = 8 * 1024


@dataclass(frozen=True)
class Endpoint:
    """A gateway operation at one addressing mode (by endpoint or endpoint group), and its route's handler."""

    op: Operation
    by_group: bool
    handler: Handler


@dataclass(slots=True)
class GatewayRequest:
    """One gateway request on its way through parse -> check -> engine -> render: what every step reads, in one
    object (the HTTP request, the operation and its addressing, the answer's form, the serial number it is
    answered with, the warnings it gathers, what it sent as the journal keeps it, the merchant's login)."""

    http: Request
    operation: Operation
    by_group: bool
    body: bytes
    serial: str
    json_mode: bool
    warnings: list[str]
    sent: journal.Sent = journal.NOTHING_SENT
    login: str = ""

    @property
    def path_id(self) -> str:
        """The endpoint or endpoint group id of the request's path."""
        return str(self.http.path_params["path_id"])

    @classmethod
    def of(cls, request: Request, op: Operation, by_group: bool, body: bytes) -> GatewayRequest:
        json_mode = _wants_json(request)
        warnings = [] if json_mode else [f"no Accept: {MEDIA_TYPE} header; the gateway answers in its legacy form"]
        return cls(request, op, by_group, body, render.new_serial(), json_mode, warnings)


def make_handler(op: Operation, by_group: bool) -> Handler:
    async def handler(request: Request) -> Answer:
        raw = await limits.whole_body(request.receive)  # whole and small: limits.BodyLimit read it
        return await respond(request, op, by_group, raw)

    handler.__name__ = f"{op.name}{'_group' if by_group else ''}"
    return handler


async def respond(request: Request, op: Operation, by_group: bool, raw: bytes) -> Answer:
    """The answer to the body ``raw`` of a request for ``op`` (a delay fault waits here: no thread held)."""
    gr = GatewayRequest.of(request, op, by_group, raw)
    settings = request.app.state.settings
    delay = settings.answer_delay + (settings.answer_latency.draw() if settings.answer_latency else 0.0)
    if delay > 0:  # (a slow gateway or network, answer_latency: no thread is held while it waits)
        await asyncio.sleep(delay)
    answered = await _answer(gr, faults=True)
    if isinstance(answered, float):  # a delay fault: wait here, then answer
        await asyncio.sleep(answered)
        answered = await _answer(gr, faults=False)
    assert isinstance(answered, render.GatewayResponse)
    if request.scope.get(faults.HOLD):  # a timeout fault (fault_rate): done, and answered too late
        await asyncio.sleep(TIMEOUT_HOLD)
    return answered


async def _answer(gr: GatewayRequest, *, faults: bool) -> Answer | float:
    """``answer``, run where the store lets it run soonest (``storage.serving``: on the event loop, with the loop's
    batch of writes, or in a gateway thread): a small body may be answered on the loop."""
    request = gr.http
    work = functools.partial(answer, gr, faults=faults)
    small = len(gr.body) <= INLINE_BYTES
    answered: Answer | float = await serving.serve(
        request.app.state.store, work, small=small, threads=pools.of(request).gateway
    )
    return answered


def answer(gr: GatewayRequest, *, faults: bool) -> Answer | float | serving.Later[Answer]:
    """parse -> check -> engine -> render, journaled; first the fault plans (``faults``): a delay is returned.

    Run in a gateway thread, or on the event loop by ``_answer`` when nothing in it can wait; there, a sale's
    write may be left to the loop's batch (``serving.Later``: answered once the batch is written)."""
    request = gr.http
    engine: Engine = request.app.state.engine
    try:
        fault: FaultHook | None = request.app.state.fault_hook if faults else None
        if fault is not None and (delay := fault(request, gr.operation)) > 0:
            return delay
        pairs = read_body(engine, gr)
        gr.sent = journal.sent(pairs)  # (masked now: the values found clean are stored without a second look)
        call = accept(engine, gr, pairs)
        gr.login = call.merchant.login
        result = engine.handle(call)
        if isinstance(result, serving.Later):
            return result.answered_by(functools.partial(_finish, gr, call))
    except StoreBusy:  # (on the event loop, nothing written: answered again in a thread)
        raise
    except Exception as exc:
        return _reply(gr, *_failure(gr, exc))
    return _finish(gr, call, result)


def _finish(gr: GatewayRequest, call: Call, outcome: Any) -> Answer:
    """The answer to an accepted request: ``outcome`` is the engine's result, or what it raised (a write the loop's
    batch did)."""
    engine: Engine = gr.http.app.state.engine
    try:
        if isinstance(outcome, BaseException):
            raise outcome
        draw = hosted_fields_answers.result_body if _hosted(gr) else render.result_body  # (hosted-fields.md 3.4)
        body, status = draw(engine, outcome, call, public_base(gr.http)), 200
    except Exception as exc:
        body, status = _failure(gr, exc)
    return _reply(gr, body, status)


def _failure(gr: GatewayRequest, exc: Exception) -> tuple[dict[str, Any], int]:
    """A refusal (``SimError``) in the gateway's format; anything else is a bug: said so, and logged."""
    if isinstance(exc, SimError):
        return render.error_body(gr.serial, exc), exc.http_status
    if isinstance(exc, StoreUnavailable):  # (a shared database stopped or restarting: not a bug, and passing)
        return render.error_body(gr.serial, unavailable(str(exc))), 503
    log.error("simulator failure in %s", gr.operation.name, exc_info=exc)
    return render.error_body(gr.serial, server_error(f"internal error: {exc.__class__.__name__}")), 500


def _reply(gr: GatewayRequest, body: dict[str, Any], status: int) -> Answer:
    """The answer, journaled."""
    request = gr.http
    engine: Engine = request.app.state.engine
    login = gr.login or _login_of(engine, gr.path_id, gr.by_group)
    line = journal.entry(
        at=engine.clock.now(),
        login=login,
        operation=gr.operation.name,
        path=_path(request),
        http_status=status,
        body=body,
        sent=gr.sent,
        warnings=gr.warnings,
    )
    request.app.state.journal.record(line)
    request.scope[render.ANSWER_SCOPE_KEY] = (body.get("type", ""), body.get("paynet-order-id", ""))
    if _hosted(gr):  # JSON with its types; a refused signature in text/plain (hosted-fields.md section 3)
        return hosted_fields_answers.respond(gr.operation, gr.json_mode, status, body)
    return render.respond(gr.json_mode, status, body)


def _hosted(gr: GatewayRequest) -> bool:
    return gr.operation.answers is AnswerStyle.HOSTED_FIELDS


def _login_of(engine: Engine, path_id: str, by_group: bool) -> str:
    for merchant in engine.settings.merchants:
        if path_id in (merchant.endpoint_group_ids if by_group else merchant.endpoint_ids):
            return merchant.login
    return ""


async def no_operation(request: Request, exc: Exception) -> Response:
    """A 404 or 405 under ``/paynet/api/`` in the gateway's format (spec 2.1: every response); elsewhere JSON
    ``{"detail": ...}``, as the control API's clients read it."""
    assert isinstance(exc, HTTPException)
    if exc.status_code not in (404, 405) or not request.url.path.startswith(urls.PAGE_ROOT + "/api/"):
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)
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


def routes() -> list[Route]:
    """One route per operation and addressing mode, for the router: ``front.Front`` answers their POSTs before
    the router sees them; the router answers a GET with a 405, in the gateway's format (``no_operation``)."""
    # A plain Starlette route: the handler reads its own body (a request the front door did not take)
    return [Route(template, endpoint.handler, methods=["POST"]) for template, endpoint in gateway_routes()]
