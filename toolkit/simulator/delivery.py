"""Server callbacks (behaviour section 4): queued with the final status, sent by a small thread pool.

- A final status of a transaction with a ``callback_url`` queues one row in ``callbacks`` (a final
  hook: the same DB transaction as the status).  ``params`` are ``Engine.outcome_params``.
- Due rows are claimed by a tick hook (``state='sending'`` and a claim token in the row: ``claim``, which
  names the process) and handed to the pool, so a slow merchant never holds up the scheduler and two processes
  never send the same try.  Only the process that holds the scheduler's lease claims (``Scheduler``); when
  another process takes the lease over (its holder died), the rows left ``sending`` by others are due again.
- Delivery is at least once, as the gateway's (behaviour section 4: "callbacks can arrive more than once;
  merchants de-duplicate on (orderid, type, status)"): a process killed between sending a callback and logging
  its answer leaves the row ``sending``, and the next holder of the lease sends it again.  Nothing is lost.
- An attempt is an HTTP GET with the parameters in the query string and ``callback_timeout``.
  Anything but 200, a timeout or a connection error schedules the next try after
  ``callback_retry[n]`` seconds on the simulator's clock (``/_sim/clock/advance`` makes it due at
  once); ``1 + len(callback_retry)`` tries in all, then the row is ``failed``.
- Callback faults (``faults``): ``fail`` logs a failed try without sending; ``duplicate`` sends twice.
- ``resend`` queues an order's latest callback to each address once more (``POST /_sim/callbacks/{orderid}/resend``).
- Every attempt is logged (``callback_attempts``: time, HTTP status or error, elapsed seconds); the log
  shows URLs and errors masked.  An address that ``destinations`` does not allow is not called: the
  attempt is logged ``refused: ...`` and the callback fails at once.
  A reset while a callback is on its way: the merchant may still get it, nothing is logged.
- ``next_due`` feeds ``engine.due_providers``: the scheduler wakes exactly when a retry is due.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolkit._version import __version__
from toolkit.masking import mask_fields, mask_text
from toolkit.models import FINAL_STATUSES
from toolkit.simulator import faults
from toolkit.simulator.destinations import Destinations
from toolkit.simulator.rules.engine import Engine
from toolkit.simulator.storage import Row, StoreUnavailable, callback_rows, dumps, loads

if TYPE_CHECKING:
    from toolkit.simulator.state import HasState

log = logging.getLogger("gatekit.simulator")

WORKERS = 4
USER_AGENT = f"gatekit-simulator/{__version__}"
HEADERS = {"User-Agent": USER_AGENT}


@dataclass(frozen=True)
class Job:
    """One claimed callback on its way to the merchant."""

    callback_id: int
    token: str
    url: str
    params: dict[str, str]
    fault: str  # "", "fail" or "duplicate" (toolkit.simulator.faults)


@dataclass(frozen=True)
class Attempt:
    at: float
    http_status: int | None
    error: str
    elapsed: float
    refused: bool = False  # the address is not allowed (``destinations``): no retry

    @property
    def ok(self) -> bool:
        return self.http_status == 200


class Delivery:
    """The callback queue of one simulator process: engine hooks, the worker pool and the delivery log.

    A claim is the row's ``claim`` column (``<process>:<token>``), written in the tick's transaction: a job,
    a tick and a reset never see it half-way, whichever process looks.
    """

    WAIT_SLICE = 0.05  # seconds between reads of the attempts when other processes may log them

    def __init__(self, engine: Engine, destinations: Destinations, *, workers: int = WORKERS) -> None:
        self.engine = engine
        self.store = engine.store
        self.workers = workers
        self.destinations = destinations
        self._pool: ThreadPoolExecutor | None = None
        self._changed = threading.Condition()

    # --- life -------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the pool (what was left ``sending`` is taken over with the scheduler's lease: ``take_over``)."""
        with self.store.transaction():
            self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="gatekit-callback")
        self.engine.wake()

    def take_over(self, process: str) -> int:
        """This process now holds the scheduler's lease: rows another process left ``sending`` (it stopped, or
        died) are due again; how many."""
        with self.store.transaction():
            return callback_rows.take_over(self.store, process)

    def stop(self) -> None:
        """No new sends; cancel queued ones (they stay ``sending`` until the next start); join the rest."""
        pool = None
        try:
            with self.store.transaction():  # (no final status is queueing a callback meanwhile)
                pool, self._pool = self._pool, None
        except StoreUnavailable:  # (a database that does not answer: no transaction queues one either)
            if pool is None:
                pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        self._notify()

    def forget(self) -> None:
        """After a reset (call inside its transaction): jobs on their way record nothing (their rows are gone)."""

    # --- engine hooks ------------------------------------------------------------------------------

    def enqueue(self, tx: Row) -> None:
        """Final hook: queue the callbacks of a final status (``unknown`` is not final).

        ``server_callback_url`` is called for the order's initial transaction only; ``notify_url``
        for every transaction of the order (behaviour section 10): one row per distinct address.
        """
        urls = [url for url in dict.fromkeys((tx["callback_url"], tx["notify_url"])) if url]
        if not urls or tx["status"] not in FINAL_STATUSES:
            return
        now = self.engine.clock.now()
        params = dumps(self.engine.outcome_params(tx))
        shape = self.engine.settings.callback_delay  # the callback_delay setting: the first attempt waits a draw
        for url in urls:
            callback_rows.queue(
                self.store,
                {
                    "orderid": tx["orderid"],
                    "login": tx["login"],
                    "url": url,
                    "params": params,
                    "next_at": now + shape.draw() if shape is not None else now,
                    "created_at": now,
                },
            )
        self.engine.wake()

    def resend(self, orderid: int) -> list[int]:
        """The order's latest callback to each of its addresses queued once more, due now, with the parameters
        it was sent with (signed as they were): the new deliveries' ids; none when the order sent no callback."""
        now = self.engine.clock.now()
        with self.store.transaction():
            rows, _ = callback_rows.with_attempts(self.store, orderid)
            latest = {row["url"]: row for row in rows}  # (oldest first: the last one to each address stays)
            again = [{**{name: row[name] for name in ("orderid", "login", "url", "params")}, "next_at": now,
                      "created_at": now} for row in latest.values()]  # fmt: skip
            ids = [callback_rows.queue(self.store, values) for values in again]
        self.engine.wake()
        return ids

    def dispatch_due(self, now: float) -> None:
        """Tick hook: claim every due callback and hand it to the pool (inside the tick's transaction).  Only the
        process that holds the scheduler's lease claims: a clock moved through another (``/_sim/clock/advance``
        ticks where it is answered) leaves the callbacks to the holder, which takes over what a dead holder left
        ``sending``; a claim by any other process would be left ``sending`` for ever if that process died."""
        pool = self._pool
        if pool is None or not self.engine.scheduling():
            return
        for row in callback_rows.due(self.store, now):
            token = f"{self.engine.process}:{secrets.token_hex(8)}"
            if not callback_rows.claim(self.store, row["id"], token):
                continue
            fault = faults.take_callback_fault(self.store)
            job = Job(row["id"], token, row["url"], loads(row["params"]), fault)
            # sent once the claim is committed: a job that read the row before would find it still pending
            self.store.after_commit(functools.partial(self._submit, pool, job))

    def _submit(self, pool: ThreadPoolExecutor, job: Job) -> None:
        try:
            pool.submit(self._deliver, job)
        except RuntimeError:  # the pool is shutting down: the row is due again
            callback_rows.unclaim(self.store, job.callback_id, job.token)

    def next_due(self) -> float | None:
        return callback_rows.next_due(self.store)

    # --- the worker --------------------------------------------------------------------------------

    def _deliver(self, job: Job) -> None:
        try:
            if not self._owns(job):
                return
            attempts = [self._attempt(job)]
            if job.fault == "duplicate":
                attempts.append(self._attempt(job))
            self._record(job, attempts)
        except StoreUnavailable:  # (the store said so once) the callback is tried again once it answers
            with contextlib.suppress(StoreUnavailable):
                self._release(job)
        except Exception:  # a bug of the simulator: keep the pool alive, try again later
            log.exception("callback %s failed unexpectedly", job.callback_id)
            self._release(job)
        finally:
            self._notify()
            self.engine.wake()

    def _owns(self, job: Job) -> bool:
        """True when the claim was committed (the tick's transaction did not roll back) and is still ours."""
        row = callback_rows.claimed(self.store, job.callback_id)
        return row is not None and row["state"] == "sending" and row["claim"] == job.token

    def _attempt(self, job: Job) -> Attempt:
        at, started = self.engine.clock.now(), time.monotonic()
        if job.fault == "fail":
            return Attempt(at, None, "injected fault: fail (not sent)", 0.0)
        if problem := self.destinations.problem(job.url):
            return Attempt(at, None, f"refused: server_callback_url {problem}", 0.0, refused=True)
        timeout = self.engine.settings.callback_timeout
        import requests  # here: the simulator starts without the HTTP client (its first callback loads it)

        try:
            with requests.Session() as session:
                session.trust_env = False  # no proxy from the environment: the address called is the one checked
                answer = session.get(  # stream: the status is all that counts, the body is never read
                    job.url, params=job.params, timeout=timeout, allow_redirects=False, stream=True, headers=HEADERS
                )
                status = answer.status_code
                answer.close()
        except requests.Timeout:
            return Attempt(at, None, f"timeout: no answer within {timeout:g} s", time.monotonic() - started)
        except requests.RequestException as exc:
            error = mask_text(f"{exc.__class__.__name__}: {exc}")  # the message repeats the URL
            return Attempt(at, None, error, time.monotonic() - started)
        error = "" if status == 200 else f"HTTP {status}: anything but 200 is retried"
        return Attempt(at, status, error, time.monotonic() - started)

    def _record(self, job: Job, attempts: list[Attempt]) -> None:
        """Log the attempts; then delivered, the next try on the clock, or failed after the last retry."""
        with self.store.transaction():
            row = callback_rows.callback(self.store, job.callback_id)
            if row is None or row["state"] != "sending" or row["claim"] != job.token:
                return  # reset meanwhile (the row is gone), or another process took it over
            for attempt in attempts:
                callback_rows.add_attempt(
                    self.store,
                    {
                        "callback_id": job.callback_id,
                        "at": attempt.at,
                        "http_status": attempt.http_status,
                        "error": attempt.error,
                        "elapsed": round(attempt.elapsed, 6),
                    },
                )
            tries = row["attempts"] + 1
            retry = self.engine.settings.callback_retry
            values: dict[str, Any] = {"attempts": tries, "claim": ""}
            if any(attempt.ok for attempt in attempts):
                values["state"] = "delivered"
            elif tries <= len(retry) and not any(attempt.refused for attempt in attempts):
                values.update(state="pending", next_at=self.engine.clock.now() + retry[tries - 1])
            else:
                values["state"] = "failed"
            callback_rows.update(self.store, job.callback_id, values)

    def _release(self, job: Job) -> None:
        """After a failure of the simulator itself: due again after the first retry delay (no hot loop)."""
        later = self.engine.clock.now() + (self.engine.settings.callback_retry or (1.0,))[0]
        with self.store.transaction():
            callback_rows.unclaim(self.store, job.callback_id, job.token, due_at=later)

    # --- reading and waiting -----------------------------------------------------------------------

    def deliveries(self, orderid: int | None = None) -> list[dict[str, Any]]:
        """Callbacks (oldest first) with their attempts: the delivery log of one order or of all (two queries)."""
        callbacks, found = callback_rows.with_attempts(self.store, orderid)
        attempts: dict[int, list[Row]] = {row["id"]: [] for row in callbacks}
        for attempt in found:
            callback_id = attempt.pop("callback_id")
            if callback_id in attempts:  # not a callback queued after the first query
                attempts[callback_id].append(attempt)
        return [self._view(row, attempts[row["id"]]) for row in callbacks]

    @staticmethod
    def _view(row: Row, attempts: list[Row]) -> dict[str, Any]:
        return {
            "id": row["id"],
            "orderid": str(row["orderid"]),
            "login": row["login"],
            "url": mask_text(row["url"]),  # the merchant's URL may carry card data (by value and by name)
            "state": row["state"],
            "tries": row["attempts"],
            "next_at": row["next_at"] if row["state"] == "pending" else None,
            "created_at": row["created_at"],
            "params": mask_fields(loads(row["params"])),
            "attempts": attempts,
        }

    def attempt_count(self, orderid: int) -> int:
        return callback_rows.attempt_count(self.store, orderid)

    def wait_for_attempts(self, orderid: int, count: int, timeout: float) -> bool:
        """Block until ``count`` attempts for the order are logged (woken by each one); False at the timeout.

        The count is read under ``_changed``, so no notification falls between reading and waiting
        (nothing takes ``_changed`` while it holds the store's lock).
        """

        def reached() -> bool:
            return self.attempt_count(orderid) >= count

        deadline = time.monotonic() + timeout
        with self._changed:
            while not (reached() or self._pool is None):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                # another process may log the attempt (the lease holder): read again after a slice
                self._changed.wait(min(left, self.WAIT_SLICE) if self.store.shared else left)
            return reached()

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()


def worker(app: HasState) -> Delivery:
    """The app's ``Delivery`` (``app.state.delivery``)."""
    delivery: Delivery = app.state.delivery
    return delivery


def install(state: Any, engine: Engine) -> None:
    """Hooks into the engine, kept on ``state`` (``app.state``); ``core.start`` and ``core.stop`` run the pool."""
    state.destinations = Destinations(engine.settings)
    delivery = Delivery(engine, state.destinations)
    engine.final_hooks.append(delivery.enqueue)
    engine.tick_hooks.append(delivery.dispatch_due)
    engine.due_providers.append(delivery.next_due)
    state.delivery = delivery
