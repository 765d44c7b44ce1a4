"""``gatekit load``: the certification flows as Locust users (Locust's own options, its web UI, its workers).

    gatekit load --headless --users 50 --spawn-rate 10 --run-time 1m          # against an embedded simulator
    gatekit load --master --expect-workers 2 --headless -u 100 -r 20 -t 5m    # machine A (starts the simulator)
    gatekit load --worker --master-host A                                     # machines B and C

The flows and their weights, think times and the callback wait come from ``--weights``, ``--think``,
``--callback-timeout`` over the ``[load]`` table of gatekit.toml (``toolkit.load.plan``). The gateway is the
profile's (``--profile``, default ``GATEKIT_PROFILE`` or ``simulator``: a simulator started here, its address
handed to Locust as ``--host``). The cap follows where the requests go: every target but the simulator this run
started (a team simulator, ``GATEWAY_BASE_URL`` elsewhere, a sandbox) gets at most ``--max-rps`` requests a
second from all Locust processes together (default 2), and a profile that is not a simulator is refused unless
``--target-is-not-a-simulator`` is given. Every request carries ``X-Load-Test: gatekit <run id>``. The web UI
listens on 127.0.0.1 unless ``--web-host`` says otherwise.

Locust writes its CSV files, gatekit ``summary.md``, ``results.json`` and ``report.html``, under ``--reports``
(default ``reports/load``). Locust options this command does not name go after ``--``
(``gatekit load -- --web-port 8090``). Ctrl-C or SIGTERM: the users stop, then the reports are written (verdict
INTERRUPTED), then the embedded simulator stops (``toolkit.load.process``, ``toolkit.load.ending``). Exit
status: Locust's (1 when a request or flow failed), 2 for usage, 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tomllib
import uuid
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.commands.common import Subparsers, UsageError
from toolkit.load.plan import DEFAULT_MAX_RPS, FLOWS, parse_bind

if TYPE_CHECKING:
    from toolkit.commands.stopping import Stop
    from toolkit.load.plan import LoadPlan
    from toolkit.simulator import SimulatorServer

DEFAULT_REPORTS = Path("reports/load")
DEFAULT_WEB_HOST = "127.0.0.1"  # Locust's own default is every interface
EXIT_INTERRUPTED = 130  # (128 + SIGINT, as gatekit certify)
LOAD_PAYOUT_BALANCE = "10000000.00"  # the embedded simulator's demo merchant: payouts for hours of load

# Locust options named here (and handed to Locust as given): (flags, argparse keywords).
LOCUST_OPTIONS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (("-u", "--users"), {"type": int, "help": "peak number of concurrent users (Locust)"}),
    (("-r", "--spawn-rate"), {"type": float, "help": "users started per second (Locust)"}),
    (("-t", "--run-time"), {"help": "stop after this long, e.g. 30s, 5m (Locust)"}),
    (("--headless",), {"action": "store_true", "help": "no web UI: start at once, stop at --run-time (Locust)"}),
    (("--master",), {"action": "store_true", "help": "the master of a distributed run (Locust)"}),
    (("--worker",), {"action": "store_true", "help": "a worker of a distributed run (Locust)"}),
    (("--expect-workers",), {"type": int, "help": "workers the master waits for before starting (Locust)"}),
    (("--master-host",), {"help": "where a worker finds its master (Locust, default 127.0.0.1)"}),
    (("--master-port",), {"type": int, "help": "the master's port (Locust, default 5557)"}),
    (("--master-bind-host",), {"help": "the interface the master listens on (Locust, default *)"}),
    (("--master-bind-port",), {"type": int, "help": "the master's port to listen on (Locust, default 5557)"}),
    (("--processes",), {"type": int, "help": "fork this many worker processes (Locust)"}),
    (("--web-host",), {"help": f"the web UI's interface (default {DEFAULT_WEB_HOST}; 0.0.0.0: every one)"}),
    (("--web-port",), {"type": int, "help": "the web UI's port (Locust, default 8089)"}),
    (("--stop-timeout",), {"help": "let users finish their flow this long at the end (Locust), e.g. 10s"}),
    (("--loglevel",), {"help": "Locust's log level (default INFO)"}),
)


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "load",
        help="load-test with the certification flows as Locust users (simulator by default)",
        description="Run the certification flows as weighted Locust users against the profile's gateway "
        "(an embedded simulator by default): Locust's options, web UI and distributed mode; results per flow, "
        "per operation and per payer page, callbacks received against expected.",
    )
    for flags, options in LOCUST_OPTIONS:
        parser.add_argument(*flags, **options)
    parser.add_argument("--profile", help="the gateway (default GATEKIT_PROFILE or simulator: started here)")
    parser.add_argument("--config", type=Path, help="profiles and [load] TOML (default: gatekit.toml)")
    parser.add_argument("--weights", metavar="FLOW=N,...", help="flows and their weights, e.g. sale=5,threeds=2 "
                        f"(flows: {', '.join(FLOWS)})")  # fmt: skip
    parser.add_argument("--think", metavar="MIN,MAX", help="seconds a user waits between two flows (default 0.5,2)")
    parser.add_argument("--callback-timeout", type=float, metavar="S", help="seconds a flow waits for its callbacks")
    parser.add_argument("--target-is-not-a-simulator", action="store_true",
                        help="allow a gateway that is not a gatekit simulator (a sandbox: mind its terms)")  # fmt: skip
    parser.add_argument("--max-rps", metavar="N", help="requests per second of the whole run against any target "
                        f"but the simulator this run starts (default {DEFAULT_MAX_RPS:g})")  # fmt: skip
    parser.add_argument("--reports", type=Path, default=DEFAULT_REPORTS, help="where reports go (default reports/load)")
    parser.add_argument("--callback-bind", metavar="HOST[:PORT]", default="127.0.0.1", type=_bind,
                        help="where the callback receiver listens (default 127.0.0.1, any port; [::1]:9100 for "
                        "IPv6)")  # fmt: skip
    parser.add_argument("--callback-url", metavar="URL",
                        help="the receiver's address as the gateway reaches it (default: the bound one)")  # fmt: skip
    parser.add_argument("locust_args", nargs=argparse.REMAINDER, help="after --: more Locust options")
    parser.set_defaults(handler=run)


def _bind(text: str) -> str:
    """``--callback-bind``, checked when the command line is read (the Locust processes parse it again)."""
    try:
        parse_bind(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def build_plan(args: argparse.Namespace, config_path: Path | None) -> LoadPlan:
    """Defaults, then the ``[load]`` table, then the flags; the target decides ``embedded`` and the cap."""
    from toolkit.certify.target import embeds_simulator
    from toolkit.config import load_config
    from toolkit.load.plan import LoadPlan, PlanError, parse_rate, parse_think, parse_weights

    plan = LoadPlan(run_id=uuid.uuid4().hex[:12])
    try:
        if config_path is not None and config_path.exists():
            table = tomllib.loads(config_path.read_text()).get("load", {})
            if not isinstance(table, dict):
                raise PlanError(f"{config_path}: [load] must be a table")
            plan = plan.with_table(table, f"{config_path} [load]")
        if args.weights:
            plan = replace(plan, weights=parse_weights(args.weights))
        if args.think:
            plan = replace(plan, think=parse_think(args.think))
        if args.callback_timeout is not None:
            if not args.callback_timeout > 0:
                raise PlanError(f"--callback-timeout must be a number of seconds > 0, got {args.callback_timeout}")
            plan = replace(plan, callback_timeout=args.callback_timeout)
        max_rps = parse_rate(args.max_rps) if args.max_rps is not None else plan.max_rps
    except (PlanError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(str(exc)) from None
    config = load_config(args.profile, file=config_path)
    plan = replace(plan, profile=config.profile, embedded=embeds_simulator(config), max_rps=max_rps)
    if not config.simulator and not args.target_is_not_a_simulator:
        raise UsageError(
            f"profile {config.profile} ({config.base_url}) is not a gatekit simulator: sandboxes are "
            "rate-limited and their terms forbid load tests. Load a simulator (gatekit simulate), or give "
            f"--target-is-not-a-simulator: the run is then {capped(plan.rate)}"
        )
    return plan


def capped(rate: float) -> str:
    """The cap, and how to change it."""
    return f"capped at {rate:g} requests a second, all Locust processes together (--max-rps N sets the cap)"


def locust_command(args: argparse.Namespace, plan: LoadPlan, host: str | None) -> list[str]:
    """``python -m locust`` with gatekit's locustfile, the options given, the plan, the host and the reports."""
    from toolkit import load  # (the package only: its locustfile imports Locust, which patches this process)

    locustfile = Path(load.__file__).with_name("locustfile.py")
    command = [sys.executable, "-m", "locust", "-f", str(locustfile), "--gatekit-plan", plan.to_json()]
    for flags, options in LOCUST_OPTIONS:
        name = flags[-1].lstrip("-").replace("-", "_")
        value = getattr(args, name)
        if options.get("action") == "store_true":
            command += [flags[-1]] if value else []
        elif value is not None:
            command += [flags[-1], str(value)]
    if args.web_host is None and not os.environ.get("LOCUST_WEB_HOST"):
        command += ["--web-host", DEFAULT_WEB_HOST]  # (-- --web-host after it still wins)
    if host:
        command += ["--host", host]
    if not args.worker:  # (the master, or a lone process, writes the reports; report.html: toolkit.load.ending)
        command += ["--csv", str(args.reports / "load"), "--csv-full-history"]  # (latency over time)
    extra = list(args.locust_args)
    return command + (extra[1:] if extra[:1] == ["--"] else extra)


