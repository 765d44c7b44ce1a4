"""Simulator settings: the ``[simulator]`` table and ``[[merchant]]`` tables of a TOML file.

    [simulator]
    latency = 0.0                      # seconds before the engine decides (status says processing)
    timestamp_window = 300             # OAuth timestamp tolerance, either side (behaviour 8)
    callback_retry = [1, 2, 4, 8, 16]  # seconds between callback attempts, on the simulator's clock
    callback_timeout = 5.0             # seconds to wait for the merchant's answer
    settlement_after = 86400           # approved sales and captures settle after this many seconds
    challenge_timeout = 900            # a 3-D Secure result not uploaded by then declines
    method_timeout = 10                # the 3-D Secure method window (spec 8): then the step counts as N
    form_timeout = 1800                # a hosted payment page not submitted by then expires (declined)
    page_style = "standard"            # "alternate": hosted and ACS pages with other ids, names and layout
    answer_delay = 0.0                 # seconds every gateway answer waits (a slow network or gateway)
    omit_fields = ["descriptor"]       # answer fields left out (a gateway that sends fewer)
    max_body_bytes = 65536             # a bigger request body is refused with 413
    request_timeout = 10.0             # seconds to receive a whole request (idle, slow headers, slow body)
    connections_per_client = 1024      # connections one client address may hold; idle ones are closed first
    journal_size = 10000               # journal entries kept in memory (a ring); with --db: rows kept
    journal_retention = 604800         # with --db: journal rows older than this many seconds are dropped
    callback_hosts = ["hooks.acme.example", "10.0.0.5:9000"]  # callback hosts besides loopback
    public_url = "http://sim.example:8080"  # the base of addresses handed out (default: the socket's own)
    lenient = false                   # true: forgive what the production gateway refuses (journal warns)
    answer_latency = { p50 = 0.3, p99 = 2.0 }  # load shaping (``toolkit.simulator.shaping``): answers wait a draw
    decline_rate = 0.05                # card payments declined whatever their CVV2
    fault_rate = { error = 0.01, drop = 0.005, timeout = 0.002 }  # gateway requests that go wrong
    callback_delay = { p50 = 1.0, p99 = 10.0 }  # seconds before a callback's first attempt

    [simulator.outcomes]               # rows of the CVV2 outcome table replaced (after the keys above)
    "116" = { status = "declined", error_code = "05", error_message = "Do not honor" }

    [[merchant]]
    login = "acme"
    control_key = "..."
    endpoint_ids = [51494]
    endpoint_group_ids = [7001]
    rsa_public_key_file = "keys/public.pem"
    payout_balance = "1000.00"
    currency = "EUR"
    lenient = false                    # this merchant only (default: the [simulator] setting)

Without a file the documented demo merchant of ``toolkit.demo`` exists.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cryptography.hazmat.primitives.asymmetric import rsa

from toolkit import demo
from toolkit.keys import KeyProblem, load_public_key
from toolkit.masking import Secret
from toolkit.models import Status
from toolkit.money import MoneyError, currency_exponent, to_minor_units
from toolkit.simulator.shaping import (
    FaultRates,
    Latency,
    ShapeError,
    parse_fault_rates,
    parse_latency,
    parse_share,
)
from toolkit.testdata.outcomes import CardOutcome, outcome_for_cvv


class SettingsError(ValueError):
    """A simulator configuration that cannot start; the message says which setting and why."""


@dataclass(frozen=True)
class Merchant:
    login: str
    control_key: Secret
    endpoint_ids: tuple[str, ...]
    endpoint_group_ids: tuple[str, ...] = ()
    rsa_public_key: rsa.RSAPublicKey | None = field(default=None, repr=False, compare=False)
    payout_balance: Decimal = Decimal("0")
    currency: str = "EUR"
    lenient: bool | None = None  # None: the simulator's setting

    @property
    def payout_balance_minor(self) -> int:
        return to_minor_units(self.payout_balance, self.currency) if self.payout_balance > 0 else 0


@dataclass(frozen=True)
class SimulatorSettings:
    merchants: tuple[Merchant, ...]
    latency: float = 0.0
    timestamp_window: int = 300
    callback_retry: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
    callback_timeout: float = 5.0
    settlement_after: float = 86400.0
    challenge_timeout: float = 900.0
    method_timeout: float = 10.0  # spec section 8
    form_timeout: float = 1800.0  # a hosted payment page not submitted by then expires: the order declines
    page_style: str = "standard"  # "alternate": the payer's pages with other ids, names and layout (issue 24)
    # A gateway that differs (a stand-in for a sandbox, a slower or otherwise worded one): each answer waits
    # ``answer_delay`` seconds, answers leave out ``omit_fields``, and ``outcomes`` replaces rows of the CVV2 table.
    answer_delay: float = 0.0
    omit_fields: tuple[str, ...] = ()
    outcomes: tuple[CardOutcome, ...] = field(default=(), compare=False)
    lenient: bool = False  # forgive what the production gateway refuses (with a journal warning)
    # The simulator as a network service (issue 9): limits, timeouts, the journal, callbacks, addresses.
    max_body_bytes: int = 65536
    request_timeout: float = 10.0
    connections_per_client: int = 1024  # connections one client address may hold (idle ones are closed first)
    journal_size: int = 10_000
    journal_retention: float = 7 * 86400.0
    callback_hosts: tuple[str, ...] = ()
    public_url: str = ""
    # load shaping (``toolkit.simulator.shaping``): none by default
    answer_latency: Latency | None = None
    decline_rate: float = 0.0
    fault_rate: FaultRates = field(default_factory=FaultRates)
    callback_delay: Latency | None = None
    control_token: Secret | None = field(default=None, repr=False, compare=False)  # --control-token only

    def is_lenient(self, merchant: Merchant) -> bool:
        """Whether requests of ``merchant`` are checked leniently (its own setting wins)."""
        return self.lenient if merchant.lenient is None else merchant.lenient

    def outcome_for_cvv(self, cvv2: str) -> CardOutcome:
        """The outcome table's row for a CVV2, or the row ``outcomes`` puts in its place."""
        cvv2 = cvv2.strip()
        return next((outcome for outcome in self.outcomes if outcome.cvv2 == cvv2), None) or outcome_for_cvv(cvv2)

    def merchant_by_login(self, login: str) -> Merchant | None:
        return next((m for m in self.merchants if m.login == login), None)


