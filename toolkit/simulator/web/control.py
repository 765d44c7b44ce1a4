"""The control API under ``/_sim/``: JSON in and out, for tests, notebooks and ``gatekit trigger``; not part of the
gateway.

``ROUTES`` below is the one table of its routes: the router is built from it, and ``GET /_sim/`` (the routes with
their arguments) and ``GET /_sim/openapi.json`` (an OpenAPI 3.1 document: ``controlapi``) are written from it.  Each
view gets its arguments read and checked (``controlargs``): a bad call is one 400 that names every problem, each
with what is valid, ``{"error": "<field>: <why>; ...", "field": "<the first>", "problems": [...]}``; an unknown
orderid is a 404, a change the order's state refuses a 409, a path under ``/_sim/`` that is no route a 404 (a
method it does not take, a 405) in the same form.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Match, Route

from toolkit._version import __version__
from toolkit.masking import mask_text
from toolkit.models import Status
from toolkit.money import MoneyError, from_minor_units
from toolkit.operations import OPERATIONS
from toolkit.simulator import delivery, faults, pools
from toolkit.simulator.clock import ClockLimit
from toolkit.simulator.rules import followups
from toolkit.simulator.rules.engine import Engine
from toolkit.simulator.rules.errors import SimError
from toolkit.simulator.storage import Row, account_rows, callback_rows, fault_rows, loads, order_rows
from toolkit.simulator.web import controlapi, gateway, urls
from toolkit.simulator.web.controlapi import PREFIX, ControlRoute
from toolkit.simulator.web.controlargs import Arg, ControlError, Values, read_arguments

if TYPE_CHECKING:
    from toolkit.simulator.state import HasState

T = TypeVar("T")
ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
FORCEABLE = tuple(status.value for status in Status if status is not Status.PROCESSING)
MAX_ADVANCE = 10 * 366 * 86400.0
MAX_WAIT = 60.0
MAX_ATTEMPTS = 1000


def transaction_view(engine: Engine, tx: Row) -> dict[str, Any]:
    """A transaction row for the outside: text masked, ``extra`` decoded, the amount in major units.

    ``orderid`` is the order's (the paynet-order-id every transaction of the order carries).
    """
    view: dict[str, Any] = {name: mask_text(value) if isinstance(value, str) else value for name, value in tx.items()}
    view["extra"] = loads(tx["extra"])
    view["orderid"] = str(tx["orderid"])
    if amount := engine.amount_text(tx):
        view["amount"] = amount
    return view


def clock_view(engine: Engine) -> dict[str, Any]:
    now = engine.clock.now()
    return {
        "now": now,
        "iso": dt.datetime.fromtimestamp(now, dt.UTC).isoformat(),
        "offset": engine.clock.offset,
    }


def find_order(engine: Engine, key: int) -> Row:
    """The initial transaction of order ``key`` (404 when there is none)."""
    row = order_rows.order(engine.store, key)
    if row is None:
        raise ControlError("orderid", f"{key} is unknown", http_status=404)
    return row


def find_tx(engine: Engine, key: int) -> Row:
    """The latest transaction of order ``key``."""
    return engine.latest(find_order(engine, key))


def order_view(engine: Engine, order: Row) -> dict[str, Any]:
    return {
        "orderid": str(order["orderid"]),
        "client_orderid": mask_text(order["client_orderid"]),
        "transactions": [transaction_view(engine, tx) for tx in engine.transactions_of(order)],
    }


def chargeback(engine: Engine, order: Row, amount: str | None) -> Row:
    try:
        return followups.chargeback(engine, order["id"], amount)
    except MoneyError as exc:
        raise ControlError("amount", exc.rule) from None
    except SimError as exc:
        raise ControlError("amount", exc.message, http_status=409) from None


def merchants_view(engine: Engine) -> list[dict[str, Any]]:
    balances = {row["login"]: row for row in account_rows.accounts(engine.store)}
    views = []
    for merchant in engine.settings.merchants:
        row = balances.get(merchant.login)
        balance = from_minor_units(row["payout_balance_minor"], row["currency"]) if row else merchant.payout_balance
        views.append(
            {
                "login": merchant.login,
                "endpoint_ids": list(merchant.endpoint_ids),
                "endpoint_group_ids": list(merchant.endpoint_group_ids),
                "currency": merchant.currency,
                "payout_balance": str(balance),
                "rsa_public_key": merchant.rsa_public_key is not None,
            }
        )
    return views


def reset(app: HasState, engine: Engine) -> None:
    """Everything back to the start: one transaction, then the journal and the clock offset."""
    with engine.store.transaction():
        engine.store.reset()
        delivery.worker(app).forget()
        engine.seed_merchants()
    app.state.journal.clear()
    engine.clock.reset()


def force_status(engine: Engine, values: Values) -> Row:
    """The order's latest transaction forced (found under the store's write lock: ``Engine.force_latest``); 409 when
    the order's money or what followed refuses it."""
    order = find_order(engine, values["orderid"])
    try:
        return engine.force_latest(order["id"], values["status"], values["error_code"], values["error_message"])
    except SimError as exc:
        raise ControlError("status", exc.message, http_status=409) from None


