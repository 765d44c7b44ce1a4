"""``GatewayUser``: a Locust user that runs the certification flows against the gateway, and what it reports.

Importing this module imports Locust, which patches the standard library for gevent: import it from a
locustfile (``gatekit load`` runs ``toolkit/load/locustfile.py``), never from code that runs otherwise.

What Locust's statistics get (type / name):

- ``gateway`` / the operation (``sale``, ``status``, ``upload_cres_result``...): every request of the client;
- ``payer`` / the payer's step (``open the page``, ``answer the 3-D Secure challenge``...): the payer's pages;
- ``flow`` / the flow (``sale``, ``threeds``...): the whole flow, from its first request to its callbacks;
- ``callback`` / ``received`` or ``lost`` or ``duplicate``: one per expected callback (a duplicate as it comes).

Flows and callbacks are no HTTP requests: they have their rows, but Locust's ``Aggregated`` row, and the
requests per second and failure ratio it gives, count the ``gateway`` and ``payer`` requests only
(``toolkit.load.totals``).

A failure's message starts with its kind (``declined``, ``refused``, ``server-error``, ``transport``,
``timeout``, ``protocol``, ``payer``, ``flow``, ``callback-lost``, ``callback-duplicate``), so Locust groups
failures by kind; numbers in the reason are written ``N`` (one line per kind of reason, not per order).

Extend it in a locustfile of your own::

    from locust import task
    from toolkit.load import GatewayUser

    class Checkout(GatewayUser):
        @task(3)
        def my_flow(self):
            self.run_flow("my checkout", lambda merchant, payer, run: ...)
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import re
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from locust import User, events, task
from locust.env import Environment

from toolkit.certify.target import load_payer_settings
from toolkit.client import GatewayClient, PreparedCall
from toolkit.config import GatewayConfig, load_config, simulator_config
from toolkit.flows import Merchant
from toolkit.load.ending import finish
from toolkit.load.flows import FLOW_FUNCTIONS, Declined, Flow, FlowRun, failure_kind
from toolkit.load.pacing import RateLimit, paced_session
from toolkit.load.plan import DEFAULT_MAX_RPS, LOAD_HEADER, LoadPlan, PlanError, parse_bind, parse_rate
from toolkit.load.receiver import LoadReceiver
from toolkit.load.totals import keep_totals_http
from toolkit.models import Response
from toolkit.payer import Payer
from toolkit.payer.reading import PayerSettings
from toolkit.payer.visits import Visit

REPORTS_ENV = "GATEKIT_LOAD_REPORTS"  # where the master writes summary.md and results.json (gatekit load sets it)
RECEIVER_ENV = "GATEKIT_LOAD_RECEIVER"  # host[:port] the callback receiver binds (default 127.0.0.1, a free port)
RECEIVER_URL_ENV = "GATEKIT_LOAD_RECEIVER_URL"  # its address as the gateway reaches it (default: the bound one)

log = logging.getLogger("gatekit.load")


class LoadFailure(Exception):
    """A failure as Locust shows it: ``kind: reason``."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(f"{kind}: {reason}")
        self.kind = kind


def failure(exc: BaseException) -> LoadFailure:
    """The report's failure for an exception: its kind, and its reason with every number written N."""
    reason = re.sub(r"\d+", "N", str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__)[:160]
    return LoadFailure(failure_kind(exc), reason)


def is_worker(environment: Environment) -> bool:
    """This Locust process is a worker of a distributed run."""
    from locust.runners import WorkerRunner

    return isinstance(environment.runner, WorkerRunner)


