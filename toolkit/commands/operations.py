"""``gatekit operations [--json]``: the catalogue as the client and the simulator read it."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from toolkit.commands.common import Subparsers, print_json

if TYPE_CHECKING:  # the catalogue is imported when the command runs, not when the CLI starts
    from toolkit.operations import Operation


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "operations",
        help="list the operations of the catalogue",
        description="Every operation: path, code, authentication, control formula, required fields, assumptions.",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.operations import iter_operations

    if args.json:
        print_json([describe(op) for op in iter_operations()])
    else:
        print("\n\n".join(render(op) for op in iter_operations()))
    return 0


def describe(op: Operation) -> dict[str, Any]:
    """One operation as plain data."""
    return {
        "name": op.name,
        "path": op.path,
        "group_path": op.group_path if op.group else None,
        "code": op.code,
        "auth": op.auth.value,
        "control": op.control.text if op.control else None,
        "required": list(op.required),
        "one_of": [list(names) for names in op.one_of],
        "together": [list(names) for names in op.together],
        "optional": list(op.optional),
        "response": op.response.value,
        "summary": op.summary,
        "assumed": list(op.assumed),
    }


def render(op: Operation) -> str:
    """One operation as a few lines of text."""
    lines = [f"{op.name}  POST {op.path}  {op.code or '(code not shown)'}  {op.auth.value}", f"  {op.summary}"]
    if op.control:
        lines.append(f"  control:  {op.control.text}")
    lines.append(f"  required: {', '.join(op.required) or '-'}")
    lines += [f"  one of:   {', '.join(names)}" for names in op.one_of]
    lines += [f"  together: {', '.join(names)}" for names in op.together]
    lines.append(f"  group:    {op.group_path if op.group else 'no'}")
    lines += [f"  assumed:  {note}" for note in op.assumed]
    return "\n".join(lines)