def settle(engine: Engine, key: int | None) -> int:
    if key is None:
        return engine.settle()
    tx = find_tx(engine, key)
    if tx["status"] != "approved":
        raise ControlError("orderid", f"{tx['orderid']} is {tx['status']}; only approved transactions settle")
    return engine.settle(tx["orderid"])


def add_fault(engine: Engine, values: Values) -> Row:
    plan = faults.FaultPlan(values["target"], values["kind"], values["count"], values["seconds"])
    try:
        return faults.add(engine.store, plan, engine.clock.now())
    except faults.FaultError as exc:
        raise ControlError(exc.field, exc.reason) from None


def fault_rule(values: Values) -> list[ControlError]:
    """What makes no sense in a fault plan as a whole (a kind for another target, seconds for no delay)."""
    plan = faults.FaultPlan(values["target"], values["kind"], values["count"], values["seconds"])
    return [ControlError(problem.field, problem.reason) for problem in plan.problems()]


def wait_rule(values: Values) -> list[ControlError]:
    if values["attempts"] is not None and values["orderid"] is None:
        return [ControlError("orderid", "is required to wait for attempts")]
    return []


def callbacks(app: HasState, values: Values) -> dict[str, Any]:
    """The delivery log; with ``attempts`` (and an ``orderid``), first wait until that many are logged."""
    worker = delivery.worker(app)
    key, wanted = values["orderid"], values["attempts"]
    reached = True if wanted is None else worker.wait_for_attempts(key, wanted, values["timeout"])
    return {"callbacks": worker.deliveries(key), "timed_out": not reached}


def resend(app: HasState, engine: Engine, key: int) -> dict[str, Any]:
    """The order's latest callback to each address queued again; 409 when the order sent none."""
    find_order(engine, key)
    worker = delivery.worker(app)
    ids = worker.resend(key)
    if not ids:
        raise ControlError("orderid", f"order {key} has sent no callback yet (no final status, or no "
                           "server_callback_url or notify_url)", http_status=409)  # fmt: skip
    return {"resent": [view for view in worker.deliveries(key) if view["id"] in ids]}


def advance(engine: Engine, seconds: float) -> None:
    """Move the clock, then do what fell due."""
    try:
        engine.clock.advance(seconds)
    except ClockLimit as exc:
        raise ControlError("seconds", str(exc)) from None
    catch_up(engine)


def catch_up(engine: Engine, limit: int = 1000) -> None:
    """Do what the advanced clock made due before answering (the scheduler would, a moment later).

    A long jump may cover several periods of a subscription: tick until nothing is due now.
    """
    for _ in range(limit):
        due = engine.tick()
        if due is None or due > engine.clock.now():
            return


