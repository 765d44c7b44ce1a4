"""Fault plans: the next N gateway calls or callbacks go wrong on purpose (stored in the ``faults`` table).

=========================  =========================================================================
target                     kinds
=========================  =========================================================================
an operation (``sale``)    ``error``: HTTP 500, ``type=error``, ``error-message`` "injected fault ..."
or ``*`` (any operation)   ``delay``: the answer comes ``seconds`` later (a real wait, by design)
                           ``drop``: the connection closes without an HTTP answer (a transport error)
``callback``               ``fail``: the attempt is not sent and counts as failed, so a retry follows
                           ``duplicate``: the callback is delivered twice
=========================  =========================================================================

Plans are used up oldest first; each matching call or callback takes one from ``remaining``.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.types import Scope, Send

from toolkit.operations import OPERATIONS, Operation
from toolkit.simulator.rules.errors import server_error
from toolkit.simulator.storage import Row, Store, fault_rows

log = logging.getLogger("gatekit.simulator")

ANY_OPERATION = "*"
CALLBACK = "callback"
OPERATION_KINDS = ("error", "delay", "drop")
CALLBACK_KINDS = ("fail", "duplicate")
MAX_COUNT = 10_000
MAX_DELAY = 600.0
_DROP = "gatekit.drop"  # scope flag: the middleware closes this request's connection instead of answering
HOLD = "gatekit.hold"  # scope flag: the answer is held ``shaping.TIMEOUT_HOLD`` seconds (a ``timeout`` fault)

# Finds the asyncio transport of a client address (``scope["client"]``); SimulatorServer provides one.
TransportFinder = Callable[[tuple[str, int]], asyncio.BaseTransport | None]


class FaultError(ValueError):
    """A fault plan that cannot be stored; ``field`` names the offending input, ``reason`` says why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


@dataclass(frozen=True)
class FaultPlan:
    target: str
    kind: str
    count: int = 1
    seconds: float = 0.0

    def check(self) -> FaultPlan:
        """The plan itself when it makes sense; FaultError naming the first field that does not otherwise."""
        for problem in self.problems():
            raise problem
        return self

    def problems(self) -> list[FaultError]:
        """Every reason the plan makes no sense, each naming its field (the control API names them all at once)."""
        kinds = CALLBACK_KINDS if self.target == CALLBACK else OPERATION_KINDS
        problems = []
        if self.target not in (CALLBACK, ANY_OPERATION) and self.target not in OPERATIONS:
            problems.append(FaultError("target", f"{self.target!r} is not an operation of the catalogue, '*' or "
                                       "'callback'"))  # fmt: skip
        elif self.kind not in kinds:
            problems.append(FaultError("kind", f"{self.kind!r} does not apply to target {self.target!r}; use "
                                       f"{'|'.join(kinds)}"))  # fmt: skip
        if not 1 <= self.count <= MAX_COUNT:
            problems.append(FaultError("count", f"must be between 1 and {MAX_COUNT}"))
        if self.kind == "delay" and not 0 < self.seconds <= MAX_DELAY:
            problems.append(FaultError("seconds", f"a delay needs seconds > 0 and <= {MAX_DELAY:g}"))
        if self.kind != "delay" and self.seconds:
            problems.append(FaultError("seconds", f"only a delay takes seconds, not {self.kind!r}"))
        return problems


# Stores known to hold no active plan (-> when that was seen, monotonic): the gateway's operations skip the
# look-up (a transaction per request).  Changed only under the store's lock: by ``take`` when it finds no plan
# left, by ``add`` before it stores one.  A store other processes share may get a plan from them: what this
# process saw holds for ``SHARED_QUIET`` seconds, and ``add`` returns only after that long (so once the control
# call that added a plan has answered, every process looks again).
_quiet: weakref.WeakKeyDictionary[Store, float] = weakref.WeakKeyDictionary()
SHARED_QUIET = 0.02