def demo_merchant() -> Merchant:
    return Merchant(
        login=demo.LOGIN,
        control_key=Secret(demo.CONTROL_KEY),
        endpoint_ids=(demo.ENDPOINT_ID,),
        endpoint_group_ids=(demo.ENDPOINT_GROUP_ID,),
        rsa_public_key=load_public_key(demo.public_key_pem()),
        payout_balance=Decimal(demo.PAYOUT_BALANCE),
        currency=demo.CURRENCY,
    )


def default_settings(**overrides: Any) -> SimulatorSettings:
    return SimulatorSettings(merchants=(demo_merchant(),), **overrides)


MERCHANT_SETTINGS = (
    "login",
    "control_key",
    "endpoint_ids",
    "endpoint_group_ids",
    "rsa_public_key_file",
    "payout_balance",
    "currency",
    "lenient",
)
SIMULATOR_SETTINGS = tuple(
    name for name in SimulatorSettings.__dataclass_fields__ if name not in ("merchants", "control_token")
)


def _unknown(where: str, table: dict[str, Any], known: tuple[str, ...]) -> None:
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise SettingsError(f"{where}: unknown settings {', '.join(unknown)}; known: {', '.join(known)}")


def _ids(where: str, table: dict[str, Any], name: str) -> tuple[str, ...]:
    values = table.get(name, [])
    if not isinstance(values, list) or not all(str(v).isdigit() and not isinstance(v, bool) for v in values):
        raise SettingsError(f"{where}: {name} must be a list of numeric ids, e.g. [51494], got {values!r}")
    return tuple(str(v) for v in values)