def health(engine: Engine) -> dict[str, Any]:
    return {
        "status": "ok",
        "version": __version__,
        "now": engine.clock.now(),
        "transactions": order_rows.count(engine.store),
        "callbacks_pending": callback_rows.waiting(engine.store),
        "faults": fault_rows.count_active(engine.store),
        "latency": engine.settings.latency,
        "process": engine.process,  # which process answered (gatekit simulate --workers: one of several)
        "scheduler": engine.scheduling(),  # whether it holds the scheduler's lease (does the timed work)
    }


async def unanswered(request: Request, exc: Exception) -> JSONResponse:
    """A control call while the store does not answer (``StoreUnavailable``): a 503 in the control API's form."""
    return JSONResponse(ControlError("store", f"{exc}; try again", http_status=503).body(), status_code=503)


async def refused(request: Request, exc: Exception) -> JSONResponse:
    """A refused control call (``ControlError``): its status, ``{"error": "<field>: <why>", "field": ...}``."""
    error = exc if isinstance(exc, ControlError) else ControlError("request", str(exc))
    return JSONResponse(error.body(), status_code=error.http_status)


async def quick(request: Request, function: Callable[..., T], *args: Any) -> T:
    """A control call in the control API's own threads (never the event loop, never the gateway's)."""
    return await pools.run(pools.of(request).control, function, *args)


# --- the views: (request, engine, the arguments read) -> the JSON answer ----------------------------------------

Answer = dict[str, Any]


async def get_index(request: Request, engine: Engine, values: Values) -> Answer:
    return controlapi.index(ROUTES)


async def get_openapi(request: Request, engine: Engine, values: Values) -> Answer:
    return controlapi.openapi_document(ROUTES, gateway.public_base(request).removesuffix(urls.PAGE_ROOT))


async def post_reset(request: Request, engine: Engine, values: Values) -> Answer:
    await quick(request, reset, request.app, engine)
    return {"reset": True, "clock": clock_view(engine)}


async def get_journal(request: Request, engine: Engine, values: Values) -> Answer:
    journal = request.app.state.journal
    login, limit = values["login"] or None, values["limit"]
    return {"entries": await quick(request, lambda: journal.entries(login=login, limit=limit))}


async def get_transaction(request: Request, engine: Engine, values: Values) -> Answer:
    return await quick(request, lambda: transaction_view(engine, find_tx(engine, values["orderid"])))


async def post_status(request: Request, engine: Engine, values: Values) -> Answer:
    return await quick(request, lambda: transaction_view(engine, force_status(engine, values)))


async def get_order(request: Request, engine: Engine, values: Values) -> Answer:
    return await quick(request, lambda: order_view(engine, find_order(engine, values["orderid"])))


async def post_chargeback(request: Request, engine: Engine, values: Values) -> Answer:
    def charged_back() -> Answer:
        return transaction_view(engine, chargeback(engine, find_order(engine, values["orderid"]), values["amount"]))

    return await quick(request, charged_back)


async def get_callbacks(request: Request, engine: Engine, values: Values) -> Answer:
    if values["attempts"] is None:
        return await quick(request, callbacks, request.app, values)
    waits = pools.of(request).waits
    if waits.available_tokens < 1:  # long-polls have their own threads; beyond them, refuse
        raise ControlError("attempts", f"{waits.total_tokens:g} requests wait already; try again", http_status=503)
    return await pools.run(waits, callbacks, request.app, values)


async def post_resend(request: Request, engine: Engine, values: Values) -> Answer:
    return await quick(request, resend, request.app, engine, values["orderid"])


async def get_clock(request: Request, engine: Engine, values: Values) -> Answer:
    return clock_view(engine)


async def post_advance(request: Request, engine: Engine, values: Values) -> Answer:
    await quick(request, advance, engine, values["seconds"])
    return {**clock_view(engine), "advanced": values["seconds"]}


async def post_settle(request: Request, engine: Engine, values: Values) -> Answer:
    return {"settled": await quick(request, settle, engine, values["orderid"])}


