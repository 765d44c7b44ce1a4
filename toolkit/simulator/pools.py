"""Worker threads, one pool per kind of traffic, so that no kind can starve another.

The event loop only moves bytes: parsing, checks, the engine and SQLite run in threads.  Each
kind of request has its own capacity: gateway operations, the payer's pages, quick control calls,
and control long-polls (``/_sim/callbacks?attempts=``), which wait for seconds and would otherwise
hold the threads that a hosted payment page needs.  A long-poll beyond ``WAITS`` is refused (503).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ParamSpec, TypeVar

import anyio
from anyio import CapacityLimiter
from starlette.requests import Request

GATEWAY = 16
PAGES = 16
CONTROL = 8
WAITS = 64

P = ParamSpec("P")
T = TypeVar("T")


@dataclass
class Pools:
    gateway: CapacityLimiter = field(default_factory=lambda: CapacityLimiter(GATEWAY))
    pages: CapacityLimiter = field(default_factory=lambda: CapacityLimiter(PAGES))
    control: CapacityLimiter = field(default_factory=lambda: CapacityLimiter(CONTROL))
    waits: CapacityLimiter = field(default_factory=lambda: CapacityLimiter(WAITS))


def of(request: Request) -> Pools:
    pools: Pools = request.app.state.pools
    return pools


async def run(limiter: CapacityLimiter, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``function(*args, **kwargs)`` in a thread of ``limiter``'s pool."""
    return await anyio.to_thread.run_sync(functools.partial(function, *args, **kwargs), limiter=limiter)
