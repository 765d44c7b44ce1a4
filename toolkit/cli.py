"""``gatekit``: the command line.  Each subcommand is a module of ``toolkit.commands``.

To add one, write ``toolkit/commands/NAME.py`` with ``register(subparsers)`` (which sets a
``handler`` default: ``handler(args) -> int``) and append ``"NAME"`` to ``COMMANDS``.

Exit status: 0 done; 2 usage, configuration, key or request refused before sending;
3 the gateway said no (ApiError); 4 no answer or not a gateway answer; 1 any other gateway error; 130 Ctrl-C.

The parser is built from the command modules' ``register`` alone: a command module imports what
it runs on (the client, the simulator, pytest) inside its handler, so that ``gatekit --help``,
``gatekit sign`` and ``gatekit call`` start without the simulator, its web server or pytest
(``tests/test_lazy_imports.py`` checks which modules each command loads).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from toolkit._version import __version__
from toolkit.commands.common import Handler, UsageError

COMMANDS = ["init", "certify", "call", "sign", "keys", "operations", "listen", "simulate", "trigger", "proxy",
            "drift", "load", "notebooks"]  # fmt: skip

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_REFUSED = 3
EXIT_TRANSPORT = 4
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)


def _exit_codes() -> tuple[tuple[type[Exception], int], ...]:
    """Error class -> exit status, first match wins (imported when an error comes, not at start-up)."""
    from toolkit.config import ConfigError
    from toolkit.errors import ApiError, GatewayError, InvalidRequestError, ProtocolError, TransportError
    from toolkit.keys import KeyProblem

    return (
        (UsageError, EXIT_USAGE),
        (ConfigError, EXIT_USAGE),
        (KeyProblem, EXIT_USAGE),
        (InvalidRequestError, EXIT_USAGE),
        (ApiError, EXIT_REFUSED),
        (TransportError, EXIT_TRANSPORT),
        (ProtocolError, EXIT_TRANSPORT),
        (GatewayError, EXIT_FAILED),
    )


def mask_text(text: str) -> str:
    """``toolkit.masking.mask_text``, imported when there is something to mask."""
    from toolkit.masking import mask_text as mask

    return mask(text)


class MaskingParser(argparse.ArgumentParser):
    """argparse, with card data masked in its errors (``unrecognized arguments: cvv2=123`` shows ``cvv2=***``)."""

    def error(self, message: str) -> NoReturn:
        super().error(mask_text(message))


def build_parser() -> argparse.ArgumentParser:
    parser = MaskingParser(prog="gatekit", description="Integration-testing toolkit for the card-processing gateway.")
    parser.add_argument("--version", action="version", version=f"gatekit {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"toolkit.commands.{name}").register(subparsers)
    return parser


def exit_code(error: Exception) -> int | None:
    """The exit status an error stands for; None for an error that is a bug (it propagates)."""
    return next((code for cls, code in _exit_codes() if isinstance(error, cls)), None)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parse(parser, argv)
    except SystemExit as exc:  # --help, --version, or a usage error already printed by argparse
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    handler: Handler = args.handler
    try:
        return handler(args)
    except BrokenPipeError:  # the reader went away (``gatekit operations | head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    except KeyboardInterrupt:  # Ctrl-C: one line, never a traceback
        print(f"\ngatekit {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as error:
        code = exit_code(error)
        if code is None:  # a bug of gatekit: one masked line, never a traceback that may carry card data
            print(f"gatekit {args.command}: unexpected {error.__class__.__name__}: {mask_text(str(error))[:500]}"
                  " (a bug of gatekit: please report it)", file=sys.stderr)  # fmt: skip
            return EXIT_FAILED
        print(f"gatekit {args.command}: {mask_text(str(error))}", file=sys.stderr)
        return code


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse the command line; ``field=value`` arguments may also come after the options."""
    args, extra = parser.parse_known_args(argv)
    if extra and isinstance(getattr(args, "fields", None), list) and all(_is_field(item) for item in extra):
        args.fields.extend(extra)
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def _is_field(item: str) -> bool:
    return "=" in item and not item.startswith("-")


if __name__ == "__main__":
    sys.exit(main())
