"""What a load run does: the flows and their weights, think times, waits and the safety cap (no Locust here).

The plan comes from ``gatekit load`` flags, over the ``[load]`` table of ``gatekit.toml``::

    [load]
    weights = { sale = 5, threeds = 2, preauth_capture = 1, partial_return = 1, rebill = 1, payout = 1,
                hosted_form = 1 }
    think = [0.5, 2.0]          # seconds a user waits between two flows: a uniform draw
    callback_timeout = 15.0     # seconds a flow waits for its callbacks (then: lost)
    max_rps = 2.0               # the cap against any target but the simulator the run started

It travels to every Locust process as JSON (``--gatekit-plan``, a Locust option the master hands its workers).

The cap (``LoadPlan.cap``) is decided by where the requests go, the base URL a user sends them to: the simulator
this run started (``simulator_url``) is the one target without a cap; any other (a sandbox, a team simulator, a
profile with ``base = "simulator"`` or ``GATEWAY_BASE_URL`` pointing elsewhere, a host typed in Locust's web UI)
gets at most ``max_rps`` requests a second from the whole run, whatever its profile says.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

# The certification flows a load user runs (``toolkit.load.flows``), with their default weights.
FLOWS: dict[str, int] = {
    "sale": 5,
    "threeds": 2,
    "preauth_capture": 1,
    "partial_return": 1,
    "rebill": 1,
    "payout": 1,
    "hosted_form": 1,
}
FLOW_TEXT = {
    "sale": "a sale, approved (or declined by the decline mix)",
    "threeds": "a 3-D Secure 2 sale: method step, challenge, CRes upload",
    "preauth_capture": "preauth 10.00, then a partial capture of 6.00",
    "partial_return": "a sale of 10.00, then a partial return of 4.00",
    "rebill": "a sale, a card reference of it, a rebill of the reference",
    "payout": "a two-step v4 payout: payout-check, then payout-pay",
    "hosted_form": "a sale-form: the payer pays on the hosted page",
}
DEFAULT_MAX_RPS = 2.0  # against any target but the run's own simulator, unless --max-rps says otherwise
LOAD_HEADER = "X-Load-Test"  # every request of a load run carries it: "gatekit <run id>"


class PlanError(ValueError):
    """A load setting that cannot be used; the message names it and says why."""


@dataclass(frozen=True)
class LoadPlan:
    weights: dict[str, int] = field(default_factory=lambda: dict(FLOWS))
    think: tuple[float, float] = (0.5, 2.0)
    callback_timeout: float = 15.0
    max_rps: float | None = None  # the cap of a target that is not the run's own simulator (None: DEFAULT_MAX_RPS)
    profile: str = "simulator"
    embedded: bool = True  # the profile is the embedded simulator: gatekit load starts one (its URL: Locust's host)
    simulator_url: str = ""  # the base URL of the simulator this run started ("": none), the one uncapped target
    run_id: str = ""

    @property
    def rate(self) -> float:
        """Requests a second the whole run may send to a capped target."""
        return self.max_rps or DEFAULT_MAX_RPS

    def cap(self, target: str) -> float | None:
        """The cap of the requests sent to ``target`` (a base URL): None for the simulator this run started,
        ``rate`` for anything else."""
        own = self.simulator_url.rstrip("/")
        return None if own and target.rstrip("/") == own else self.rate

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "think": list(self.think)}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> LoadPlan:
        data = json.loads(text)
        return cls(**{**data, "think": tuple(data["think"])})

    def with_table(self, table: dict[str, Any], where: str = "[load]") -> LoadPlan:
        """The ``[load]`` table of a gatekit.toml over this plan."""
        known = ("weights", "think", "callback_timeout", "max_rps")
        unknown = sorted(set(table) - set(known))
        if unknown:
            raise PlanError(f"{where}: unknown settings {', '.join(unknown)}; known: {', '.join(known)}")
        plan = self
        if "weights" in table:
            if not isinstance(table["weights"], dict):
                raise PlanError(f"{where}: weights must be a table like {{ sale = 5, threeds = 2 }}")
            plan = replace(plan, weights=parse_weights(table["weights"], f"{where} weights"))
        if "think" in table:
            plan = replace(plan, think=parse_think(table["think"], f"{where} think"))
        if "callback_timeout" in table:
            plan = replace(plan, callback_timeout=_seconds(table["callback_timeout"], f"{where} callback_timeout"))
        if "max_rps" in table:
            plan = replace(plan, max_rps=_rate(table["max_rps"], f"{where} max_rps"))
        return plan


def parse_weights(value: str | dict[str, Any], where: str = "--weights") -> dict[str, int]:
    """``sale=5,threeds=2`` (or a table): the flows named run with these weights, the others not at all."""
    if isinstance(value, str):
        pairs: dict[str, Any] = {}
        for item in filter(None, (part.strip() for part in value.split(","))):
            name, equals, weight = item.partition("=")
            if not equals:
                raise PlanError(f"{where}: {item!r} must be FLOW=WEIGHT, e.g. sale=5")
            pairs[name.strip()] = weight.strip()
        value = pairs
    weights: dict[str, int] = {}
    for name, weight in value.items():
        if name not in FLOWS:
            raise PlanError(f"{where}: unknown flow {name!r}; flows: {', '.join(FLOWS)}")
        try:
            number = int(str(weight))
        except ValueError:
            raise PlanError(f"{where}: the weight of {name} must be a whole number >= 0, got {weight!r}") from None
        if number < 0:
            raise PlanError(f"{where}: the weight of {name} must be a whole number >= 0, got {weight!r}")
        weights[name] = number
    if not any(weights.values()):
        raise PlanError(f"{where}: give at least one flow a weight above 0 (flows: {', '.join(FLOWS)})")
    return weights


def parse_think(value: str | list[Any], where: str = "--think") -> tuple[float, float]:
    """``0.5,2`` or ``[0.5, 2]`` (a uniform draw between them), or one number (always that)."""
    parts: list[Any] = value.split(",") if isinstance(value, str) else list(value)
    try:
        numbers = [float(str(part).strip()) for part in parts]
    except ValueError:
        raise PlanError(f"{where} must be MIN,MAX seconds (e.g. 0.5,2) or one number, got {value!r}") from None
    if len(numbers) == 1:
        numbers *= 2
    if len(numbers) != 2 or not all(math.isfinite(n) and n >= 0 for n in numbers) or numbers[0] > numbers[1]:
        raise PlanError(f"{where} must be MIN,MAX seconds with 0 <= MIN <= MAX, got {value!r}")
    return numbers[0], numbers[1]


def _seconds(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise PlanError(f"{where} must be a number of seconds > 0, got {value!r}")
    return float(value)


def _rate(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise PlanError(f"{where} must be a number of requests per second > 0, got {value!r}")
    return float(value)


def parse_rate(text: str, where: str = "--max-rps") -> float:
    try:
        return _rate(float(text), where)
    except ValueError:
        raise PlanError(f"{where} must be a number of requests per second > 0, got {text!r}") from None


def parse_bind(text: str) -> tuple[str, int]:
    """``--callback-bind``: ``HOST``, ``HOST:PORT``, ``[IPv6]``, ``[IPv6]:PORT`` or a bare IPv6 address (port 0:
    any free one).  ValueError says what is wrong."""
    host, port = text.strip(), ""
    if host.startswith("["):
        host, bracket, rest = host[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(f"{text!r}: an IPv6 address goes in brackets, then :PORT ([::1]:9100)")
        port = rest[1:]
    elif host.count(":") == 1:
        host, _, port = host.partition(":")
    if not host:
        raise ValueError(f"{text!r}: no host (0.0.0.0, 127.0.0.1, [::1]...)")
    if port and not (port.isdigit() and 0 <= int(port) <= 65535):
        raise ValueError(f"{text!r}: the port must be a number from 0 to 65535")
    return host, int(port or 0)
