"""The background worker that does what is due on the simulator's clock.

It sleeps on a condition until the next due time (or until woken: a new delayed decision, a
callback to deliver, an advanced clock), then calls ``Engine.tick``.  No polling loop in one process.

When processes share the store (``gatekit simulate --workers N``, several simulators on one ``--db``), exactly
one of them does the timed work: the one that holds the ``scheduler`` lease in the store (``LEASE_TTL``
seconds, renewed every ``RENEW`` seconds; another process takes it over when its holder stops renewing: it
died, or stopped).  The holder cannot be woken by the others, so it also reads when something is next due
every ``SHARED_POLL`` seconds (a read, no write: the tick's write transaction is taken only when something is
due).  What a request needs at once (a decision or deadline that is due, read by ``status``) is done by the
process that answers it (``Engine.current``), whichever it is.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable

from toolkit.simulator.rules.engine import Engine
from toolkit.simulator.storage import StoreUnavailable

log = logging.getLogger("gatekit.simulator")

LEASE = "scheduler"
LEASE_TTL = 5.0  # seconds a lease holds without renewal (wall time)
RENEW = 1.0  # seconds between renewals, and between a waiting process's attempts to take the lease
SHARED_POLL = 0.05  # seconds between the holder's reads of what is due, when other processes share the store


class Scheduler:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._woken = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.engine: Engine | None = None
        self.holds_lease = False
        self._renewed = float("-inf")  # (monotonic) when the lease was last taken or renewed
        self.on_take_over: list[Callable[[str], object]] = []  # run with this process's id when it takes the lease

    def wake(self) -> None:
        with self._cond:
            self._woken = True
            self._cond.notify()

    def start(self, engine: Engine) -> None:
        self.engine = engine
        engine.scheduling = lambda: self.holds_lease
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="gatekit-scheduler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(timeout=5)
        engine = self.engine
        if engine is not None and self.holds_lease and engine.store.shared:
            try:  # another process takes the timed work over at once, not after the lease runs out
                engine.store.drop_lease(LEASE, engine.process)
            except Exception:  # (a store already closed)
                log.debug("could not give the scheduler lease back", exc_info=True)
        self.holds_lease = False

    def _hold(self, engine: Engine) -> bool:
        """Whether this process does the timed work now (taking or renewing the lease when it is time)."""
        if not engine.store.shared:
            held = True
        elif self.holds_lease and time.monotonic() - self._renewed < RENEW:
            return True
        else:
            held = engine.store.hold_lease(LEASE, engine.process, time.time(), LEASE_TTL)
            if not held and (gone := _gone_holder(engine.store.lease_holder(LEASE))):
                held = engine.store.hold_lease(LEASE, engine.process, time.time(), LEASE_TTL, replacing=gone)
            if held:
                self._renewed = time.monotonic()
        if held and not self.holds_lease:
            self.holds_lease = True
            for take_over in self.on_take_over:
                take_over(engine.process)
        self.holds_lease = held
        return held

    def _run(self) -> None:
        engine = self.engine
        assert engine is not None
        while True:
            timeout: float | None
            try:
                if self._hold(engine):
                    due = engine.next_due() if engine.store.shared and not self._woken else 0.0
                    if due is not None and due <= engine.clock.now():
                        due = engine.tick()
                    timeout = None if due is None else max(0.001, due - engine.clock.now())
                    if engine.store.shared:
                        timeout = min(timeout if timeout is not None else SHARED_POLL, SHARED_POLL, RENEW)
                else:
                    timeout = RENEW
            except StoreUnavailable:  # (the store said so once: not a traceback per tick)
                timeout = RENEW
            except Exception:  # keep the worker alive; the failure is in the log
                log.exception("scheduler tick failed")
                timeout = RENEW
            with self._cond:
                if self._stopping:
                    return
                if not self._woken:
                    self._cond.wait(timeout)
                self._woken = False
                if self._stopping:
                    return


def _gone_holder(row: dict[str, object] | None) -> str:
    """The lease's holder when it is a process of this machine that no longer runs (killed: no need to wait for
    its lease to run out), else ""."""
    holder = str(row["holder"]) if row else ""
    host, _, rest = holder.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return ""
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return holder
    except PermissionError:  # alive, another user's
        return ""
    return ""
