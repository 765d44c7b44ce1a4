"""Profiles: where the gateway is and who the merchant is; read from files and the environment once.

Built-in profiles: ``simulator`` (the default: the embedded simulator's demo merchant, a fast
polling schedule) and ``sandbox`` (everything from the environment, the gateway's advised
polling schedule).  Named profiles come from a TOML file (``gatekit.toml``, or the file named by
``GATEKIT_CONFIG``)::

    [profiles.acme-sandbox]
    base = "sandbox"
    base_url = "https://sandbox.gateway.example/paynet"
    endpoint_id = "51494"
    login = "acme"
    control_key_env = "ACME_CONTROL_KEY"      # secrets by environment variable, or control_key = "..."
    private_key_file = "keys/private-pkcs8.pem"
    callback_url = "https://hooks.acme.example/gateway"   # where the gateway can reach our receiver
    poll = { intervals = [3, 3, 5], deadline = 600 }
    in_flight = 8                              # gatekit certify: orders in flight at once (default 12)

    [profiles.acme-sandbox.payer]              # what the payer cannot read from the sandbox's pages
    challenge_password = "123456"
    approve_button = "form#acsForm button[name=approve]"

    [profiles.fast]
    base = "simulator"
    simulator = { latency = 0 }                # the embedded simulator's [simulator] settings

Environment variables win over the profile: GATEWAY_BASE_URL, GATEWAY_ENDPOINT_ID,
GATEWAY_ENDPOINT_GROUP_ID, GATEWAY_LOGIN, GATEWAY_CONTROL_KEY, GATEWAY_PRIVATE_KEY_FILE,
GATEWAY_PRIVATE_KEY_PASSPHRASE, GATEWAY_CALLBACK_URL.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric import rsa

from toolkit import demo
from toolkit.certify.options import MAX_IN_FLIGHT
from toolkit.envnames import ENV_VARS as ENV_VARS  # re-exported: the names live where --help can read them cheaply
from toolkit.keys import load_private_key
from toolkit.masking import Secret

SECRET_SETTINGS = ("control_key", "private_key_passphrase")


class ConfigError(ValueError):
    """A profile that cannot be used; the message names the setting and where to set it."""


@dataclass(frozen=True)
class PollSchedule:
    """Delays between status polls (the last one repeats) and an overall deadline, in seconds."""

    intervals: tuple[float, ...]
    deadline: float

    def __post_init__(self) -> None:
        if not self.intervals or min(self.intervals) < 0 or self.deadline <= 0:
            raise ConfigError(f"poll schedule needs delays >= 0 and a positive deadline: {self}")

    def delays(self) -> Iterator[float]:
        yield from self.intervals
        while True:
            yield self.intervals[-1]


# Behaviour section 3: every 3-5 s for the first minutes, then rarer, then rely on the callback.
SANDBOX_POLL = PollSchedule(intervals=(3.0,) * 20 + (5.0,) * 24 + (30.0,), deadline=900.0)
# The simulator decides in milliseconds: start fast, back off to a quarter second.
SIMULATOR_POLL = PollSchedule(intervals=(0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25), deadline=20.0)


@dataclass(frozen=True)
class GatewayConfig:
    """Everything the client needs.  Secrets are ``Secret`` objects and never show in a repr."""

    base_url: str
    login: str
    control_key: Secret
    endpoint_id: str | None = None
    endpoint_group_id: str | None = None
    private_key_file: Path | None = None
    private_key_passphrase: Secret | None = None
    callback_url: str | None = None
    profile: str = "custom"
    timeout: float = 30.0
    poll: PollSchedule = SIMULATOR_POLL
    user_agent: str = "gatekit"
    simulator: bool = False  # the gateway is a gatekit simulator: its control API answers at the base URL's root
    in_flight: int | None = None  # gatekit certify's orders in flight at once (None: IN_FLIGHT, or 1 when embedded)
    _private_key_pem: bytes | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        if self.endpoint_id is None and self.endpoint_group_id is None:
            raise ConfigError(
                f"profile {self.profile}: set an endpoint id or an endpoint group id "
                f"({ENV_VARS['endpoint_id']} or {ENV_VARS['endpoint_group_id']})"
            )
        if self.in_flight is not None and (
            isinstance(self.in_flight, bool) or not isinstance(self.in_flight, int)
            or not 1 <= self.in_flight <= MAX_IN_FLIGHT
        ):  # fmt: skip
            raise ConfigError(
                f"profile {self.profile}: in_flight must be a whole number from 1 to {MAX_IN_FLIGHT} (orders "
                f"in flight at once in gatekit certify), not {self.in_flight!r}"
            )

    @cached_property
    def private_key(self) -> rsa.RSAPrivateKey:
        """The RSA key for v4 operations, loaded once; ConfigError when none is configured."""
        passphrase = self.private_key_passphrase.reveal() if self.private_key_passphrase else None
        if self._private_key_pem is not None:
            return load_private_key(self._private_key_pem, passphrase)
        if self.private_key_file is None:
            raise ConfigError(
                f"profile {self.profile}: v4 operations need a private key ({ENV_VARS['private_key_file']})"
            )
        return load_private_key(self.private_key_file, passphrase)

    def with_overrides(self, **overrides: Any) -> GatewayConfig:
        """A copy with settings replaced (None values are ignored); secrets are wrapped."""
        clean = {name: _coerce(name, value) for name, value in overrides.items() if value is not None}
        if "private_key_file" in clean:  # a key file given now replaces a built-in key
            clean["_private_key_pem"] = None
        return replace(self, **clean)


def _coerce(name: str, value: Any) -> Any:
    if name in SECRET_SETTINGS and isinstance(value, str):
        return Secret(value)
    if name == "private_key_file" and isinstance(value, str):
        return Path(value)
    if name in ("endpoint_id", "endpoint_group_id") and value is not None:
        return str(value)
    return value


def simulator_config(base_url: str = demo.BASE_URL) -> GatewayConfig:
    """The embedded simulator's demo merchant (``toolkit.demo``)."""
    return GatewayConfig(
        base_url=base_url,
        login=demo.LOGIN,
        control_key=Secret(demo.CONTROL_KEY),
        endpoint_id=demo.ENDPOINT_ID,
        endpoint_group_id=demo.ENDPOINT_GROUP_ID,
        profile="simulator",
        poll=SIMULATOR_POLL,
        simulator=True,
        _private_key_pem=demo.private_key_pem(),
    )