async def post_fault(request: Request, engine: Engine, values: Values) -> Answer:
    return await quick(request, add_fault, engine, values)


async def get_faults(request: Request, engine: Engine, values: Values) -> Answer:
    return {"faults": await quick(request, faults.active, engine.store)}


async def delete_faults(request: Request, engine: Engine, values: Values) -> Answer:
    return {"cleared": await quick(request, faults.clear, engine.store)}


async def get_merchants(request: Request, engine: Engine, values: Values) -> Answer:
    return {"merchants": await quick(request, merchants_view, engine)}


async def get_health(request: Request, engine: Engine, values: Values) -> Answer:
    return await quick(request, health, engine)


# --- THE table of routes -------------------------------------------------------------------------------------

ORDERID = Arg("orderid", "orderid", "the order's id (paynet-order-id; the id of its first transaction)", "path", True)
FAULT_TARGETS = (*OPERATIONS, faults.ANY_OPERATION, faults.CALLBACK)
ROUTES: tuple[ControlRoute, ...] = (
    ControlRoute("GET", "/", get_index, "the routes of the control API, their arguments and what each takes",
                 "{name, version, openapi, refused, routes: [{method, path, summary, answer, arguments, refusals}]}"),
    ControlRoute("GET", controlapi.OPENAPI_PATH, get_openapi, "this API as an OpenAPI 3.1 document",
                 "the OpenAPI document"),
    ControlRoute("POST", "/reset", post_reset, "forget everything: orders, journal, callbacks, faults, nonces; "
                 "balances as configured; clock offset 0", "{reset: true, clock}"),
    ControlRoute("GET", "/journal", get_journal, "the requests served, masked, with their conformance warnings",
                 "{entries: [...]}, oldest first", (
                     Arg("login", "text", "only this merchant's requests", "query", default=""),
                     Arg("limit", "integer", "at most this many, the latest", "query", default=500, minimum=1,
                         maximum=100_000),
                 )),
    ControlRoute("GET", "/transactions/{orderid}", get_transaction, "the order's latest transaction (no PAN kept)",
                 "the transaction", (ORDERID,), refusals=(404,)),
    ControlRoute("POST", "/transactions/{orderid}/status", post_status, "force the status of the order's latest "
                 "transaction; a final one sends its callback", "the transaction as forced", (
                     ORDERID,
                     Arg("status", "text", "the status to force", required=True, choices=FORCEABLE),
                     Arg("error_code", "text", "the error code the status carries", default=""),
                     Arg("error_message", "text", "the error message the status carries", default=""),
                 ), refusals=(404, 409)),
    ControlRoute("GET", "/orders/{orderid}", get_order, "the order and every transaction of it, oldest first",
                 "{orderid, client_orderid, transactions}", (ORDERID,), refusals=(404,)),
    ControlRoute("POST", "/orders/{orderid}/chargeback", post_chargeback, "the issuer takes back (part of) the "
                 "charge: an approved chargeback, called back to the order's notify_url", "the chargeback", (
                     ORDERID,
                     Arg("amount", "amount", "how much (default: everything still charged)"),
                 ), refusals=(404, 409)),
    ControlRoute("GET", "/callbacks", get_callbacks, "the callback deliveries with their attempts; with attempts, "
                 "wait until the order has that many logged", "{callbacks: [...], timed_out}", (
                     Arg("orderid", "orderid", "only this order's deliveries", "query"),
                     Arg("attempts", "integer", "wait until the order has this many attempts logged", "query",
                         minimum=1, maximum=MAX_ATTEMPTS),
                     Arg("timeout", "number", "seconds to wait for them", "query", default=10.0, maximum=MAX_WAIT),
                 ), refusals=(503,), rule=wait_rule),
    ControlRoute("POST", "/callbacks/{orderid}/resend", post_resend, "send the order's latest callback to each of "
                 "its addresses again, as it was signed", "{resent: [deliveries]}", (ORDERID,), refusals=(404, 409)),
    ControlRoute("GET", "/clock", get_clock, "the simulator's time and offset", "{now, iso, offset}"),
    ControlRoute("POST", "/clock/advance", post_advance, "move the simulator's clock; what falls due (settlement, "
                 "retries, deadlines, recurring charges) is done before the answer", "{now, iso, offset, advanced}", (
                     Arg("seconds", "number", "how far", required=True, maximum=MAX_ADVANCE),
                 )),
    ControlRoute("POST", "/settle", post_settle, "settle one order's approved transaction now, or every one due",
                 "{settled: N}", (Arg("orderid", "orderid", "the order (default: every one due)"),),
                 refusals=(404,)),
    ControlRoute("POST", "/faults", post_fault, "plan a fault: the next count calls of an operation, or callbacks, "
                 "go wrong on purpose", "the plan", (
                     Arg("target", "text", "an operation, * (any) or callback", required=True, choices=FAULT_TARGETS,
                         valid_text="an operation of the catalogue (GET /paynet/openapi.json), '*' (any operation) "
                         "or 'callback'"),
                     Arg("kind", "text", "error, delay or drop for operations; fail or duplicate for callbacks",
                         required=True, choices=(*faults.OPERATION_KINDS, *faults.CALLBACK_KINDS)),
                     Arg("count", "integer", "how many calls or callbacks", default=1, minimum=1,
                         maximum=faults.MAX_COUNT),
                     Arg("seconds", "number", "the delay (kind delay only)", default=0.0, maximum=faults.MAX_DELAY),
                 ), status=201, rule=fault_rule),
    ControlRoute("GET", "/faults", get_faults, "the fault plans still active", "{faults: [...]}"),
    ControlRoute("DELETE", "/faults", delete_faults, "forget every fault plan", "{cleared: N}"),
    ControlRoute("GET", "/merchants", get_merchants, "logins, endpoints and payout balances (never control keys)",
                 "{merchants: [...]}"),
    ControlRoute("GET", "/health", get_health, "liveness and counts", "{status, version, now, transactions, ...}"),
)  # fmt: skip


