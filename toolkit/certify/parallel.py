"""Scenarios side by side against a gateway that ``gatekit certify`` does not start: a run bounded by its slowest.

A sandbox decides each order on its own time and advises a poll every 3-5 s per order (behaviour section 3):
one scenario after another, a run of 84 waits about 30 times its slowest scenario.  Against any gateway the run
does not start (a sandbox, a team's simulator) the scenarios therefore run ``in_flight`` at a time by default,
each in a pytest-xdist worker of its own, each waiting on one order at a time: at most ``in_flight`` orders are
in flight (the profile's ``in_flight``, ``--in-flight N``; ``--in-flight 1`` runs them one after another, as
before).  The embedded simulator decides in milliseconds and is one per worker: there the run stays in one process
unless ``-n`` asks for workers.

The longest scenarios start first (the durations of the profile's previous run, kept in ``reports/durations.json``;
on a first run, those that open a browser, then those with more steps), dealt one at a time to the workers, each
taking the next as it ends one (``--dist load``; ``worksteal`` deals contiguous blocks, which put the longest
together on one worker): the run ends soon after its slowest scenario.  What must run alone on a
shared simulator still does (``toolkit.certify.shared``), and callbacks reach the worker whose order they are for
through one port (``toolkit.callbacks.front``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.certify.options import IN_FLIGHT

if TYPE_CHECKING:  # (the runner imports this module before pytest starts, in another process)
    import pytest

    from toolkit.config import GatewayConfig

DURATIONS = "durations.json"  # in the reports folder: {profile: {scenario's node id: seconds}} of earlier runs
ORDER_OPTION = "--gateway-durations"  # the plugin's option: the file that orders the scenarios, longest first


def in_flight(config: GatewayConfig, asked: int, *, embedded: bool, scenarios: int) -> int:
    """How many scenarios run at once: ``asked`` (``--in-flight``/``-n``) when given, else 1 on the embedded simulator
    and the profile's ``in_flight`` (default ``IN_FLIGHT``) elsewhere; never more than there are scenarios."""
    if asked:
        wanted = asked
    elif embedded:
        return 1
    else:
        wanted = config.in_flight or IN_FLIGHT
    return max(1, min(wanted, scenarios))


def read_durations(file: Path, profile: str) -> dict[str, float]:
    """Seconds each scenario took in the profile's earlier runs (empty on a first run or an unreadable file)."""
    try:
        table = json.loads(file.read_text(encoding="utf-8")).get(profile, {})
        return {str(nodeid): float(seconds) for nodeid, seconds in table.items()}
    except (OSError, ValueError, AttributeError, TypeError):
        return {}


def write_durations(file: Path, profile: str, seen: Mapping[str, float]) -> None:
    """What this run measured, over what earlier runs of the profile measured (other profiles' kept as they are)."""
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        data = data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        data = {}
    kept = data.get(profile)
    earlier: dict[str, float] = kept if isinstance(kept, dict) else {}
    data[profile] = dict(sorted({**earlier, **{nodeid: round(took, 3) for nodeid, took in seen.items()}}.items()))
    file.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def order_key(nodeid: str, durations: Mapping[str, float], *, browser: bool, steps: int) -> tuple[int, float]:
    """Longest first.  A scenario the earlier runs did not time comes first (a first run: those that open a browser,
    then those with more steps), then the others by the seconds they took."""
    known = durations.get(nodeid)
    if known is None:
        return (0, -(1000.0 if browser else 0.0) - steps)
    return (1, -known)


def longest_first(items: list[pytest.Item], durations: Mapping[str, float]) -> None:
    """Sort the scenarios in place by ``order_key`` (stable: the same order in every worker, as xdist requires)."""
    from toolkit.certify import naming

    def key(item: pytest.Item) -> tuple[int, float]:
        scenario = naming.scenario_of(item)
        steps = len(scenario.steps) if scenario is not None else 0
        return order_key(item.nodeid, durations, browser=item.get_closest_marker("browser") is not None, steps=steps)

    items.sort(key=key)


class DurationLog:
    """(the run's first process) The seconds each scenario that ran took (setup, call and teardown), written into the
    durations file when the session ends, for the next run to start the longest first."""

    def __init__(self, file: Path, profile: str) -> None:
        self.file, self.profile = file, profile
        self.seen: dict[str, float] = {}
        self.skipped: set[str] = set()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped:
            self.skipped.add(report.nodeid)
        self.seen[report.nodeid] = self.seen.get(report.nodeid, 0.0) + report.duration

    def pytest_sessionfinish(self) -> None:
        ran = {nodeid: took for nodeid, took in self.seen.items() if nodeid not in self.skipped}
        if ran:
            write_durations(self.file, self.profile, ran)
