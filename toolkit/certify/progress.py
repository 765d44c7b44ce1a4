"""A live progress line while the suite runs, and a verdict per flow at the end.

Loaded by ``gatekit certify`` instead of pytest's own terminal output: a line once the scenarios are
collected (how many, how long it took, and what starts next: the embedded simulator...), then one line
rewritten in place on a terminal (one line per scenario elsewhere, e.g. in CI logs), then a table of flows
with the reasons of their skipped scenarios under each flow, the failures with their reasons,
and the paths of the reports.  Scenarios are named by their Gherkin titles; the flow and the
title travel with each report as properties (``flow``, ``scenario``: with ``-n`` too, and into
the JUnit XML, where ``gatekit certify`` names the test cases by them).
"""

from __future__ import annotations

import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TextIO

import pytest

from toolkit.certify import naming

OUTCOMES = ("passed", "failed", "skipped")
FLOW_PROPERTY = "flow"
SCENARIO_PROPERTY = "scenario"


@dataclass
class FlowResult:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)
    skip_reasons: Counter[str] = field(default_factory=Counter)

    @property
    def verdict(self) -> str:
        return "FAIL" if self.failed else ("PASS" if self.passed else "SKIP")


class Progress:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self.live = self.stream.isatty()
        self.total = 0
        self.done = 0
        self.flows: dict[str, FlowResult] = defaultdict(FlowResult)
        self._counted: set[str] = set()
        self.not_collected: list[str] = []  # a feature file's problems (toolkit.certify.check): nothing runs
        self.started = time.monotonic()
        self._collected_said = False
        self.config: pytest.Config | None = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.started = time.monotonic()
        self.config = session.config

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.not_collected += str(report.longrepr).strip().splitlines()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.total = len(session.items)
        self._collected()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        """With ``-n``, the workers collect: each reports the same ids."""
        self.total = len(ids)
        self._collected()

    def _collected(self) -> None:
        """``collected 86 scenarios in 2.1 s; starting the embedded simulator…``, once, unless nothing can run."""
        if self._collected_said or self.not_collected or not self.total or self.config is None:
            return
        self._collected_said = True
        seconds = time.monotonic() - self.started
        plural = "s" * (self.total != 1)
        self.stream.write(f"collected {self.total} scenario{plural} in {seconds:.1f} s; {what_starts(self.config)}…\n")
        self.stream.flush()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        failed_setup = report.when == "setup" and (report.failed or report.skipped)
        if report.when != "call" and not failed_setup and not (report.when == "teardown" and report.failed):
            return
        if report.nodeid in self._counted:
            return
        self._counted.add(report.nodeid)
        properties = dict(report.user_properties)
        flow = str(properties.get(FLOW_PROPERTY) or report.nodeid.split("::")[0])
        title = str(properties.get(SCENARIO_PROPERTY) or report.nodeid.split("::")[-1])
        result = self.flows[flow]
        outcome = report.outcome if report.outcome in OUTCOMES else "failed"
        setattr(result, outcome, getattr(result, outcome) + 1)
        if outcome == "failed":
            result.failures.append(f"{flow}: {title}  ({report.nodeid})\n    {_reason(report)}")
        elif outcome == "skipped":
            result.skip_reasons[_skip_reason(report)] += 1
        self.done += 1
        self._show(f"{flow}: {title}", outcome)

    def _show(self, scenario: str, outcome: str) -> None:
        counts = {name: sum(getattr(r, name) for r in self.flows.values()) for name in OUTCOMES}
        line = (f"[{self.done}/{self.total}] {counts['passed']} passed, {counts['failed']} failed, "
                f"{counts['skipped']} skipped")  # fmt: skip
        if self.live:
            self.stream.write(f"\r\033[K{line}  {scenario[:70]}")
        else:
            self.stream.write(f"{line}  {outcome.upper():7} {scenario}\n")
        self.stream.flush()

    def summary(self) -> str:
        if self.not_collected:
            return "\n".join(["", "Feature files that cannot run (nothing ran; gatekit certify --check checks them):",
                              *(f"  {line}" for line in self.not_collected)])  # fmt: skip
        width = max((len(name) for name in self.flows), default=4) + 2
        lines = ["", "", "Flow".ljust(width) + "verdict  passed  failed  skipped"]
        for name, result in sorted(self.flows.items()):
            lines.append(
                f"{name.ljust(width)}{result.verdict:7}  {result.passed:6}  {result.failed:6}  {result.skipped:7}"
            )
            lines += [f"  skipped {count}: {reason}" for reason, count in sorted(result.skip_reasons.items())]
        failures = [failure for result in self.flows.values() for failure in result.failures]
        if failures:
            lines += ["", "Failures:", *(f"  {failure}" for failure in failures)]
        return "\n".join(lines)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The flow and the title travel with the reports (a worker's, with ``-n``, too), also into the JUnit XML."""
    for item in items:
        item.user_properties += [(FLOW_PROPERTY, naming.flow(item)), (SCENARIO_PROPERTY, naming.title(item))]


def pytest_configure(config: pytest.Config) -> None:
    """Loaded with ``-p toolkit.certify.progress`` (by ``gatekit certify``): report through Progress."""
    config.pluginmanager.register(Progress(), "gatekit-progress")


def pytest_unconfigure(config: pytest.Config) -> None:
    progress = config.pluginmanager.get_plugin("gatekit-progress")
    if isinstance(progress, Progress):
        print(progress.summary(), file=progress.stream, flush=True)


def what_starts(config: pytest.Config) -> str:
    """What the first scenarios wait for: the embedded simulator (one per worker with ``-n``), or the gateway; with
    workers on a team's simulator, that a scenario moving its clock or faults runs alone (``certify.shared``)."""
    from toolkit.certify.plugin import load_profile
    from toolkit.certify.target import embeds_simulator, outside_simulator

    workers = int(getattr(config.option, "numprocesses", 0) or 0)
    starting = f"starting {workers} workers" if workers else "starting the first scenario"
    try:
        profile = load_profile(config)
    except pytest.UsageError:
        return starting
    if embeds_simulator(profile):
        return f"{starting}, each with its embedded simulator" if workers else "starting the embedded simulator"
    at_once = f"{workers} scenarios at a time, the longest first" if workers else ""
    if workers and outside_simulator(profile):
        alone = "a scenario that moves its clock or faults runs alone"
        return f"{starting} against the simulator at {profile.base_url} ({at_once}; {alone})"
    return f"{starting} against {profile.base_url}" + (f" ({at_once})" if at_once else "")


def _skip_reason(report: pytest.TestReport) -> str:
    """pytest keeps a skip as ``(path, line, "Skipped: reason")``."""
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ").strip() or "skipped"


def _reason(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = getattr(crash, "message", None) or str(report.longrepr)
    return text.strip().splitlines()[0][:300] if text.strip() else "failed"