def start_simulator(plan: LoadPlan, config_path: Path | None) -> SimulatorServer:
    """The embedded simulator of a load run: the profile's [simulator] settings, a demo merchant with funds for
    hours of payouts."""
    from decimal import Decimal

    from toolkit.certify.target import embedded_settings
    from toolkit.simulator import SimulatorServer

    settings = embedded_settings(plan.profile, config_file=config_path)
    merchants = tuple(replace(m, payout_balance=Decimal(LOAD_PAYOUT_BALANCE)) for m in settings.merchants)
    return SimulatorServer(replace(settings, merchants=merchants)).start()


def run(args: argparse.Namespace) -> int:
    from toolkit.commands.stopping import Stop, stop_on_signals
    from toolkit.config import config_file

    if importlib_missing("locust"):
        raise UsageError("Locust is not installed: pip install 'gatekit[load]'")
    config_path = args.config or config_file(os.environ)
    plan = build_plan(args, config_path)
    env = {**os.environ, "GATEKIT_LOAD_REPORTS": str(args.reports.resolve()),
           "GATEKIT_LOAD_RECEIVER": args.callback_bind}  # fmt: skip
    if config_path is not None:  # (the Locust processes read the same profiles)
        env["GATEKIT_CONFIG"] = str(config_path.resolve())
    if args.callback_url:
        env["GATEKIT_LOAD_RECEIVER_URL"] = args.callback_url
    if not args.worker:
        args.reports.mkdir(parents=True, exist_ok=True)
    started = time.time()
    with Stop() as stop, stop_on_signals(stop):
        code = _run_with_target(args, plan, config_path, env, stop)
    summary = args.reports / "summary.md"
    written = not args.worker and summary.exists() and summary.stat().st_mtime >= started
    if stop.is_set() and (code == EXIT_INTERRUPTED or code < 0):
        said = f"the users stopped, then {summary} was written (INTERRUPTED)" if written else "no report written"
        print(f"gatekit load: interrupted; {said}", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED
    if written:
        print(f"gatekit load: reports in {args.reports}/ (summary.md, report.html, load_stats.csv)")
    return code


def _run_with_target(
    args: argparse.Namespace, plan: LoadPlan, config_path: Path | None, env: dict[str, str], stop: Stop
) -> int:
    """Locust against the target: the embedded simulator (started first, stopped once Locust has ended) or the
    profile's gateway (capped, and said so). A worker gets both from its master."""
    from toolkit.load.process import run_locust

    simulator = None
    host = None
    if plan.embedded and not args.worker:
        simulator = start_simulator(plan, config_path)
        host = simulator.base_url
        plan = replace(plan, simulator_url=host)  # (the one target without a cap)
        print(f"gatekit load: simulator {host} (embedded, stops with the run)", flush=True)
    elif not plan.embedded:
        from toolkit.config import load_config

        host = load_config(plan.profile, file=config_path).base_url
        if not args.worker:
            print(f"gatekit load: {host} is not a simulator this run started: {capped(plan.rate)}",
                  file=sys.stderr, flush=True)  # fmt: skip
    try:
        if stop.is_set():  # (Ctrl-C while the simulator started)
            return EXIT_INTERRUPTED
        return run_locust(locust_command(args, plan, host), env, stop)
    finally:
        if simulator is not None:
            simulator.stop()


def importlib_missing(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is None
