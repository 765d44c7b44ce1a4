"""Waiting for asynchronous outcomes: poll ``status`` on a schedule, with a deadline.

The schedule comes from the profile (fast for the simulator; the gateway's advice, every few
seconds, for a sandbox).  A ``Waker`` (the callback receiver) ends a wait between two polls as
soon as a callback for the order arrives, so polling stops when the callback has come.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from toolkit.config import PollSchedule
from toolkit.errors import ServerError, TransportError, WaitTimeout
from toolkit.models import Status, StatusResponse

S = TypeVar("S", bound=StatusResponse)  # the status answer polled: ``status``'s, or ``status_v4``'s (Hosted Fields)


class Waker(Protocol):
    """Something that can end the wait between two polls early (True when it did)."""

    def wait(self, timeout: float) -> bool: ...


@dataclass(frozen=True)
class PollAttempt:
    """One status poll: when, what it said, and whether a callback woke it."""

    number: int
    elapsed: float
    status: Status | None
    response: StatusResponse | None
    error: str | None = None
    woken: bool = False

    def __str__(self) -> str:
        said = self.status.value if self.status else f"error: {self.error}"
        return f"poll {self.number} at {self.elapsed:.3f}s: {said}{' (woken by callback)' if self.woken else ''}"


def payer_hint(response: StatusResponse | None) -> str:
    """What a status still waiting for the payer asks (3-D Secure, a hosted page): the order waits for them."""
    if response is None or not response.needs_payer:
        return ""
    carries = f"redirect-to {response.redirect_to}" if response.redirect_to else "html"
    return (
        f"; the payer must act: the status carries {carries} for the payer's browser (3-D Secure) and the "
        "order waits for them: follow it (toolkit.payer.Payer.follow) as in the README's 3-D Secure example"
    )


def _idle() -> Waker:
    return threading.Event()  # nobody sets it: waits the whole delay


def wait_for_status(
    poll: Callable[[], S],
    schedule: PollSchedule,
    *,
    until: Callable[[S], bool],
    waker: Waker | None = None,
    on_attempt: Callable[[PollAttempt], None] | None = None,
    describe: str = "order",
    awaiting: str = "final status",
    clock: Callable[[], float] = time.monotonic,
    operation: str = "status",
) -> S:
    """Poll until ``until(response)`` holds; WaitTimeout with every attempt after the deadline.

    ``awaiting`` names what ``until`` waits for, in the timeout's message ("no {awaiting} within ...");
    ``operation`` the status operation polled (``status``, or ``status_v4`` for a Hosted Fields order).

    Transport errors and 500s during the wait are reported as attempts and polled through.
    """
    wake = waker or _idle()
    start = clock()
    delays = schedule.delays()
    attempts: list[PollAttempt] = []
    woken = False
    while True:
        response: S | None = None
        error: str | None = None
        try:
            response = poll()
        except (TransportError, ServerError) as exc:
            error = str(exc)
        attempt = PollAttempt(
            len(attempts) + 1, clock() - start, response.status if response else None, response, error, woken
        )
        attempts.append(attempt)
        if on_attempt:
            on_attempt(attempt)
        if response is not None and until(response):
            return response
        remaining = schedule.deadline - (clock() - start)
        if remaining <= 0:
            last = attempts[-1]
            raise WaitTimeout(
                f"{describe}: no {awaiting} within {schedule.deadline:g}s after {len(attempts)} polls "
                f"(last: {last.status.value if last.status else last.error}){payer_hint(last.response)}",
                operation=operation,
                attempts=attempts,
            )
        woken = wake.wait(min(next(delays), remaining))
        if woken:  # the callback came: confirm with one poll, then never spin on a set waker
            wake = _idle()
