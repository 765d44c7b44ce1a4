"""Plans made once per kind of request: an operation and the names a request sends, reused after.

The simulator and the client check the same kinds of requests again and again (a sale with the same
fields, a status): what depends on the names alone (which fields are missing, unknown, which formats to
check) is worked out once and kept here.  A cache holds at most ``size`` plans; past that (a fuzzer
sending new names each time) it starts again.  A request with more than ``MAX_NAMES`` names is planned
on its own and not kept (a hostile form: its names are not worth keeping).

    PLANS = PlanCache(make_plan)          # make_plan(operation, names, *options) -> plan
    plan = PLANS.get(operation, names, strict)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from toolkit.operations import Operation

P = TypeVar("P")
MAX_NAMES = 64  # names of a request whose plan is kept (the catalogue's largest operation has fewer)


class PlanCache(Generic[P]):
    """``make(operation, names, *options)``, kept per operation (by identity), names and options."""

    def __init__(self, make: Callable[..., P], size: int = 1024) -> None:
        self._make = make
        self._size = size
        self._plans: dict[tuple[Hashable, ...], tuple[Operation, P]] = {}

    def get(self, operation: Operation, names: tuple[str, ...], *options: Hashable) -> P:
        if len(names) > MAX_NAMES:
            return self._make(operation, names, *options)
        key = (id(operation), names, *options)
        found = self._plans.get(key)
        if found is not None:  # (the entry keeps its operation alive: no other can take its id meanwhile)
            return found[1]
        plan = self._make(operation, names, *options)
        if len(self._plans) >= self._size:
            self._plans.clear()
        self._plans[key] = (operation, plan)
        return plan
