"""``gatekit trigger ACTION ...``: one-line commands against a running simulator's control API (``/_sim/``), as
``stripe trigger`` is to Stripe's.

    gatekit trigger force-status 8056020 approved [--error-code 116] [--error-message "Insufficient funds"]
    gatekit trigger chargeback 8056020 [--amount 2.50]
    gatekit trigger resend-callback 8056020
    gatekit trigger fail-callbacks [--count 3]
    gatekit trigger fault sale error [--count 2] [--seconds 1.5]
    gatekit trigger clear-faults
    gatekit trigger advance 1d
    gatekit trigger settle [8056020]

The simulator is ``--url`` (its root, ``http://127.0.0.1:8080``), or the profile's base URL without ``/paynet``
(``--profile``, ``GATEKIT_PROFILE`` or ``simulator``; ``GATEWAY_BASE_URL`` wins over the profile); the control
token ``--control-token`` or ``GATEKIT_CONTROL_TOKEN``.  Each action prints one line; ``--json`` prints the control
API's answer instead.  Exit status: 0 done; 2 an argument refused (every one named at once, with what it takes);
3 the simulator said no (an unknown order, a state that refuses it, a missing token); 4 no simulator answers.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolkit.commands.common import Subparsers, UsageError, print_json

if TYPE_CHECKING:  # the control client (and requests) are imported when the command runs, not when the CLI starts
    from toolkit.masking import Secret
    from toolkit.simcontrol import SimulatorControl, SimulatorControlError

JSON = dict[str, Any]
TOKEN_ENV = "GATEKIT_CONTROL_TOKEN"
EXIT_REFUSED_ARGUMENT = 2
EXIT_SAID_NO = 3
EXIT_NO_ANSWER = 4
UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
FINAL = ("approved", "declined", "filtered", "error")


@dataclass(frozen=True)
class Seconds:
    """A duration as given (``1d``) and in seconds."""

    given: str
    seconds: float


def duration(text: str) -> Seconds:
    """``90``, ``90s``, ``15m``, ``2h``, ``1d`` (argparse's type of ``advance``)."""
    found = re.fullmatch(r"\s*([0-9]{1,12}(?:\.[0-9]{1,6})?)\s*([smhd]?)\s*", text)
    if found is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration: seconds (90), or with a unit (90s, 15m, 2h, 1d)")
    return Seconds(text.strip(), float(found[1]) * UNITS[found[2]])


@dataclass(frozen=True)
class Action:
    """A subcommand: its arguments, the control call, and the line that says what it did."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    send: Callable[[SimulatorControl, argparse.Namespace], JSON]
    say: Callable[[JSON, argparse.Namespace], str]


def _orderid(parser: argparse.ArgumentParser, optional: bool = False) -> None:
    help_text = "the order's id (paynet-order-id)" + (" (default: every one due)" if optional else "")
    parser.add_argument("orderid", metavar="ORDERID", nargs="?" if optional else None, help=help_text)


def _count(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--count", type=int, default=1, help=f"how many {what} (default 1)")


def _force_arguments(parser: argparse.ArgumentParser) -> None:
    _orderid(parser)
    parser.add_argument("status", metavar="STATUS", help="approved, declined, filtered, error or unknown")
    parser.add_argument("--error-code", default="", help="the error code the status carries (e.g. 116)")
    parser.add_argument("--error-message", default="", help="the error message the status carries")


def _chargeback_arguments(parser: argparse.ArgumentParser) -> None:
    _orderid(parser)
    parser.add_argument("--amount", help="how much the issuer takes back (default: everything still charged)")


def _fault_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="TARGET", help="an operation (sale, status...), '*' (any) or callback")
    parser.add_argument("kind", metavar="KIND", help="error, delay, drop (an operation); fail, duplicate (callback)")
    _count(parser, "calls or callbacks")
    parser.add_argument("--seconds", type=float, default=0.0, help="the delay of a delay fault")


def _advance_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("seconds", metavar="DURATION", type=duration, help="how far: 90, 90s, 15m, 2h, 1d")


def _transaction(answer: JSON) -> str:
    return f"order {answer['orderid']}: {answer['kind']} {answer['id']}"


def _forced(answer: JSON, args: argparse.Namespace) -> str:
    carried = " ".join(part for part in (answer.get("error_code"), answer.get("error_message")) if part)
    called = answer["status"] in FINAL and (answer.get("callback_url") or answer.get("notify_url"))
    said = f"{_transaction(answer)} is now {answer['status']}" + (f": {carried}" if carried else "")
    return said + (" (its callback is on its way)" if called else "")


def _charged_back(answer: JSON, args: argparse.Namespace) -> str:
    taken = f", {answer['amount']} {answer['currency']} taken back" if answer.get("amount") else ""
    return f"{_transaction(answer)} {answer['status']}{taken}"


def _resent(answer: JSON, args: argparse.Namespace) -> str:
    resent = answer["resent"]
    where = ", ".join(delivery["url"] for delivery in resent)
    return f"order {args.orderid}: {_many(len(resent), 'callback')} queued again, to {where}"


HAPPENS = {  # a fault plan's kind -> what happens to one call, and to several
    "error": ("answers an error (HTTP 500)", "answer an error (HTTP 500)"),
    "delay": ("is answered {seconds:g} s late", "are answered {seconds:g} s late"),
    "drop": ("is dropped (the connection closes, no answer)", "are dropped (the connection closes, no answer)"),
    "fail": ("fails (not sent; it is tried again on the simulator's clock)",
             "fail (not sent; each is tried again on the simulator's clock)"),
    "duplicate": ("is sent twice", "are sent twice"),
}  # fmt: skip


def _planned(plan: JSON, args: argparse.Namespace) -> str:
    count, target, kind = plan["remaining"], plan["target"], plan["kind"]
    if target == "callback":
        nouns = ("callback attempt", "callback attempts") if kind == "fail" else ("callback", "callbacks")
    elif target == "*":
        nouns = ("call of any operation", "calls of any operation")
    else:
        nouns = (f"{target} call", f"{target} calls")
    several = count != 1
    subject = f"the next {count} {nouns[1]}" if several else f"the next {nouns[0]}"
    return f"fault plan {plan['id']}: {subject} {HAPPENS[kind][several].format(seconds=plan['seconds'])}"


def _advanced(answer: JSON, args: argparse.Namespace) -> str:
    given: Seconds = args.seconds
    how_far = f"{given.given} ({given.seconds:g} s)" if given.given[-1] in "smhd" else f"{given.seconds:g} s"
    now = answer["iso"][:19].replace("T", " ")
    return f"clock advanced {how_far}: now {now} UTC (offset {answer['offset']:g} s); what fell due is done"


def _settled(answer: JSON, args: argparse.Namespace) -> str:
    settled = answer["settled"]
    none = " (already settled)" if args.orderid else " (none was due)"
    return f"{_many(settled, 'transaction')} settled" + (none if not settled else "")


def _many(count: int, thing: str) -> str:
    return f"{count} {thing}" + ("" if count == 1 else "s")


ACTIONS = (
    Action("force-status", "decide the order's latest transaction now (a final status sends its callback)",
           _force_arguments,
           lambda c, a: c.force_status(a.orderid, a.status, a.error_code, a.error_message), _forced),
    Action("chargeback", "the issuer takes back (part of) the order's charge (called back to its notify_url)",
           _chargeback_arguments, lambda c, a: c.chargeback(a.orderid, a.amount), _charged_back),
    Action("resend-callback", "send the order's latest callback to each of its addresses again", _orderid,
           lambda c, a: {"resent": c.resend_callbacks(a.orderid)}, _resent),
    Action("fail-callbacks", "the next callback attempts fail (not sent; retried on the simulator's clock)",
           lambda p: _count(p, "callback attempts"), lambda c, a: c.add_fault("callback", "fail", a.count), _planned),
    Action("fault", "plan a fault: the next calls of an operation answer an error, late or not at all",
           _fault_arguments, lambda c, a: c.add_fault(a.target, a.kind, a.count, a.seconds), _planned),
    Action("clear-faults", "forget every fault plan", lambda p: None, lambda c, a: {"cleared": c.clear_faults()},
           lambda answer, a: f"{_many(answer['cleared'], 'fault plan')} cleared"),
    Action("advance", "move the simulator's clock: settlement, retries, deadlines and recurring charges fall due",
           _advance_arguments, lambda c, a: c.advance_clock(a.seconds.seconds), _advanced),
    Action("settle", "settle an order's approved transaction now, or every one that is due",
           lambda p: _orderid(p, optional=True), lambda c, a: {"settled": c.settle(a.orderid)}, _settled),
)  # fmt: skip


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "trigger",
        help="steer a running simulator: chargebacks, statuses, callbacks, faults, the clock, settlement",
        description="One-line commands against a running simulator's control API (/_sim/): each prints one line "
        "(--json: the API's answer). The simulator is --url, or the profile's base URL without /paynet.",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--url", help="the simulator's root URL, e.g. http://127.0.0.1:8080 (default: the profile's)")
    common.add_argument("--profile", help="the profile whose simulator to steer (default GATEKIT_PROFILE or simulator)")
    token_help = f"the simulator's control token (default ${TOKEN_ENV}; a flag shows in ps: prefer the variable)"
    common.add_argument("--control-token", type=_secret, metavar="TOKEN", help=token_help)
    common.add_argument("--json", action="store_true", help="print the control API's answer as JSON")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    for action in ACTIONS:
        sub = actions.add_parser(action.name, parents=[common], help=action.help, description=action.help)
        action.arguments(sub)
        sub.set_defaults(handler=run, trigger=action, parser=sub)


def _secret(value: str) -> Secret:
    """The control token is a ``Secret`` from the moment argparse reads it (never shown by a repr)."""
    from toolkit.masking import Secret

    return Secret(value)


def run(args: argparse.Namespace) -> int:
    from toolkit.simcontrol import SimulatorControl, SimulatorControlError

    action: Action = args.trigger
    url = root_url(args)
    token = args.control_token or os.environ.get(TOKEN_ENV) or None
    with SimulatorControl(url, token=token) as control:
        try:
            answer = action.send(control, args)
        except SimulatorControlError as exc:
            if args.json and exc.body is not None:
                print_json(exc.body)
            return refused(exc, url, args.parser)
    if args.json:
        print_json(answer)
    else:
        print(action.say(answer, args))
    return 0


def root_url(args: argparse.Namespace) -> str:
    """``--url``, or the profile's base URL without ``/paynet`` (UsageError for a profile that is no simulator)."""
    if args.url:
        return str(args.url).rstrip("/")
    from toolkit.config import load_config

    config = load_config(args.profile)
    if not config.simulator:
        raise UsageError(f"profile {config.profile} ({config.base_url}) is not a gatekit simulator: only a simulator "
                         "has a control API; give --url of one")  # fmt: skip
    return config.base_url.removesuffix("/paynet")


def refused(error: SimulatorControlError, url: str, parser: argparse.ArgumentParser) -> int:
    """Say why the call did not go through, naming the command line's arguments; the exit status."""
    if error.http_status is None:
        why = "connection refused" if "refused" in str(error.__cause__) else str(error).rpartition(": ")[2]
        say(f"no simulator answers at {url} ({why}); start one (gatekit simulate), or give --url or --profile")
        return EXIT_NO_ANSWER
    if error.body is None:
        say(f"{url} is not a gatekit simulator (HTTP {error.http_status} without the control API's answer)")
        return EXIT_NO_ANSWER
    names = argument_names(parser)
    lines = [_named(problem, names) for problem in error.problems] or [str(error.body.get("error"))]
    if error.http_status != 400:
        hint = f"; set {TOKEN_ENV} or give --control-token" if error.http_status == 401 else ""
        say(f"{'; '.join(lines)} (HTTP {error.http_status}){hint}")
        return EXIT_SAID_NO
    if len(lines) == 1:
        say(lines[0])
    else:
        route = error.body.get("route", "")
        say("\n".join([f"{url} refused {len(lines)} arguments of {route}:", *(f"  {line}" for line in lines)]))
    return EXIT_REFUSED_ARGUMENT


def argument_names(parser: argparse.ArgumentParser) -> dict[str, str]:
    """The control API's name of each argument -> the command line's (``count`` -> ``--count``)."""
    return {
        action.dest: action.option_strings[0] if action.option_strings else str(action.metavar or action.dest)
        for action in parser._actions
    }


def _named(problem: JSON, names: dict[str, str]) -> str:
    field, error = str(problem.get("field", "")), str(problem.get("error", ""))
    return f"{names.get(field, field)}: {error.removeprefix(f'{field}: ')}"


def say(message: str) -> None:
    from toolkit.masking import mask_text

    print(f"gatekit trigger: {mask_text(message)}", file=sys.stderr)