def _file_settings(profile: str, raw: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    """A file profile's settings as GatewayConfig takes them: ``control_key_env`` read, ``poll`` built."""
    values = {name: _read(name, value) for name, value in raw.items()}
    variable = values.pop("control_key_env", None)
    if variable and env.get(variable):
        values["control_key"] = Secret(env[variable])
    poll = values.pop("poll", None)
    if poll is not None:
        try:
            values["poll"] = PollSchedule(tuple(float(s) for s in poll["intervals"]), float(poll["deadline"]))
        except (KeyError, TypeError, ValueError):
            raise ConfigError(f"profile {profile}: poll must be {{ intervals = [3, 5], deadline = 600 }}") from None
    return values


def _check_known(profile: str, values: Mapping[str, Any]) -> None:
    known = {f.name for f in fields(GatewayConfig)} - {"_private_key_pem", "profile"}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"profile {profile}: unknown settings {', '.join(unknown)}")


def _read(setting: str, value: Any) -> Any:
    """A setting as read from the environment, a file or a flag: a secret one is a ``Secret`` from this moment
    on (a traceback's locals, a repr, a log show it masked), anything else as it is."""
    if setting in SECRET_SETTINGS and isinstance(value, str):
        return Secret(value)
    return value


def _from_settings(profile: str, settings: Mapping[str, Any], key_env: str | None) -> GatewayConfig:
    values = dict(settings)
    missing = [name for name in ("base_url", "login", "control_key") if not values.get(name)]
    if missing:
        hints = ", ".join(_where(name, key_env) for name in missing)
        raise ConfigError(f"profile {profile}: missing {hints}")
    config = GatewayConfig(
        profile=profile,
        poll=values.pop("poll", SANDBOX_POLL),
        base_url=values.pop("base_url"),
        login=values.pop("login"),
        control_key=_read("control_key", values.pop("control_key")),
        endpoint_id=_coerce("endpoint_id", values.pop("endpoint_id", None)),
        endpoint_group_id=_coerce("endpoint_group_id", values.pop("endpoint_group_id", None)),
    )
    return config.with_overrides(**values)


def _where(setting: str, key_env: str | None) -> str:
    """Where a missing setting can come from: its environment variable (or the profile's own)."""
    variables = [ENV_VARS[setting], *([key_env] if setting == "control_key" and key_env else [])]
    return f"{setting} ({' or '.join(variables)})"


