"""Load shaping: a gateway worth loading, slow and failing as real ones are, drawn request by request.

    [simulator]
    answer_latency = { p50 = 0.3, p99 = 2.0 }    # seconds each gateway answer waits: a log-normal draw
    decline_rate = 0.05                          # card payments declined whatever their CVV2 ("Do not honor")
    fault_rate = { error = 0.01, drop = 0.005, timeout = 0.002 }   # shares of gateway requests
    callback_delay = { p50 = 1.0, p99 = 10.0 }   # seconds before a callback's first attempt: a log-normal draw

A latency is given by its median and 99th percentile; the draws follow the log-normal distribution with
those two quantiles (``p99 == p50``: always that value).  Faults: ``error`` answers HTTP 500 ``type=error``,
``drop`` closes the connection without an answer, ``timeout`` does the work and holds the answer
``TIMEOUT_HOLD`` seconds (longer than any client waits: the order exists, the merchant never heard).
Every draw is independent; the shares are of all gateway requests (the control API and pages are never
shaped).  Nothing here applies when the settings leave them out: the simulator answers at once, as before.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

TIMEOUT_HOLD = 120.0  # seconds a ``timeout`` fault holds its answer
FAULT_KINDS = ("error", "drop", "timeout")
_Z99 = NormalDist().inv_cdf(0.99)  # the standard normal's 99th percentile (about 2.33)

_random = random.Random()  # (one per process: draws need no reproducibility, only the configured shape)


class ShapeError(ValueError):
    """A load-shaping setting that cannot be used; the message names it and says why."""


@dataclass(frozen=True)
class Latency:
    """A log-normal distribution of seconds given by its median and 99th percentile."""

    p50: float
    p99: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.p50) and math.isfinite(self.p99)) or self.p50 < 0 or self.p99 < self.p50:
            raise ShapeError(f"needs 0 <= p50 <= p99 (seconds), got p50={self.p50}, p99={self.p99}")
        if self.p50 == 0 and self.p99 > 0:
            raise ShapeError("p50 = 0 with p99 > 0 has no log-normal shape; give p50 > 0")

    @property
    def sigma(self) -> float:
        return 0.0 if self.p50 == 0 else math.log(self.p99 / self.p50) / _Z99

    def draw(self, rng: random.Random = _random) -> float:
        if self.p50 == 0 or self.p99 == self.p50:
            return self.p50
        return self.p50 * math.exp(self.sigma * rng.gauss(0.0, 1.0))

    def as_dict(self) -> dict[str, float]:
        return {"p50": self.p50, "p99": self.p99}


@dataclass(frozen=True)
class FaultRates:
    """Shares of gateway requests that go wrong, by kind (their sum at most 1)."""

    error: float = 0.0
    drop: float = 0.0
    timeout: float = 0.0

    def draw(self, rng: random.Random = _random) -> str:
        """``error``, ``drop``, ``timeout``, or ``""`` (most requests)."""
        if not (self.error or self.drop or self.timeout):
            return ""
        roll = rng.random()
        for kind in FAULT_KINDS:
            share = getattr(self, kind)
            if roll < share:
                return kind
            roll -= share
        return ""

    def as_dict(self) -> dict[str, float]:
        return {kind: getattr(self, kind) for kind in FAULT_KINDS}


def chance(share: float, rng: random.Random = _random) -> bool:
    """True with probability ``share``."""
    return share > 0 and rng.random() < share


def parse_latency(where: str, name: str, value: Any) -> Latency:
    """``{ p50 = 0.3, p99 = 2.0 }`` (or a plain number: always that many seconds)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = {"p50": value, "p99": value}
    if not isinstance(value, dict) or set(value) != {"p50", "p99"}:
        raise ShapeError(f"{where}: {name} must be {{ p50 = 0.3, p99 = 2.0 }} (seconds), got {value!r}")
    numbers = [value["p50"], value["p99"]]
    if any(isinstance(n, bool) or not isinstance(n, (int, float)) for n in numbers):
        raise ShapeError(f"{where}: {name}: p50 and p99 must be numbers of seconds, got {value!r}")
    try:
        return Latency(float(value["p50"]), float(value["p99"]))
    except ShapeError as exc:
        raise ShapeError(f"{where}: {name} {exc}") from None


def parse_share(where: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ShapeError(f"{where}: {name} must be a share between 0 and 1 (0.05 = 5%), got {value!r}")
    return float(value)


def parse_fault_rates(where: str, name: str, value: Any) -> FaultRates:
    """``{ error = 0.01, drop = 0.005, timeout = 0.002 }``: any of the kinds, shares summing to at most 1."""
    if not isinstance(value, dict) or not value:
        raise ShapeError(f"{where}: {name} must be a table like {{ error = 0.01, drop = 0.005 }}, got {value!r}")
    unknown = sorted(set(value) - set(FAULT_KINDS))
    if unknown:
        raise ShapeError(f"{where}: {name}: unknown kinds {', '.join(unknown)}; known: {', '.join(FAULT_KINDS)}")
    shares = {kind: parse_share(where, f"{name}.{kind}", share) for kind, share in value.items()}
    if sum(shares.values()) > 1:
        raise ShapeError(f"{where}: {name}: the shares add up to {sum(shares.values()):g}, more than 1")
    return FaultRates(**shares)
