"""The control API under ``/_sim/``: JSON in and out, for tests and notebooks; not part of the gateway.

=======================================  ==========================================================
POST   /_sim/reset                       forget everything; balances as configured; clock offset 0
GET    /_sim/journal?login=&limit=       masked requests with their conformance warnings
GET    /_sim/transactions/{orderid}      the order's latest transaction (the store keeps no PAN)
POST   /_sim/transactions/{orderid}/status  {"status", "error_code", "error_message"}: force the status
                                         of the order's latest transaction; 409 when the order's money
                                         or what followed refuses it (``Engine.force_status``)
GET    /_sim/orders/{orderid}            the order and every transaction of it, oldest first
POST   /_sim/orders/{orderid}/chargeback {"amount": optional}: the issuer takes back (part of) the
                                         charge; approved at once, called back as type=chargeback
GET    /_sim/callbacks?orderid=          deliveries with their attempts; ``&attempts=N&timeout=S``
                                         waits until the order has N logged attempts
GET    /_sim/clock                       the simulator's time and offset
POST   /_sim/clock/advance               {"seconds": N}: what falls due is done before the answer
POST   /_sim/settle                      {"orderid": optional}: settle one, or all that are due
POST   /_sim/faults                      {"target", "kind", "count", "seconds"} (``faults``)
GET    /_sim/faults, DELETE /_sim/faults plans still active; forget them all
GET    /_sim/merchants                   logins, endpoints, payout balances (never control keys)
GET    /_sim/health                      liveness and counts
=======================================  ==========================================================

Bad input answers 400 ``{"error": "<field>: <why>", "field": "<field>"}``; an unknown orderid 404; a change the
order's state refuses 409.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from toolkit._version import __version__
from toolkit.masking import mask_text
from toolkit.models import Status
from toolkit.money import MoneyError, from_minor_units
from toolkit.simulator import delivery, faults, pools
from toolkit.simulator.clock import ClockLimit
from toolkit.simulator.rules import followups
from toolkit.simulator.rules.engine import Engine
from toolkit.simulator.rules.errors import SimError
from toolkit.simulator.storage import Row, account_rows, callback_rows, fault_rows, loads, order_rows
from toolkit.simulator.web.controlargs import ControlError, integer, json_body, number, orderid, text

if TYPE_CHECKING:
    from toolkit.simulator.state import HasState

T = TypeVar("T")
PREFIX = "/_sim"
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


def path_key(request: Request) -> str:
    """The ``{key}`` of a route's path (an orderid or a client_orderid)."""
    return str(request.path_params["key"])


def find_order(engine: Engine, raw: Any) -> Row:
    """The initial transaction of order ``raw`` (404 when there is none)."""
    key = orderid(raw)
    row = order_rows.order(engine.store, key)
    if row is None:
        raise ControlError("orderid", f"{key} is unknown", http_status=404)
    return row


def find_tx(engine: Engine, raw: Any) -> Row:
    """The latest transaction of order ``raw``."""
    return engine.latest(find_order(engine, raw))


def order_view(engine: Engine, order: Row) -> dict[str, Any]:
    return {
        "orderid": str(order["orderid"]),
        "client_orderid": mask_text(order["client_orderid"]),
        "transactions": [transaction_view(engine, tx) for tx in engine.transactions_of(order)],
    }


def chargeback(engine: Engine, order: Row, data: dict[str, Any]) -> Row:
    amount = data.get("amount")
    if amount is not None and (not isinstance(amount, str) or not amount.strip()):
        raise ControlError("amount", f'must be an amount as a string, e.g. "2.50", not {amount!r}')
    try:
        return followups.chargeback(engine, order["id"], amount.strip() if amount else None)
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


def force_status(engine: Engine, order: Row, data: dict[str, Any]) -> Row:
    """The order's latest transaction forced (found under the store's write lock: ``Engine.force_latest``)."""
    status = text(data, "status", choices=FORCEABLE)
    code = text(data, "error_code", default="")
    message = text(data, "error_message", default="")
    return engine.force_latest(order["id"], status, code, message)


def settle(engine: Engine, data: dict[str, Any]) -> int:
    if data.get("orderid") in (None, ""):
        return engine.settle()
    tx = find_tx(engine, data["orderid"])
    if tx["status"] != "approved":
        raise ControlError("orderid", f"{tx['orderid']} is {tx['status']}; only approved transactions settle")
    return engine.settle(tx["orderid"])


def add_fault(engine: Engine, data: dict[str, Any]) -> Row:
    plan = faults.FaultPlan(
        target=text(data, "target"),
        kind=text(data, "kind"),
        count=integer(data, "count", default=1, minimum=1, maximum=faults.MAX_COUNT),
        seconds=number(data, "seconds", default=0.0, maximum=faults.MAX_DELAY),
    )
    try:
        return faults.add(engine.store, plan, engine.clock.now())
    except faults.FaultError as exc:
        raise ControlError(exc.field, exc.reason) from None


