"""``gatekit sign OPERATION field=value ...``: show what would be signed, without sending.

Control operations: the formula, each part with its value, the concatenation and the control.
OAuth operations: the signature base string, the signature and the Authorization header.
``--timestamp`` and ``--nonce`` make the output reproducible, so that a person can compare it
with what the gateway expects.  The control key is never shown (``<merchant_control_key>`` stands
for it).  Card data is masked unless ``--show-card-data``: the output then says which values are
masked, because the signature is computed over the real ones; with the flag, the base string
and the body are those signed, and the signature can be recomputed from what is printed.
A request that breaks the catalogue's rules is not signed (``--no-validate`` signs it as given).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolkit.commands.common import (
    Subparsers,
    UsageError,
    add_gateway_options,
    add_request_arguments,
    find_operation,
    load_profile,
    masked,
    parse_fields,
    print_json,
)

if TYPE_CHECKING:  # the client, signing and the keys are imported when the command runs
    from toolkit.auth import SignatureTrace
    from toolkit.client import PreparedCall
    from toolkit.config import GatewayConfig
    from toolkit.operations import AuthScheme

KEY_PLACEHOLDER = "<merchant_control_key>"
# The text output: the report's keys in this order; labels differ from keys only here.
_ORDER = (
    "request",
    "masked",
    "scheme",
    "formula",
    "input",
    "control",
    "key",
    "oauth",
    "base_string",
    "signature",
    "authorization",
    "body",
)
_LABELS = {"base_string": "base string", "authorization": "Authorization"}
MASKED_NOTE = (
    "{fields}: shown masked below; the signature is computed over the real values, so it cannot be "
    "recomputed from this output (--show-card-data prints them)"
)


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "sign",
        help="show the control or the OAuth signature of a request, without sending it",
        description="Build and sign OPERATION as `gatekit call` would, and print what was signed.",
    )
    add_request_arguments(parser)
    add_gateway_options(parser)
    parser.add_argument("--nonce", help="oauth_nonce to use (default: random)")
    parser.add_argument("--timestamp", type=int, help="oauth_timestamp to use, in seconds (default: now)")
    parser.add_argument(
        "--show-card-data",
        action="store_true",
        help="print card numbers and CVV2 as given (masked by default), so that the base string and the body "
        "reproduce the signature; the control key is never printed",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.client import GatewayClient
    from toolkit.errors import InvalidRequestError
    from toolkit.signing import new_nonce

    operation = find_operation(args.operation)
    config = load_profile(args)
    clock: Callable[[], float] = time.time if args.timestamp is None else lambda: float(args.timestamp)
    nonce: Callable[[], str] = new_nonce if args.nonce is None else lambda: str(args.nonce)
    with GatewayClient(config, clock=clock, nonce=nonce, validate=not args.no_validate) as client:
        try:
            call = client.prepare(operation, parse_fields(args.fields), use_group=args.use_group)
        except InvalidRequestError as error:
            problems = "; ".join(str(problem) for problem in error.problems)
            raise UsageError(f"{operation.name}: not signed: {problems} (--no-validate signs it as given)") from None
    report = describe(call, config, show_card_data=args.show_card_data)
    if args.json:
        print_json(report)
    else:
        print(render(report))
    return 0


def describe(call: PreparedCall, config: GatewayConfig, *, show_card_data: bool = False) -> dict[str, Any]:
    """What was signed, as plain data: the control key as a placeholder, card data masked unless asked for.

    ``masked`` names the fields shown masked (the signature is over their real values).
    """
    from toolkit.operations import AuthScheme
    from toolkit.wire import decode_request_body

    op, sent = call.operation, dict(decode_request_body(call.request.body))
    body = sent if show_card_data else masked(sent)
    trace = call.trace if show_card_data or call.trace is None else call.trace.masked()
    report: dict[str, Any] = {
        "operation": op.name,
        "code": op.code,
        "request": f"{call.request.method} {call.request.url}",
        "masked": sorted(name for name, value in sent.items() if body[name] != value),
        "scheme": op.auth.value,
    }
    if trace is not None:
        report |= _control_report(trace) if op.auth is AuthScheme.CONTROL else _oauth_report(trace, op.auth, config)
    report["body"] = body
    return report


def _control_report(trace: SignatureTrace) -> dict[str, Any]:
    parts = [*trace.parts, ("merchant_control_key", KEY_PLACEHOLDER)]
    return {
        "formula": trace.formula,
        "parts": [{"name": name, "value": value} for name, value in parts],
        "input": "".join(value for _, value in parts),
        "control": trace.control,
    }


def _oauth_report(trace: SignatureTrace, scheme: AuthScheme, config: GatewayConfig) -> dict[str, Any]:
    from toolkit.signing import parse_authorization_header

    header = parse_authorization_header(trace.header)
    return {
        "key": _signing_key(scheme, config),
        "oauth": {name: value for name, value in header.items() if name != "oauth_signature"},
        "base_string": trace.base_string,
        "signature": trace.signature,
        "authorization": trace.header,
    }


def _signing_key(scheme: AuthScheme, config: GatewayConfig) -> str:
    from toolkit.keys import fingerprint
    from toolkit.operations import AuthScheme

    if scheme is AuthScheme.OAUTH_HMAC_SHA1:
        return f"{KEY_PLACEHOLDER}& (HMAC-SHA1 key: control key, '&', empty token secret)"
    key = config.private_key
    return f"RSA private key, {key.key_size} bits, public key SHA-256 {fingerprint(key)}"


def render(report: dict[str, Any]) -> str:
    """The report as aligned ``label  value`` lines; the formula parts indented under it."""
    width = max(len(_LABELS.get(name, name)) for name in _ORDER) + 2
    lines = [f"{report['operation']} ({report['code'] or 'code not shown'})"]
    for name in (name for name in _ORDER if name in report):
        value = report[name]
        if name == "masked":
            if not value:
                continue
            value = MASKED_NOTE.format(fields=", ".join(value))
        if isinstance(value, dict):
            value = "&".join(f"{k}={v}" for k, v in value.items())
        lines.append(f"{_LABELS.get(name, name):<{width}}{value}")
        if name == "formula":
            part_width = max(len(part["name"]) for part in report["parts"]) + 2
            lines += [f"  {part['name']:<{part_width}}{part['value']}" for part in report["parts"]]
    return "\n".join(lines)
