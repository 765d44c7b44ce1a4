"""Scenarios that move what every scenario shares on a team's simulator run alone, under ``-n``.

A team's simulator (a profile based on ``simulator`` with its own ``base_url``: a ``gatekit simulate``
that the run did not start) is one for every worker of ``gatekit certify -n 2``.  Its clock and its
fault plans are everybody's: ``1801 seconds pass on the gateway's clock`` expires the hosted form
another worker's payer is filling, ``11 seconds pass`` times out a challenge, an hour moves a
callback's retry, and ``the gateway will send the next callback twice`` doubles whichever callback
comes next.  (The embedded simulator is one per worker: nothing is shared there.)

The step definitions that do so say it (``@moves_shared_state("moves the gateway's clock")``, a
merchant's own steps too).  When a run's workers share an outside simulator, each scenario holds a
``RunLock`` while it runs: one with such a step alone, the others side by side.  A scenario that
must run alone waits for those running to end, and those that come after it wait for it (no
scenario waits for ever: the lock has a turnstile).
"""

from __future__ import annotations

import fcntl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

F = TypeVar("F", bound=Callable[..., Any])
_REASON = "gatekit_moves_shared_state"
ALONE = pytest.StashKey[str]()  # on a scenario's item: why it runs alone
WORKER_INPUT = "gatekit_run_lock"  # the folder of the run's lock files, handed to each xdist worker


def moves_shared_state(reason: str) -> Callable[[F], F]:
    """Mark a step definition that changes what every scenario on a shared simulator sees (its clock...)."""

    def mark(step: F) -> F:
        setattr(step, _REASON, reason)
        return step

    return mark


def shared_state_reason(step: Callable[..., Any]) -> str | None:
    return getattr(step, _REASON, None)


def alone_reason(item: pytest.Item) -> str | None:
    """Why a scenario must run alone: its first step whose definition moves shared state, or None."""
    from toolkit.certify import naming
    from toolkit.certify.check import phrases_for

    scenario = naming.scenario_of(item)
    if scenario is None:
        return None
    marked = [phrase for phrase in phrases_for(item) if shared_state_reason(phrase.step_func)]
    for step in scenario.steps:
        for phrase in marked:
            if (phrase.type is None or phrase.type == step.type) and phrase.parser.is_matching(step.name):
                return f'"{step.keyword.strip()} {step.name}" {shared_state_reason(phrase.step_func)}'
    return None


class RunLock:
    """A readers-writer lock over files, for the processes of one run: ``hold(alone=True)`` excludes every other
    holder, ``hold(alone=False)`` shares with those alike.  A holder passes a turnstile first, which one waiting to
    be alone keeps closed: those that come after it wait for it."""

    def __init__(self, folder: Path) -> None:
        self.turnstile = folder / "turnstile.lock"
        self.scenarios = folder / "scenarios.lock"

    @contextmanager
    def hold(self, *, alone: bool) -> Iterator[None]:
        with self.turnstile.open("a") as gate, self.scenarios.open("a") as lock:
            fcntl.flock(gate, fcntl.LOCK_EX)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
            finally:
                fcntl.flock(gate, fcntl.LOCK_UN)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
