"""``gatekit call OPERATION field=value ...``: send one operation and print the decoded response.

The response (the raw mapping, card data masked) goes to stdout as JSON, also when the gateway
says no; the error goes to stderr and sets the exit status (see ``toolkit.cli``).  When nothing
listens at the profile's address the error says what to do: start ``gatekit simulate`` or fix the
profile's ``base_url``.  A field the operation does not know is said as the proxy says it: a near miss
of one of its fields (``ammount``) is refused naming the field it meant (``--no-validate`` sends it, saying
so), any other is sent with a note that the gateway ignores it.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Iterator, Mapping
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

if TYPE_CHECKING:  # the client (and requests) are imported when the command runs, not when the CLI starts
    from toolkit.client import GatewayClient, PreparedCall
    from toolkit.config import GatewayConfig
    from toolkit.errors import TransportError
    from toolkit.operations import Operation
    from toolkit.validation import Problem


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "call",
        help="send any operation of the catalogue and print the response",
        description="Send OPERATION with the configured credentials; print the decoded response as JSON.",
    )
    add_request_arguments(parser)
    add_gateway_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.client import GatewayClient
    from toolkit.errors import ApiError, TransportError

    operation = find_operation(args.operation)
    fields = request_names(parse_fields(args.fields))
    misspelled = unknown_fields(operation, fields)
    config = load_profile(args)
    with GatewayClient(config, validate=not args.no_validate) as client:
        call = prepare(client, operation, fields, misspelled, use_group=args.use_group)
        try:
            response = client.send(call)
        except ApiError as exc:
            print_json(masked(exc.response))
            raise
        except TransportError as exc:
            if not refused(exc):
                raise
            message = f"{exc.message} (connection refused: nothing listens there); {hint(config)}"
            raise TransportError(message, operation=exc.operation) from exc
    print_json(masked(response.raw))
    follow_up = next_call(response.raw) if "status" not in operation.name else None
    if follow_up:
        print(f"next: {follow_up}", file=sys.stderr)
    return 0


def unknown_fields(operation: Operation, fields: Mapping[str, str]) -> list[Problem]:
    """The fields ``operation`` does not know (by their wire names), said as the proxy says them: a near miss of
    one of its fields is returned, naming the field it meant; the others are noted on stderr and sent."""
    from toolkit.operations import LOGIN
    from toolkit.validation import Problem, meant_field

    misspelled, ignored = [], []
    for name in fields:
        if operation.knows(operation.wire_name(name)) or name in ("control", LOGIN) or name.startswith("oauth_"):
            continue
        guess = meant_field(operation, name)
        if guess is None:
            ignored.append(name)
        else:
            rule = f"not a field of {operation.name}, did you mean {guess}? (the gateway ignores {name})"
            misspelled.append(Problem(name, rule))
    if ignored:
        print(f"note: fields {operation.name} does not know (the gateway ignores them): {', '.join(ignored)}",
              file=sys.stderr)  # fmt: skip
    return misspelled


def prepare(
    client: GatewayClient, operation: Operation, fields: Mapping[str, str], misspelled: list[Problem], **options: Any
) -> PreparedCall:
    """The signed call; a misspelled field is refused first, with what else the client refuses, in one answer (or
    noted and sent, when the client does not validate)."""
    from toolkit.errors import InvalidRequestError

    if misspelled and not client.validate:
        for problem in misspelled:
            print(f"note: {problem}", file=sys.stderr)
        misspelled = []
    try:
        call = client.prepare(operation, dict(fields), **options)
    except InvalidRequestError as exc:
        raise InvalidRequestError(operation.name, [*misspelled, *exc.problems]) from None
    if misspelled:
        raise InvalidRequestError(operation.name, misspelled)
    return call


# the answers' names of the order's ids -> the names requests give them
ANSWER_NAMES = {"paynet-order-id": "orderid", "merchant-order-id": "client_orderid"}


def request_names(fields: dict[str, str]) -> dict[str, str]:
    """``paynet-order-id=...`` copied from an answer is sent as ``orderid`` (and ``merchant-order-id`` as
    ``client_orderid``), saying so; given both ways, the request's own name is refused as given twice."""
    renamed: dict[str, str] = {}
    for name, value in fields.items():
        target = ANSWER_NAMES.get(name)
        if target is None:
            renamed[name] = value
            continue
        if target in fields:
            raise UsageError(f"field {target} is given twice (also as {name}, the answer's name for it)")
        print(f"note: {name} is the answer's name; requests call it {target}: sent as {target}", file=sys.stderr)
        renamed[target] = value
    return renamed


def next_call(answer: Mapping[str, str]) -> str | None:
    """How to ask for the order's status, with the request's names for the answer's ids."""
    orderid, client_orderid = answer.get("paynet-order-id"), answer.get("merchant-order-id")
    if not orderid or not client_orderid:
        return None
    return f"gatekit call status client_orderid={shlex.quote(client_orderid)} orderid={shlex.quote(orderid)}"


def _causes(error: BaseException) -> Iterator[BaseException]:
    """The error and every exception behind it (causes, contexts, urllib3's ``reason``)."""
    seen: set[int] = set()
    todo = [error]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        behind = (current.__cause__, current.__context__, getattr(current, "reason", None), *current.args)
        todo += [found for found in behind if isinstance(found, BaseException)]


def refused(error: TransportError) -> bool:
    """The connection was refused: nothing listens at the address."""
    return any(isinstance(cause, ConnectionRefusedError) for cause in _causes(error))


def hint(config: GatewayConfig) -> str:
    from toolkit import demo

    if config.base_url == demo.BASE_URL:
        return "start the simulator first (gatekit simulate, in another terminal), or give --base-url"
    return f"check the base_url of profile {config.profile} (--base-url, GATEWAY_BASE_URL or gatekit.toml)"
