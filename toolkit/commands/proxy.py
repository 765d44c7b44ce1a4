"""``gatekit proxy --to URL``: a recording proxy on loopback, for a client written in any language.

    gatekit proxy --to https://sandbox.gateway.example/paynet --record recordings/php --profile sandbox
    # then give your integration http://127.0.0.1:8081 as the gateway's URL, and run it

Every exchange prints one masked line, with what is wrong under it: fields missing or misspelled (``ammount``:
did you mean ``amount``?), the control formula (with the merchant's control key: ``--profile``), the OAuth
signature (the control key for HMAC-SHA1, the public key for RSA-SHA256: ``--public-key``, or the
profile's private key), and the answer against the operation's response model.  ``--record DIR`` writes one
HAR per order and ``index.json``, masked, as ``gatekit certify --record`` does (``gatekit drift DIR`` compares
them with the simulator).  Ctrl-C or SIGTERM stops it; exit status 1 when some exchange had a problem.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.commands.common import Subparsers, UsageError
from toolkit.commands.stopping import Stop, stop_on_signals, wait_until_stopped

if TYPE_CHECKING:
    from toolkit.proxy import Keys

DEFAULT_PORT = 8081  # (the simulator's is 8080)


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "proxy",
        help="forward a client's requests to the gateway, check and record them (any language)",
        description="Listen on 127.0.0.1, forward every request to the gateway (or a simulator), print one masked "
        "line per exchange with what is wrong with it, and record the run.",
    )
    parser.add_argument("--to", metavar="URL", help="the gateway's base URL (default: the profile's)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; "
                        "0: any free port)")  # fmt: skip
    parser.add_argument("--record", type=Path, metavar="DIR", help="record every exchange there (HAR 1.2, masked)")
    parser.add_argument(
        "--profile",
        help="the merchant whose keys check (and, for OAuth, re-sign) the requests: login, control key "
        "(GATEWAY_CONTROL_KEY), private key; and the gateway URL when --to is not given",
    )
    parser.add_argument("--config", type=Path, help="profiles TOML (default: gatekit.toml)")
    parser.add_argument("--public-key", type=Path, metavar="PEM", help="the merchant's RSA public key (checks only)")
    parser.add_argument("--timeout", type=_seconds, default=60.0, metavar="SECONDS", help="seconds an exchange with "
                        "the gateway may take in all, connecting and every byte of its answer (default 60): then a "
                        "504")  # fmt: skip
    parser.add_argument("--request-timeout", type=_seconds, default=10.0, metavar="SECONDS", help="seconds a client "
                        "has to send a whole request, head and body, and to take each part of an answer (default 10): "
                        "then a 408 and the connection closed")  # fmt: skip
    parser.add_argument("--idle-timeout", type=_seconds, default=15.0, metavar="SECONDS", help="seconds a kept-alive "
                        "connection may wait for its next request (default 15)")  # fmt: skip
    parser.add_argument("--max-connections", type=_count, default=128, metavar="N", help="client connections served "
                        "at once, a thread each (default 128); the next ones get a 503")  # fmt: skip
    parser.set_defaults(handler=run)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: a number of seconds above 0")
    return value


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: a whole number, at least 1")
    return int(text)


def _keys(args: argparse.Namespace) -> tuple[Keys, str]:
    """The keys, and the profile's gateway URL ("" without a profile)."""
    from toolkit.config import ConfigError, load_config
    from toolkit.keys import load_public_key
    from toolkit.proxy import Keys

    public = load_public_key(args.public_key) if args.public_key else None
    if not args.profile:
        return Keys(public_key=public), ""
    config = load_config(args.profile, file=args.config)
    try:
        private = config.private_key
    except ConfigError:
        private = None
    return Keys(config.login, config.control_key, private, public), config.base_url


def run(args: argparse.Namespace) -> int:
    from toolkit.proxy import Limits, ProxyServer, started_line

    keys, profile_url = _keys(args)
    upstream = args.to or profile_url
    if not upstream:
        raise UsageError("give the gateway's base URL (--to https://sandbox.gateway.example/paynet) or --profile")
    if not upstream.startswith(("http://", "https://")):
        raise UsageError(f"--to {upstream}: a URL starting with http:// or https://")
    limits = Limits(timeout=args.timeout, request_timeout=args.request_timeout, idle_timeout=args.idle_timeout,
                    max_connections=args.max_connections)  # fmt: skip
    try:
        proxy = ProxyServer(upstream, port=args.port, record=args.record, keys=keys, limits=limits,
                            profile=f"proxy ({args.profile})" if args.profile else "proxy")  # fmt: skip
    except ValueError as exc:  # (a URL with a user, a query or no host)
        raise UsageError(f"--to {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}") from None
    with Stop() as stop, stop_on_signals(stop), proxy:
        print(started_line(proxy), flush=True)
        wait_until_stopped(stop)
    print(f"gatekit proxy: {proxy.summary()}", file=sys.stderr, flush=True)
    return 1 if proxy.with_problems else 0
