"""The background worker that does what is due on the simulator's clock.

It sleeps on a condition until the next due time (or until woken: a new delayed decision, a
callback to deliver, an advanced clock), then calls ``Engine.tick``.  No polling loop.
"""

from __future__ import annotations

import logging
import threading

from toolkit.simulator.engine import Engine

log = logging.getLogger("gatekit.simulator")


class Scheduler:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._woken = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.engine: Engine | None = None

    def wake(self) -> None:
        with self._cond:
            self._woken = True
            self._cond.notify()

    def start(self, engine: Engine) -> None:
        self.engine = engine
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="gatekit-scheduler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        engine = self.engine
        assert engine is not None
        while True:
            try:
                due = engine.tick()
            except Exception:  # keep the worker alive; the failure is in the log
                log.exception("scheduler tick failed")
                due = None
            with self._cond:
                if self._stopping:
                    return
                if not self._woken:
                    timeout = None if due is None else max(0.001, due - engine.clock.now())
                    self._cond.wait(timeout)
                self._woken = False
                if self._stopping:
                    return
