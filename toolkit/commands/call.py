"""``gatekit call OPERATION field=value ...``: send one operation and print the decoded response.

The response (the raw mapping, card data masked) goes to stdout as JSON, also when the gateway
says no; the error goes to stderr and sets the exit status (see ``toolkit.cli``).
"""

from __future__ import annotations

import argparse

from toolkit.client import GatewayClient
from toolkit.commands.common import (
    Subparsers,
    add_gateway_options,
    add_request_arguments,
    find_operation,
    load_profile,
    masked,
    parse_fields,
    print_json,
)
from toolkit.errors import ApiError


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
    operation = find_operation(args.operation)
    fields = parse_fields(args.fields)
    with GatewayClient(load_profile(args), validate=not args.no_validate) as client:
        try:
            response = client.call(operation, fields, use_group=args.use_group)
        except ApiError as exc:
            print_json(masked(exc.response))
            raise
    print_json(masked(response.raw))
    return 0