def add(store: Store, plan: FaultPlan, now: float) -> Row:
    plan.check()
    with store.transaction():
        _quiet.pop(store, None)
        row = fault_rows.add(
            store,
            {
                "target": plan.target,
                "kind": plan.kind,
                "remaining": plan.count,
                "seconds": plan.seconds,
                "created_at": now,
            },
        )
    assert row is not None
    if store.shared:
        time.sleep(SHARED_QUIET)  # the other processes' "no plan" grows stale meanwhile
    return row


def active(store: Store) -> list[Row]:
    return fault_rows.active(store)


def clear(store: Store) -> int:
    with store.transaction():
        return fault_rows.clear(store)


def take(store: Store, *targets: str) -> Row | None:
    """Use up one call of the oldest plan for any of ``targets``; the plan as it was, or None."""
    seen = _quiet.get(store)
    if seen is not None and (not store.shared or time.monotonic() - seen < SHARED_QUIET):
        return None
    if store.shared and not fault_rows.any_active(store):
        _quiet[store] = time.monotonic()  # (a read: no write lock taken for nothing, other processes write on)
        return None
    with store.transaction():
        row = fault_rows.oldest_for(store, targets)
        if row is None:
            if not fault_rows.any_active(store):
                _quiet[store] = time.monotonic()
            return None
        fault_rows.use_one(store, row)
    return row


def take_callback_fault(store: Store) -> str:
    """``fail``, ``duplicate`` or ``""`` for the callback about to be sent."""
    row = take(store, CALLBACK)
    return str(row["kind"]) if row else ""


def _describe(row: Row, op: Operation) -> str:
    left = row["remaining"] - 1
    return f"injected fault: {row['kind']} on {op.name} (fault plan {row['id']}, {left} more to come)"


def operation_hook(request: Request, op: Operation) -> float:
    """``app.state.fault_hook``, called in a gateway thread before every operation: the seconds to delay
    the answer (0 for none), or the injected error (a ``drop`` marks the request for the front door to drop)."""
    shaped = request.app.state.settings.fault_rate.draw()  # the fault_rate setting: a share of all requests
    if shaped in ("error", "drop"):
        described = f"injected fault: {shaped} on {op.name} (fault_rate)"
        if shaped == "drop":
            request.scope[_DROP] = True
        raise server_error(described)
    if shaped == "timeout":
        request.scope[HOLD] = True  # answered, then held (``gateway.respond``): the client gives up first
    store: Store = request.app.state.store
    row = take(store, op.name, ANY_OPERATION)
    if row is None:
        return 0.0
    described = _describe(row, op)
    log.info("%s", described)
    if row["kind"] == "delay":
        return float(row["seconds"])
    if row["kind"] == "drop":
        request.scope[_DROP] = True  # the front door closes the connection instead of sending this 500
    raise server_error(described)


def marked_for_drop(scope: Scope) -> bool:
    """The fault hook marked this request ``drop``: its answer must become a closed connection."""
    return bool(scope.get(_DROP))


async def drop_connection(scope: Scope, send: Send, finder: TransportFinder | None) -> None:
    """What the front door (``web.front``) does instead of answering a request marked ``drop``.

    ASGI has no "abort": with a ``TransportFinder`` (in-process ``SimulatorServer``) the
    connection is closed before a single byte is written (the client sees "remote end closed
    connection without response").  Without one, the answer's head promises a body of 1 MiB and
    the app returns after a few bytes: uvicorn closes the connection ("ASGI callable returned
    without completing response") and the client sees a truncated, broken response."""
    client = scope.get("client")
    transport = finder((client[0], client[1])) if finder is not None and client else None
    if transport is not None:
        transport.close()
        await asyncio.sleep(0)  # let the server see the connection go; what the app sends next is discarded
        return
    head: list[tuple[bytes, bytes]] = [(b"content-type", b"text/plain"), (b"content-length", b"1048576")]
    await send({"type": "http.response.start", "status": 200, "headers": head})
    await send({"type": "http.response.body", "body": b"injected fault: drop", "more_body": True})


def install_state(state: Any) -> None:
    """The operation hook on ``state`` (``app.state``); ``SimulatorServer`` sets the transport finder."""
    state.fault_hook = operation_hook
    state.transport_finder = None  # SimulatorServer sets one (uvicorn's connections by client address)