def routes(engine: Engine) -> list[BaseRoute]:
    """The starlette routes of ``ROUTES`` (an endpoint reads its arguments, then calls its view), and one more that
    answers any other path under the prefix: 404 or 405 in the control API's form."""
    built: list[Route] = [_route(route, engine) for route in ROUTES]

    async def no_route(request: Request) -> JSONResponse:
        path, method = request.url.path[:100], request.method  # (a path of 5000 digits is not said back whole)
        methods = [r.methods for r in built if r.matches(request.scope)[0] is Match.PARTIAL]
        if methods:
            takes = " or ".join(sorted({f"{m} {path}" for found in methods for m in found or () if m != "HEAD"}))
            error = ControlError("method", f"{method} {path} is not a route of the control API; {takes} is",
                                 http_status=405)  # fmt: skip
        else:
            error = ControlError("path", f"{path} is not a route of the control API; GET {PREFIX}/ lists them",
                                 http_status=404)  # fmt: skip
        return JSONResponse(error.body(), status_code=error.http_status)

    index = Route(PREFIX, built[0].endpoint, methods=["GET"])  # (``/_sim`` as well as ``/_sim/``)
    return [*built, index, Route(PREFIX + "/{rest:path}", no_route, methods=ALL_METHODS)]


def _route(route: ControlRoute, engine: Engine) -> Route:
    async def endpoint(request: Request) -> JSONResponse:
        try:
            values = await read_arguments(request, route.label, route.args, route.rule)
            return JSONResponse(await route.view(request, engine, values), status_code=route.status)
        except ControlError as exc:
            exc.route = exc.route or route.label
            raise

    endpoint.__name__ = route.name  # (the request log names the route by it)
    return Route(PREFIX + route.path, endpoint, methods=[route.method])
