"""``gatekit simulate``: run the gateway simulator on HOST:PORT until Ctrl-C or SIGTERM.

    gatekit simulate [--host 127.0.0.1] [--port 8080] [--config sim.toml] [--db FILE] [--latency S]
                     [--max-body BYTES] [--public-url URL] [--callback-host HOST] [--control-token TOKEN]
                     [--quiet] [--log-level LEVEL]

The first line names the base URL (``simulator: http://HOST:PORT/paynet``; ``--port 0`` takes a
free port).  Then come the merchants: login, endpoint ids and group ids.  Then one masked line per
request served (``toolkit.commands.request_log``; ``--quiet`` leaves them out).  The documented demo
merchant's control key is printed too (``toolkit.demo``: it is published with the code); the
keys of merchants from ``--config`` never are.  Without ``--db`` the state lives in memory and
is lost at exit; with a file it survives a restart.  A non-loopback ``--host`` prints a warning:
the gateway API and the pages are then reachable from other machines, and the control API
(``/_sim/``) only with ``--control-token`` (or ``GATEKIT_CONTROL_TOKEN``).  Exit status: 0 after a
clean stop, 2 when the settings, the database or the address cannot be used.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from toolkit.commands.common import Subparsers
from toolkit.commands.stopping import Stop, stop_on_signals, wait_until_stopped

if TYPE_CHECKING:  # the simulator (starlette, uvicorn) is imported when the command runs, not when the CLI starts
    from toolkit.simulator.server import SimulatorServer
    from toolkit.simulator.settings import SimulatorSettings

NAME = "simulate"
DESCRIPTION = (
    "Run the stateful gateway simulator on HOST:PORT until Ctrl-C or SIGTERM. It prints its base URL and "
    "merchants, then one line per request (time, method, path, operation, HTTP status, type, orderid, ms; "
    "card data masked)."
)
TOKEN_ENV = "GATEKIT_CONTROL_TOKEN"
MIN_TOKEN = 16  # characters of a control token: a shorter (or an empty one, set by mistake) is refused
EXIT_OK = 0
EXIT_UNUSABLE = 2
MAX_WORKERS = 64


def register(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Add ``simulate`` to the CLI (``toolkit.cli`` calls this for every module of COMMANDS)."""
    parser = subparsers.add_parser(
        NAME,
        help="run the stateful gateway simulator (demo merchant, or merchants from --config)",
        description=DESCRIPTION,
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8080, help="port to listen on; 0 takes a free one (default: 8080)")
    parser.add_argument("--config", type=Path, help="TOML settings: [simulator] and [[merchant]] tables")
    parser.add_argument(
        "--db",
        default=":memory:",
        help="where the state is kept: a SQLite file (survives a restart), or postgresql://USER@HOST:PORT/DB for a "
        "store that simulators on several machines share (pip install 'gatekit[postgres]')",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="N processes serving one port and one store (without --db: a temporary SQLite file); "
        "one of them does the timed work; a worker that dies is started again",
    )
    parser.add_argument(
        "--reset",
        action="store_true",
        help="empty the --db store (every order, callback, fault and the clock) and exit; for a shared "
        "PostgreSQL store between runs",
    )
    # a worker of --workers: it binds the port with SO_REUSEPORT, and says on this descriptor when it listens
    parser.add_argument("--ready-fd", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--latency", type=float, help="seconds before a decision (status says processing until then)")
    parser.add_argument(
        "--max-body",
        type=int,
        metavar="BYTES",
        help="largest request body accepted; bigger ones get 413 (default 65536)",
    )
    parser.add_argument(
        "--public-url",
        metavar="URL",
        help="base of the addresses handed out (redirect-url, 3-D Secure pages), e.g. http://sim.example:8080;"
        " default: the address each client connected to (never the Host header)",
    )
    parser.add_argument(
        "--callback-host",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="a host that callbacks may go to besides loopback (repeatable); ports 80, 8080, 443, 8443 unless given",
    )
    parser.add_argument(
        "--control-token",
        default=None,
        metavar="TOKEN",
        help=f"require Authorization: Bearer TOKEN on /_sim/ and open it beyond loopback (or {TOKEN_ENV};"
        " a flag shows in ps and shell history: prefer the variable)",
    )
    parser.add_argument(
        "--lenient",
        action="store_true",
        help="forgive what the production gateway refuses (missing login, misspelled fields, expired cards...) "
        "with a journal warning; a merchant's own 'lenient' setting still wins",
    )
    parser.add_argument("--quiet", action="store_true", help="no line per request (the header is still printed)")
    parser.add_argument(
        "--log-level",
        default="warning",
        choices=("critical", "error", "warning", "info", "debug"),
        help="what the web server (uvicorn) and the simulator log on stderr: problems only by default; "
        "info and debug add uvicorn's start-up and connection lines",
    )
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C or SIGTERM; 0 after a clean stop, 2 when something cannot be used."""
    with _simulator_log_on_stderr():
        return _serve(args)


def _more_descriptors() -> None:
    """Raise this process's soft limit of open files to its hard limit (a server's connections are files)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
        target = 65536 if hard == resource.RLIM_INFINITY else hard
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def _serve(args: argparse.Namespace) -> int:
    import sqlite3

    from toolkit.commands.request_log import RequestLog
    from toolkit.simulator.server import SimulatorServer
    from toolkit.simulator.settings import SettingsError
    from toolkit.simulator.storage import StoreError
    from toolkit.simulator.storage.postgres import without_password

    if args.reset:
        return _reset(args.db)
    _more_descriptors()
    if not 1 <= args.workers <= MAX_WORKERS:
        return _unusable(f"--workers {args.workers}: between 1 and {MAX_WORKERS}")
    try:
        settings = _settings(args)
        if args.workers > 1 and args.ready_fd is None:
            from toolkit.commands.workers import supervise

            return supervise(args, settings)
        server = SimulatorServer(settings, db=args.db, host=args.host, port=args.port, log_level=args.log_level,
                                 reuse_port=args.ready_fd is not None)  # fmt: skip
    except SettingsError as exc:
        return _unusable(str(exc))
    except (sqlite3.Error, StoreError) as exc:
        return _unusable(f"database {without_password(args.db)}: {exc}")
    except OSError as exc:
        return _unusable(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
    writer = None
    if not args.quiet:
        from toolkit.commands.request_log import LineWriter

        writer = LineWriter(sys.stdout)
        server.add_middleware(RequestLog, writer=writer)
    with Stop() as stop, stop_on_signals(stop), server:
        if args.ready_fd is not None:  # a worker: the supervisor prints the header once all of them listen
            os.write(args.ready_fd, b"1")
            os.close(args.ready_fd)
        else:
            describe(server, sys.stdout)
        _set_start_up_aside()
        wait_until_stopped(stop)
    if writer is not None:
        writer.close()
    if args.ready_fd is None:
        print(f"stopped: {server.base_url}", flush=True)
    return EXIT_OK


def _set_start_up_aside() -> None:
    """What start-up made (modules, the app, the catalogue, its plans) set aside from the garbage collector for good
    (``gc.freeze``): the process serves until it stops, and a full collection then walks only what requests made.
    Measured over 10,000 requests (sale + status pairs, two runs each): 70-79 ms in collections without, 33-44 ms
    with."""
    import gc

    gc.freeze()


def _reset(db: str) -> int:
    """``--reset``: the store emptied (every table, the ids back to their start, the clock offset)."""
    import sqlite3

    from toolkit.simulator.storage import StoreError, journal_path, journal_rows, open_store
    from toolkit.simulator.storage.postgres import without_password
    from toolkit.simulator.storage.sqlite import SqliteStore

    if db == ":memory:":
        return _unusable("--reset empties the store --db names (a SQLite file or postgresql://...)")
    try:
        store = open_store(db)
        try:
            store.reset()
            store.forget_processes()
        finally:
            store.close()
        if Path(journal_path(db)).exists():  # (a SQLite file's journal lives beside it)
            journal = SqliteStore(journal_path(db))
            try:
                journal_rows.clear(journal)
            finally:
                journal.close()
    except (sqlite3.Error, StoreError) as exc:
        return _unusable(f"database {without_password(db)}: {exc}")
    print(f"emptied: {without_password(db)}")
    return EXIT_OK


@contextlib.contextmanager
def _simulator_log_on_stderr() -> Iterator[None]:
    """The simulator's warnings (a non-loopback address, failures, a database that does not answer) on stderr,
    named as this command's."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"gatekit {NAME}: %(levelname)s: %(message)s"))
    logger = logging.getLogger("gatekit.simulator")
    logger.addHandler(handler)
    # psycopg's pool warns at every failed connection and every dead one it drops (a line a second through an
    # outage): the store says once that the database does not answer, and once that it answers again
    pool = logging.getLogger("psycopg.pool")
    level, pool.level = pool.level, max(pool.level, logging.ERROR)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        pool.setLevel(level)


def _settings(args: argparse.Namespace) -> SimulatorSettings:
    """The file's settings, then the flags over them."""
    from toolkit.masking import Secret
    from toolkit.simulator.settings import SettingsError, load_settings, public_url_problem

    settings = load_settings(args.config)
    changes: dict[str, object] = {}
    if args.lenient:
        changes["lenient"] = True
    if args.latency is not None:
        if args.latency < 0:
            raise SettingsError(f"--latency {args.latency}: must be 0 or more seconds")
        changes["latency"] = args.latency
    if args.max_body is not None:
        if args.max_body < 1:
            raise SettingsError(f"--max-body {args.max_body}: must be a number of bytes >= 1")
        changes["max_body_bytes"] = args.max_body
    if args.public_url:
        if problem := public_url_problem(args.public_url):
            raise SettingsError(f"--public-url {problem}")
        changes["public_url"] = args.public_url.rstrip("/")
    if args.callback_host:
        changes["callback_hosts"] = (*settings.callback_hosts, *(h.strip().lower() for h in args.callback_host))
    token = args.control_token if args.control_token is not None else os.environ.get(TOKEN_ENV)
    if token is not None:
        where = "--control-token" if args.control_token is not None else TOKEN_ENV
        if len(token.strip()) < MIN_TOKEN:
            raise SettingsError(
                f"{where} is {'empty' if not token.strip() else f'{len(token.strip())} characters'}: a control token "
                f"has at least {MIN_TOKEN} characters (unset it to keep /_sim/ on loopback without one)"
            )
        changes["control_token"] = Secret(token.strip())
    return dataclasses.replace(settings, **changes) if changes else settings  # type: ignore[arg-type]


def _unusable(message: str) -> int:
    print(f"gatekit {NAME}: {message}", file=sys.stderr)
    return EXIT_UNUSABLE


def describe(server: SimulatorServer, out: TextIO) -> None:
    """The base URL first, then what a client needs to know of each merchant."""
    from toolkit.simulator.storage.postgres import without_password

    path = server.store.path
    shown = without_password(path) + (" (in memory: lost at exit)" if path == ":memory:" else "")
    from toolkit.commands.simheader import describe_lines

    lines = describe_lines(server.settings, server.host, server.port, shown)
    out.write("\n".join(lines) + "\n")
    out.flush()
