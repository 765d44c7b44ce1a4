"""``gatekit listen``: run the callback receiver and print every arrival as one JSON line.

    gatekit listen --port 8765 [--host 127.0.0.1] [--control-key KEY]

The control key defaults to the environment (GATEWAY_CONTROL_KEY); without one, ``control`` is
not checked and ``control_ok`` is null.  The first line names the addresses to give the gateway
(``server_callback_url``, behaviour section 4; ``redirect_url``, section 5); card data in every
line is masked.  Ctrl-C or SIGTERM stops it cleanly (exit status 0).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from typing import TYPE_CHECKING, Any, TextIO

from toolkit.commands.common import Subparsers
from toolkit.commands.stopping import Stop, stop_on_signals, wait_until_stopped
from toolkit.envnames import ENV_VARS

if TYPE_CHECKING:  # the receiver is imported when the command runs, not when the CLI starts
    from toolkit.callbacks import CallbackReceiver, Received

NAME = "listen"


def register(subparsers: Subparsers) -> argparse.ArgumentParser:
    """Add ``listen`` to the CLI (``toolkit.cli`` calls this for every module of COMMANDS)."""
    parser = subparsers.add_parser(
        NAME,
        help="receive server callbacks and payer redirects; print each as a JSON line",
        description="Run the callback receiver and print every arrival (a server callback, a payer's redirect) "
        "as one JSON line, its control verified with the merchant's key.",
    )
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: any free port)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    parser.add_argument(
        "--control-key",
        default=None,
        help=f"merchant control key to verify 'control' (default: ${ENV_VARS['control_key']}; none: not verified)",
    )
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Listen until Ctrl-C or SIGTERM; 0 after a clean stop, 2 when the address cannot be bound."""
    from toolkit.callbacks import CallbackReceiver
    from toolkit.masking import Secret

    found = args.control_key or os.environ.get(ENV_VARS["control_key"])
    control_key = Secret(found) if found else None  # (a Secret from here on: never in a repr or a traceback)
    receiver = CallbackReceiver(control_key, host=args.host, port=args.port)
    with Stop() as stop, stop_on_signals(stop):
        return listen(receiver, stop, out=sys.stdout)


def listen(receiver: CallbackReceiver, stop: Stop, *, out: TextIO) -> int:
    """Start ``receiver`` (not yet started), print its addresses, then one line per arrival until ``stop``."""
    printer = JsonLines(out)
    receiver.observers.append(printer.arrival)
    try:
        receiver.start()
    except OSError as exc:
        print(f"gatekit listen: cannot listen on {receiver.host}:{receiver.port}: {exc}", file=sys.stderr)
        return 2
    base_url = receiver.base_url
    try:
        printer.line(_addresses(receiver))
        wait_until_stopped(stop)
    except KeyboardInterrupt:
        pass
    finally:
        receiver.stop()
    printer.line({"stopped": base_url, "received": len(receiver.received)})
    return 0


def _addresses(receiver: CallbackReceiver) -> dict[str, Any]:
    return {
        "listening": receiver.base_url,
        "callback_url": receiver.callback_url,
        "redirect_url": receiver.redirect_url,
        "control_verified": receiver.verifies_control,
    }


class JsonLines:
    """Writes whole JSON lines from any thread, flushed at once (for pipes and ``tail -f``)."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._lock = threading.Lock()

    def line(self, data: dict[str, Any]) -> None:
        text = json.dumps(data, ensure_ascii=False)
        with self._lock:
            self._out.write(text + "\n")
            self._out.flush()

    def arrival(self, record: Received) -> None:
        """An observer of the receiver: the masked record as one line."""
        self.line(record.to_dict())
