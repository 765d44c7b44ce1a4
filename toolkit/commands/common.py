"""What the subcommands share: gateway options, ``field=value`` arguments, masked JSON output (stopping on
signals: ``stopping``).

The options mirror the environment variables of ``toolkit.config`` (a flag wins over the
variable, the variable over the profile).  Nothing printed here carries a secret or card data.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TextIO, TypeAlias

from toolkit.envnames import ENV_VARS

if TYPE_CHECKING:  # the catalogue, the profiles and masking are imported when a command runs
    from toolkit.config import GatewayConfig
    from toolkit.masking import Secret
    from toolkit.operations import Operation

# The type of ``add_subparsers()``: argparse names it privately.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
Handler = Callable[[argparse.Namespace], int]

# flag -> GatewayConfig setting (and the environment variable it overrides, see toolkit.config)
GATEWAY_FLAGS = {
    "--base-url": "base_url",
    "--endpoint-id": "endpoint_id",
    "--group-id": "endpoint_group_id",
    "--login": "login",
    "--control-key": "control_key",
    "--private-key-file": "private_key_file",
    "--private-key-passphrase": "private_key_passphrase",
}

SECRET_SETTINGS = {"control_key", "private_key_passphrase"}


class UsageError(Exception):
    """A command line that cannot be carried out (exit status 2)."""


def _secret_flag(value: str) -> Secret:
    """A secret given as a flag is a ``Secret`` from the moment argparse reads it (never shown by a repr)."""
    from toolkit.masking import Secret

    return Secret(value)


def add_gateway_options(parser: argparse.ArgumentParser) -> None:
    """``--profile`` and the settings that override the profile and the environment."""
    group = parser.add_argument_group("gateway", "override the profile and the GATEWAY_* environment variables")
    group.add_argument("--profile", help="simulator, sandbox or a [profiles.NAME] of gatekit.toml (GATEKIT_PROFILE)")
    for flag, setting in GATEWAY_FLAGS.items():
        caution = " (a flag shows in ps and shell history: prefer the variable)" if setting in SECRET_SETTINGS else ""
        help_text = f"instead of {ENV_VARS[setting]}{caution}"
        if setting in SECRET_SETTINGS:
            group.add_argument(flag, dest=setting, metavar=setting.upper(), help=help_text, type=_secret_flag)
        else:
            group.add_argument(flag, dest=setting, metavar=setting.upper(), help=help_text)
    group.add_argument("--use-group", action="store_true", help="address the endpoint group instead of the endpoint")
    group.add_argument(
        "--no-validate", action="store_true", help="skip the client's checks: send what the gateway should refuse"
    )


def add_request_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("operation", metavar="OPERATION", help="an operation of `gatekit operations` (sale, sale-form)")
    parser.add_argument("fields", metavar="field=value", nargs="*", help="request fields, spec names")


def load_profile(args: argparse.Namespace) -> GatewayConfig:
    """The configuration the gateway options select."""
    from toolkit.config import load_config

    overrides = {setting: getattr(args, setting) for setting in GATEWAY_FLAGS.values()}
    return load_config(args.profile, **overrides)


def find_operation(name: str) -> Operation:
    from toolkit.operations import get_operation

    try:
        return get_operation(name)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None


def parse_fields(items: Iterable[str]) -> dict[str, str]:
    """``["amount=10.42", "currency=EUR"]`` -> a mapping; a name given twice is refused."""
    fields: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"{item.partition('=')[0]!r}: request fields are written name=value")
        if name.strip() in fields:
            raise UsageError(f"field {name.strip()} is given twice")
        fields[name.strip()] = value
    return fields


def masked(mapping: Mapping[str, str]) -> dict[str, str]:
    """Card fields masked by name, card numbers and CVVs masked in every other value."""
    from toolkit.masking import mask_fields, mask_text

    return {name: mask_text(value) for name, value in mask_fields(mapping).items()}


def print_json(data: Any, stream: TextIO | None = None) -> None:
    json.dump(data, stream or sys.stdout, indent=2, ensure_ascii=False)
    (stream or sys.stdout).write("\n")