class LoadState:
    """What every user of this Locust process shares: the plan, the callback receiver, the rate limit."""

    def __init__(self) -> None:
        self.plan = LoadPlan()
        self.receiver: LoadReceiver | None = None
        self.limit = RateLimit(self.plan.rate)
        self.environment: Environment | None = None
        self.payer_settings = PayerSettings()
        self.workers = 0  # (the master: the most workers seen running)
        self.capped: set[str] = set()  # the capped targets this process has said it caps
        self.ending = threading.Lock()  # (gevent's: a second SIGTERM waits for the first one's reports)
        self.ended = False

    def start(self, environment: Environment) -> None:
        self.environment = environment
        options = environment.parsed_options
        text = getattr(options, "gatekit_plan", "") if options is not None else ""
        self.plan = LoadPlan.from_json(text) if text else LoadPlan()
        max_rps = getattr(options, "gatekit_max_rps", None) if options is not None else None
        if max_rps:
            self.plan = replace(self.plan, max_rps=max_rps)
        if self.receiver is None:
            host, port = parse_bind(os.environ.get(RECEIVER_ENV, "127.0.0.1"))
            self.receiver = LoadReceiver(host, port, public_url=os.environ.get(RECEIVER_URL_ENV) or None,
                                         on_duplicate=self._duplicate).start()  # fmt: skip
        workers = getattr(options, "expect_workers", 1) if is_worker(environment) else 1
        self.limit = RateLimit(self.plan.rate / max(1, int(workers or 1)))
        if not self.plan.embedded:
            self.payer_settings = load_payer_settings(self.plan.profile)

    def config(self, host: str | None) -> GatewayConfig:
        if self.plan.embedded:
            if not host:
                raise RuntimeError("gatekit load: no simulator address (Locust's --host)")
            return simulator_config(host.rstrip("/"))
        return load_config(self.plan.profile)

    def limit_for(self, target: str) -> RateLimit | None:
        """The rate limit of requests to ``target`` (a base URL): none for the simulator this run started, this
        process's share of the cap for anything else (said once per target in Locust's log)."""
        if self.plan.cap(target) is None:
            return None
        if target not in self.capped and self.plan.embedded:  # (else gatekit load said it before Locust started)
            self.capped.add(target)
            log.warning("%s is not a simulator this run started: capped at %g requests a second, all Locust "
                        "processes together (--max-rps N of gatekit load, --gatekit-max-rps N of Locust's own "
                        "command, sets the cap)", target, self.plan.rate)  # fmt: skip
        return self.limit

    def _duplicate(self, orderid: str, kind: str, status: str) -> None:
        if self.environment is not None:
            fire(self.environment, "callback", "duplicate", 0.0,
                 LoadFailure("callback-duplicate", f"a second {kind or 'transaction'} {status} callback"))  # fmt: skip


STATE = LoadState()


def _options(parser: Any) -> None:
    parser.add_argument("--gatekit-plan", default="", include_in_web_ui=False,
                        help="gatekit's load plan as JSON (gatekit load writes it)")  # fmt: skip
    parser.add_argument("--gatekit-max-rps", type=_rate, default=None, include_in_web_ui=False,
                        help="requests a second of the whole run to any target but the simulator gatekit load "
                        f"started (default {DEFAULT_MAX_RPS:g})")  # fmt: skip


def _rate(text: str) -> float:
    try:
        return parse_rate(text, "--gatekit-max-rps")
    except PlanError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _test_start(environment: Environment, **_: Any) -> None:
    STATE.start(environment)
    _count_workers(environment)


def _spawned() -> None:
    if STATE.environment is not None:
        _count_workers(STATE.environment)


def _count_workers(environment: Environment) -> None:
    """The master counts its workers while they run (at the end they have gone)."""
    from locust.runners import MasterRunner

    if isinstance(environment.runner, MasterRunner):
        STATE.workers = max(STATE.workers, len(environment.runner.clients))


def _quitting(environment: Environment, **_: Any) -> None:
    """Locust quits (the run's end, Ctrl-C, SIGTERM): the users stop, then the master (or a lone process) writes
    ``summary.md``, ``results.json`` and ``report.html`` where gatekit load says; then the receiver stops."""
    with STATE.ending:
        if STATE.ended:
            return
        folder = os.environ.get(REPORTS_ENV)
        finish(environment, Path(folder) if folder else None, STATE.workers)
        if STATE.receiver is not None:
            STATE.receiver.stop()
            STATE.receiver = None
        STATE.ended = True


def _init(environment: Environment, **_: Any) -> None:
    """Locust fires ``quitting`` last listener first, and a master's runner has just added its own (it tells the
    workers to quit, the test stopped without a word of an interruption): ours goes after it, to run before it.
    The statistics' ``Aggregated`` row is made to count HTTP requests only (the runner has made them by now)."""
    keep_totals_http(environment.stats)
    environment.events.quitting.remove_listener(_quitting)
    environment.events.quitting.add_listener(_quitting)


events.init_command_line_parser.add_listener(_options)
events.init.add_listener(_init)
events.test_start.add_listener(_test_start)
events.spawning_complete.add_listener(lambda **_: _spawned())
events.quitting.add_listener(_quitting)


def load_header() -> str:
    """What ``X-Load-Test`` says: gatekit, and the run's id."""
    return f"gatekit {STATE.plan.run_id}".rstrip()