def _merchant(table: dict[str, Any], base: Path, index: int) -> Merchant:
    where = f"[[merchant]] #{index + 1}"
    _unknown(where, table, MERCHANT_SETTINGS)
    for name in ("login", "control_key", "endpoint_ids"):
        if not table.get(name):
            raise SettingsError(f"{where}: '{name}' is required")
    key_file = table.get("rsa_public_key_file")
    public_key = None
    if key_file:
        path = base / key_file  # an absolute key_file stays as it is
        try:
            public_key = load_public_key(path)
        except (KeyProblem, OSError) as exc:
            raise SettingsError(f"{where} ({table['login']}): rsa_public_key_file {path}: {exc}") from None
    currency = str(table.get("currency", "EUR"))
    try:
        balance = Decimal(str(table.get("payout_balance", "0")))
        currency_exponent(currency)
        if balance < 0 or not balance.is_finite():
            raise MoneyError("payout_balance", f"{balance} must be zero or a positive amount")
        if balance:
            to_minor_units(balance, currency)
    except MoneyError as exc:
        raise SettingsError(f"{where}: payout_balance/currency: {exc}") from None
    except InvalidOperation:
        raise SettingsError(f"{where}: payout_balance {table['payout_balance']!r} is not an amount") from None
    lenient = table.get("lenient")
    if lenient is not None and not isinstance(lenient, bool):
        raise SettingsError(f"{where}: lenient must be true or false, got {lenient!r}")
    return Merchant(
        login=str(table["login"]),
        control_key=Secret(str(table["control_key"])),
        endpoint_ids=_ids(where, table, "endpoint_ids"),
        endpoint_group_ids=_ids(where, table, "endpoint_group_ids"),
        rsa_public_key=public_key,
        payout_balance=balance,
        currency=currency,
        lenient=lenient,
    )