def callbacks(app: HasState, query: dict[str, str]) -> dict[str, Any]:
    """The delivery log; with ``attempts`` (and an ``orderid``), first wait until that many are logged."""
    worker = delivery.worker(app)
    key = orderid(query["orderid"]) if query.get("orderid") else None
    reached = True
    if "attempts" in query:
        if key is None:
            raise ControlError("orderid", "is required to wait for attempts")
        wanted = integer(query, "attempts", minimum=1, maximum=MAX_ATTEMPTS)
        reached = worker.wait_for_attempts(key, wanted, number(query, "timeout", default=10.0, maximum=MAX_WAIT))
    return {"callbacks": worker.deliveries(key), "timed_out": not reached}


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
    return JSONResponse({"error": f"store: {exc}; try again", "field": "store"}, status_code=503)


async def refused(request: Request, exc: Exception) -> JSONResponse:
    """A refused control call (``ControlError``): its status, ``{"error": "<field>: <why>", "field": ...}``."""
    error = exc if isinstance(exc, ControlError) else ControlError("request", str(exc))
    return JSONResponse(error.body(), status_code=error.http_status)


async def quick(request: Request, function: Callable[..., T], *args: Any) -> T:
    """A control call in the control API's own threads (never the event loop, never the gateway's)."""
    return await pools.run(pools.of(request).control, function, *args)


Answer = dict[str, Any]
View = Callable[[Request, Engine], Awaitable[Answer]]


def routes(engine: Engine) -> list[Route]:
    """The ``/_sim/`` routes: each view answers JSON (201 for a new fault plan)."""

    def route(path: str, method: str, view: View, status: int = 200) -> Route:
        async def endpoint(request: Request) -> JSONResponse:
            return JSONResponse(await view(request, engine), status_code=status)

        endpoint.__name__ = view.__name__  # (the request log names the route by it)
        return Route(PREFIX + path, endpoint, methods=[method])

    return [
        route("/reset", "POST", post_reset),
        route("/journal", "GET", get_journal),
        route("/transactions/{key}", "GET", get_transaction),
        route("/transactions/{key}/status", "POST", post_status),
        route("/orders/{key}", "GET", get_order),
        route("/orders/{key}/chargeback", "POST", post_chargeback),
        route("/callbacks", "GET", get_callbacks),
        route("/clock", "GET", get_clock),
        route("/clock/advance", "POST", post_advance),
        route("/settle", "POST", post_settle),
        route("/faults", "POST", post_fault, status=201),
        route("/faults", "GET", get_faults),
        route("/faults", "DELETE", delete_faults),
        route("/merchants", "GET", get_merchants),
        route("/health", "GET", get_health),
    ]


async def post_reset(request: Request, engine: Engine) -> Answer:
    await quick(request, reset, request.app, engine)
    return {"reset": True, "clock": clock_view(engine)}


async def get_journal(request: Request, engine: Engine) -> Answer:
    query = dict(request.query_params)
    limit = integer(query, "limit", default=500, minimum=1, maximum=100_000)
    journal = request.app.state.journal
    return {"entries": await quick(request, lambda: journal.entries(login=query.get("login") or None, limit=limit))}


async def get_transaction(request: Request, engine: Engine) -> Answer:
    key = path_key(request)
    return await quick(request, lambda: transaction_view(engine, find_tx(engine, key)))


async def post_status(request: Request, engine: Engine) -> Answer:
    key, data = path_key(request), await json_body(request)

    def forced() -> Answer:
        order = find_order(engine, key)
        try:
            return transaction_view(engine, force_status(engine, order, data))
        except SimError as exc:  # the order's state refuses it (its money, or what followed)
            raise ControlError("status", exc.message, http_status=409) from None

    return await quick(request, forced)


async def get_order(request: Request, engine: Engine) -> Answer:
    key = path_key(request)
    return await quick(request, lambda: order_view(engine, find_order(engine, key)))


async def post_chargeback(request: Request, engine: Engine) -> Answer:
    key, data = path_key(request), await json_body(request)
    return await quick(request, lambda: transaction_view(engine, chargeback(engine, find_order(engine, key), data)))


async def get_callbacks(request: Request, engine: Engine) -> Answer:
    query = dict(request.query_params)
    if "attempts" not in query:
        return await quick(request, callbacks, request.app, query)
    waits = pools.of(request).waits
    if waits.available_tokens < 1:  # long-polls have their own threads; beyond them, refuse
        raise ControlError("attempts", f"{waits.total_tokens:g} requests wait already; try again", http_status=503)
    return await pools.run(waits, callbacks, request.app, query)


async def get_clock(request: Request, engine: Engine) -> Answer:
    return clock_view(engine)


async def post_advance(request: Request, engine: Engine) -> Answer:
    seconds = number(await json_body(request), "seconds", maximum=MAX_ADVANCE)
    await quick(request, advance, engine, seconds)
    return {**clock_view(engine), "advanced": seconds}


async def post_settle(request: Request, engine: Engine) -> Answer:
    data = await json_body(request)
    return {"settled": await quick(request, settle, engine, data)}


async def post_fault(request: Request, engine: Engine) -> Answer:
    data = await json_body(request)
    return await quick(request, add_fault, engine, data)


async def get_faults(request: Request, engine: Engine) -> Answer:
    return {"faults": await quick(request, faults.active, engine.store)}


async def delete_faults(request: Request, engine: Engine) -> Answer:
    return {"cleared": await quick(request, faults.clear, engine.store)}


async def get_merchants(request: Request, engine: Engine) -> Answer:
    return {"merchants": await quick(request, merchants_view, engine)}


async def get_health(request: Request, engine: Engine) -> Answer:
    return await quick(request, health, engine)