def config_file(env: Mapping[str, str]) -> Path | None:
    named = env.get("GATEKIT_CONFIG")
    if named:
        return Path(named)
    local = Path("gatekit.toml")
    return local if local.exists() else None


def load_profiles(path: Path | None) -> dict[str, dict[str, Any]]:
    """The ``[profiles.NAME]`` tables of a TOML file; a relative key file is relative to that file."""
    if path is None:
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    profiles = {str(name): dict(table) for name, table in data.get("profiles", {}).items()}
    for table in profiles.values():
        if "private_key_file" in table:
            table["private_key_file"] = path.parent / Path(table["private_key_file"]).expanduser()
    return profiles


SIMULATOR_TABLE = "simulator"  # [profiles.NAME.simulator]: the embedded simulator's [simulator] settings
PAYER_TABLE = "payer"  # [profiles.NAME.payer]: what the payer cannot read from the gateway's pages


def _profile_table(profile: str | None, file: Path | None, env: Mapping[str, str]) -> tuple[str, str, dict[str, Any]]:
    """(name, base, the profile's table of the file) of ``profile`` (default ``GATEKIT_PROFILE``, else simulator)."""
    name = profile or env.get("GATEKIT_PROFILE") or "simulator"
    profiles = load_profiles(file if file is not None else config_file(env))
    raw = dict(profiles.get(name, {}))
    base = raw.pop("base", name if name in ("simulator", "sandbox") else "sandbox") if name in profiles else name
    if base not in ("simulator", "sandbox"):
        names = list(dict.fromkeys(["simulator", "sandbox", *profiles]))  # (a [profiles.sandbox] said once)
        close = difflib.get_close_matches(base, names, n=1, cutoff=0.6)
        where = f"profile {name}: unknown base {base!r}" if name in profiles else f"unknown profile {name!r}"
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"{where}{hint}; known profiles: {', '.join(names)}")
    if SIMULATOR_TABLE in raw and (base != "simulator" or not isinstance(raw[SIMULATOR_TABLE], dict)):
        raise ConfigError(
            f"profile {name}: a [profiles.{name}.simulator] table sets the embedded simulator, and only a profile "
            'with base = "simulator" has one'
        )
    return name, base, raw


def simulator_settings(
    profile: str | None = None, *, env: Mapping[str, str] | None = None, file: Path | None = None
) -> dict[str, Any]:
    """The ``[profiles.NAME.simulator]`` table of a simulator profile, as written (the embedded simulator's
    ``[simulator]`` settings: latency, windows...); empty when the profile has none.  ``toolkit.certify.target``
    checks and applies them."""
    env = os.environ if env is None else env
    return dict(_profile_table(profile, file, env)[2].get(SIMULATOR_TABLE, {}))


def payer_settings(
    profile: str | None = None, *, env: Mapping[str, str] | None = None, file: Path | None = None
) -> dict[str, Any]:
    """The ``[profiles.NAME.payer]`` table of a profile, as written (``toolkit.payer.PayerSettings`` takes it:
    the challenge password or code, selectors for the payment form, the challenge and the approve button)."""
    env = os.environ if env is None else env
    name, _, raw = _profile_table(profile, file, env)
    table = raw.get(PAYER_TABLE, {})
    if not isinstance(table, dict):
        raise ConfigError(f"profile {name}: payer must be a table ([profiles.{name}.payer])")
    return dict(table)


def load_config(
    profile: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    file: Path | None = None,
    **overrides: Any,
) -> GatewayConfig:
    """The configuration of ``profile`` (default: ``GATEKIT_PROFILE`` or ``simulator``).

    Precedence: explicit ``overrides`` > environment variables > profile file > built-in profile.
    """
    env = os.environ if env is None else env
    name, base, raw = _profile_table(profile, file, env)
    raw.pop(SIMULATOR_TABLE, None)  # the embedded simulator's settings: ``simulator_settings``
    raw.pop(PAYER_TABLE, None)  # the payer's: ``payer_settings``
    from_env = {setting: _read(setting, env[var]) for setting, var in ENV_VARS.items() if env.get(var)}
    given = {setting: _read(setting, value) for setting, value in overrides.items() if value is not None}
    settings = {**_file_settings(name, raw, env), **from_env, **given}
    _check_known(name, settings)
    if base == "simulator":
        config = replace(simulator_config(settings.pop("base_url", demo.BASE_URL)), profile=name)
        return config.with_overrides(**settings)
    return _from_settings(name, settings, raw.get("control_key_env"))