def _seconds(where: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise SettingsError(f"{where}: {name} must be a number of seconds >= 0, got {value!r}")
    return value


def _count(where: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SettingsError(f"{where}: {name} must be a whole number >= 1, got {value!r}")
    return value


def _positive(where: str, name: str, value: Any) -> float:
    if _seconds(where, name, value) <= 0:
        raise SettingsError(f"{where}: {name} must be a number of seconds > 0, got {value!r}")
    return float(value)


def _flag(where: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise SettingsError(f"{where}: {name} must be true or false, got {value!r}")
    return value


def _retry(where: str, name: str, value: Any) -> tuple[float, ...]:
    if not isinstance(value, list) or not value:
        raise SettingsError(f"{where}: callback_retry must be a list of seconds, e.g. [1, 2, 4]")
    return tuple(float(_seconds(where, name, item)) for item in value)


def _hosts(where: str, name: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise SettingsError(f'{where}: {name} must be a list of host names, e.g. ["hooks.acme.example"]')
    return tuple(item.strip().lower() for item in value)


def _names(where: str, name: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise SettingsError(f'{where}: {name} must be a list of field names, e.g. ["descriptor"]')
    return tuple(item.strip() for item in value)


_OUTCOME_KEYS = ("status", "error_code", "error_message")


def _outcomes(where: str, name: str, value: Any) -> tuple[CardOutcome, ...]:
    """``[simulator.outcomes]``: CVV2 -> ``{status, error_code, error_message}``, each replacing its table row."""
    if not isinstance(value, dict):
        raise SettingsError(f'{where}: {name} must be a table, e.g. "116" = {{ status = "declined", ... }}')
    rows = []
    for cvv2, row in value.items():
        if not (cvv2.isascii() and cvv2.isdigit() and len(cvv2) in (3, 4)) or not isinstance(row, dict):
            raise SettingsError(
                f'{where}: {name}: "{cvv2}" must be a CVV2 (3 or 4 digits) with a table of {_OUTCOME_KEYS}'
            )
        unknown = sorted(set(row) - set(_OUTCOME_KEYS))
        if unknown or "status" not in row:
            raise SettingsError(
                f"{where}: {name} {cvv2}: give status (and error_code, error_message); unknown {unknown}"
            )
        try:
            status = Status(str(row["status"]))
        except ValueError:
            raise SettingsError(f"{where}: {name} {cvv2}: status {row['status']!r} is not a gateway status") from None
        base = outcome_for_cvv(cvv2)
        rows.append(CardOutcome(f"{base.name} (as configured)", cvv2, status, base.three_ds,
                                str(row.get("error_code", "")), str(row.get("error_message", "")),
                                f"{status.value} (configured)"))  # fmt: skip
    return tuple(rows)


PAGE_STYLES = ("standard", "alternate")


def _page_style(where: str, name: str, value: Any) -> str:
    if value not in PAGE_STYLES:
        raise SettingsError(f"{where}: {name} must be one of {', '.join(PAGE_STYLES)}, got {value!r}")
    return str(value)


def _public_url(where: str, name: str, value: Any) -> str:
    problem = public_url_problem(value) if isinstance(value, str) else "must be a string"
    if problem:
        raise SettingsError(f"{where}: {name} {problem}")
    return str(value).rstrip("/")


def public_url_problem(value: str) -> str | None:
    """Why ``value`` cannot be the simulator's public base URL (``http://host:port``), or None."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.query:
        return f"must be an http(s) URL like http://sim.example:8080, got {value!r}"
    if parts.path.rstrip("/"):
        return f"must not have a path (the simulator serves /paynet under it), got {value!r}"
    return None


def _shaped(parser: Any) -> Any:
    def parse(where: str, name: str, value: Any) -> Any:
        try:
            return parser(where, name, value)
        except ShapeError as exc:
            raise SettingsError(str(exc)) from None

    return parse


_PARSERS = {
    "answer_latency": _shaped(parse_latency),
    "callback_delay": _shaped(parse_latency),
    "decline_rate": _shaped(parse_share),
    "fault_rate": _shaped(parse_fault_rates),
    "callback_retry": _retry,
    "lenient": _flag,
    "max_body_bytes": _count,
    "journal_size": _count,
    "request_timeout": _positive,
    "connections_per_client": _count,
    "callback_hosts": _hosts,
    "public_url": _public_url,
    "page_style": _page_style,
    "omit_fields": _names,
    "outcomes": _outcomes,
}


def simulator_table(table: dict[str, Any], where: str) -> dict[str, Any]:
    """The [simulator] table, checked: known names, numbers of seconds unless ``_PARSERS`` says otherwise.

    ``SettingsError`` names ``where`` and the setting."""
    _unknown(where, table, SIMULATOR_SETTINGS)
    return {name: _PARSERS.get(name, _seconds)(where, name, value) for name, value in table.items()}


def load_settings(path: Path | None) -> SimulatorSettings:
    """Settings from a TOML file, or the demo merchant alone when ``path`` is None."""
    if path is None:
        return default_settings()
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path}: {exc}") from None
    _unknown(str(path), data, ("simulator", "merchant"))
    simulator, tables = data.get("simulator", {}), data.get("merchant", [])
    if not isinstance(tables, list) or not isinstance(simulator, dict):
        raise SettingsError(f"{path}: write one [simulator] table and [[merchant]] tables (double brackets)")
    merchants = tuple(_merchant(t, path.parent, i) for i, t in enumerate(tables)) or (demo_merchant(),)
    _check_unique_ids(merchants)
    return SimulatorSettings(merchants=merchants, **simulator_table(simulator, f"{path} [simulator]"))


def _check_unique_ids(merchants: tuple[Merchant, ...]) -> None:
    seen: dict[str, str] = {}
    for merchant in merchants:
        for endpoint in (*merchant.endpoint_ids, *merchant.endpoint_group_ids):
            if endpoint in seen:
                raise SettingsError(f"endpoint id {endpoint} belongs to both {seen[endpoint]} and {merchant.login}")
            seen[endpoint] = merchant.login