def fire(environment: Environment, kind: str, name: str, elapsed_ms: float, exception: Exception | None) -> None:
    environment.events.request.fire(request_type=kind, name=name, response_time=elapsed_ms, response_length=0,
                                    exception=exception, context={})  # fmt: skip


class LoadClient(GatewayClient):
    """``GatewayClient`` reporting each request to Locust, under the rate limit, with the load-test header."""

    def __init__(self, config: GatewayConfig, environment: Environment, limit: RateLimit | None) -> None:
        super().__init__(config)
        self.environment = environment
        self.limit = limit
        self.session.headers[LOAD_HEADER] = load_header()

    def send(self, call: PreparedCall) -> Response:
        if self.limit is not None:
            self.limit.take()
        started = time.perf_counter()
        try:
            answer = super().send(call)
        except Exception as exc:
            fire(self.environment, "gateway", call.operation.name, (time.perf_counter() - started) * 1000,
                 failure(exc))  # fmt: skip
            raise
        fire(self.environment, "gateway", call.operation.name, (time.perf_counter() - started) * 1000, None)
        return answer


class LoadMerchant(Merchant):
    """The merchant of a load user: callbacks and the payer's redirects go to this process's receiver."""

    def __init__(self, client: GatewayClient, receiver: LoadReceiver) -> None:
        super().__init__(client, callback_url=receiver.callback_url)
        self.redirect_url = receiver.redirect_url

    def _urls(self, tag: str) -> dict[str, str]:
        return {**self._callback(), "redirect_url": self.redirect_url}


class GatewayUser(User):
    """Runs the plan's flows, picked by weight, with the plan's think time between two flows."""

    abstract = True  # (the locustfile's ``CertificationFlows`` is the user gatekit load runs)

    def wait_time(self) -> float:
        low, high = STATE.plan.think
        return random.uniform(low, high)

    def on_start(self) -> None:
        if STATE.receiver is None:  # (a user started without test_start: Locust's run_single_user)
            STATE.start(self.environment)
        assert STATE.receiver is not None
        config = STATE.config(self.host)
        self.rate_limit = STATE.limit_for(config.base_url)  # (where this user's requests go decides the cap)
        self.gateway = LoadClient(config, self.environment, self.rate_limit)
        self.merchant = LoadMerchant(self.gateway, STATE.receiver)

    def on_stop(self) -> None:
        self.gateway.close()

    def payer(self) -> Payer:
        """A new payer (a browser with its own cookies) whose page loads are reported as ``payer`` requests."""
        assert STATE.receiver is not None
        payer = Payer(session=paced_session(self.rate_limit), settings=STATE.payer_settings,
                      merchant_urls=[STATE.receiver.redirect_url], observers=[self._visited])  # fmt: skip
        payer.session.headers[LOAD_HEADER] = load_header()
        return payer

    def _visited(self, visit: Visit) -> None:
        bad = visit.status_code is None or visit.status_code >= 400
        problem = LoadFailure("payer", f"HTTP {visit.status_code}" if visit.status_code else "no answer")
        fire(self.environment, "payer", visit.step, visit.elapsed * 1000, problem if bad else None)

    def run_flow(self, name: str, flow: Flow) -> None:
        """Run ``flow``, wait for the callbacks it expects, and report the flow."""
        assert STATE.receiver is not None
        run, started, problem = FlowRun(), time.perf_counter(), None
        try:
            flow(self.merchant, self.payer(), run)
        except Declined as exc:
            problem = LoadFailure("declined", re.sub(r"\d+", "N", str(exc))[:160])
        except Exception as exc:  # every failure is reported, none stops the user
            problem = failure(exc)
        for orderid, count in run.callbacks.items():
            waited = time.perf_counter()
            arrived = STATE.receiver.wait_for(orderid, count, STATE.plan.callback_timeout)
            elapsed = (time.perf_counter() - waited) * 1000
            for _ in range(min(arrived, count)):
                fire(self.environment, "callback", "received", elapsed, None)
            for _ in range(count - min(arrived, count)):
                lost = LoadFailure("callback-lost", f"not received within {STATE.plan.callback_timeout:g} s")
                fire(self.environment, "callback", "lost", elapsed, lost)
                if problem is None:
                    problem = lost
        fire(self.environment, "flow", name, (time.perf_counter() - started) * 1000, problem)

    @task
    def certification_flow(self) -> None:
        weights = STATE.plan.weights
        names = [name for name, weight in weights.items() if weight > 0]
        name = random.choices(names, [weights[n] for n in names])[0]
        self.run_flow(name, FLOW_FUNCTIONS[name])
