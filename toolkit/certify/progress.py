"""A live progress line while the suite runs, and a verdict per flow at the end.

Loaded by ``gatekit certify`` instead of pytest's own terminal output: one line rewritten in
place on a terminal (one line per scenario elsewhere, e.g. in CI logs), then a table of flows
with the reasons of their skipped scenarios under each flow, the failures with their reasons,
and the paths of the reports.
"""

from __future__ import annotations

import functools
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import pytest

OUTCOMES = ("passed", "failed", "skipped")
FLOW_PROPERTY = "flow"


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


@functools.cache
def feature_name(path: str) -> str:
    """The name on the ``Feature:`` line of a feature file (the flow), or the file's name."""
    try:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip().startswith("Feature:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return Path(path).stem


def flow_of(item: pytest.Item) -> str:
    """The flow of a scenario: pytest-bdd writes ``<feature file>: <scenario>`` in its docstring."""
    doc = getattr(getattr(item, "obj", None), "__doc__", None) or ""
    return feature_name(doc.split(": ", 1)[0]) if ": " in doc else item.nodeid.split("::")[0]


class Progress:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self.live = self.stream.isatty()
        self.total = 0
        self.done = 0
        self.flows: dict[str, FlowResult] = defaultdict(FlowResult)
        self._flow_of: dict[str, str] = {}
        self._counted: set[str] = set()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.total = len(session.items)
        self._flow_of = {item.nodeid: flow_of(item) for item in session.items}

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        """With ``-n``, the workers collect: each reports the same ids."""
        self.total = len(ids)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        failed_setup = report.when == "setup" and (report.failed or report.skipped)
        if report.when != "call" and not failed_setup and not (report.when == "teardown" and report.failed):
            return
        if report.nodeid in self._counted:
            return
        self._counted.add(report.nodeid)
        flow = dict(report.user_properties).get(FLOW_PROPERTY) or self._flow_of.get(report.nodeid, report.nodeid)
        result = self.flows[str(flow)]
        outcome = report.outcome if report.outcome in OUTCOMES else "failed"
        setattr(result, outcome, getattr(result, outcome) + 1)
        if outcome == "failed":
            result.failures.append(f"{report.nodeid}\n    {_reason(report)}")
        elif outcome == "skipped":
            result.skip_reasons[_skip_reason(report)] += 1
        self.done += 1
        self._show(report.nodeid, outcome)

    def _show(self, nodeid: str, outcome: str) -> None:
        counts = {name: sum(getattr(r, name) for r in self.flows.values()) for name in OUTCOMES}
        line = (f"[{self.done}/{self.total}] {counts['passed']} passed, {counts['failed']} failed, "
                f"{counts['skipped']} skipped")  # fmt: skip
        if self.live:
            self.stream.write(f"\r\033[K{line}  {nodeid.split('::')[-1][:60]}")
        else:
            self.stream.write(f"{line}  {outcome.upper():7} {nodeid}\n")
        self.stream.flush()

    def summary(self) -> str:
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


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """The flow travels with the reports (a worker's, with ``-n``, too): a property, also in the JUnit XML."""
    item.user_properties.append((FLOW_PROPERTY, flow_of(item)))


def pytest_configure(config: pytest.Config) -> None:
    """Loaded with ``-p toolkit.certify.progress`` (by ``gatekit certify``): report through Progress."""
    config.pluginmanager.register(Progress(), "gatekit-progress")


def pytest_unconfigure(config: pytest.Config) -> None:
    progress = config.pluginmanager.get_plugin("gatekit-progress")
    if isinstance(progress, Progress):
        print(progress.summary(), file=progress.stream, flush=True)


def _skip_reason(report: pytest.TestReport) -> str:
    """pytest keeps a skip as ``(path, line, "Skipped: reason")``."""
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ").strip() or "skipped"


def _reason(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = getattr(crash, "message", None) or str(report.longrepr)
    return text.strip().splitlines()[0][:300] if text.strip() else "failed"
