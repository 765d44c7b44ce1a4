"""``gatekit certify --check``: what pytest found when it collected the suite, in the words of the check.

Loaded with ``-p toolkit.certify.checkrun`` in a ``--collect-only`` run instead of pytest's terminal
output: each feature file that cannot run prints its problems (``toolkit.certify.check``), one line
each; the last line counts the scenarios that would run.
"""

from __future__ import annotations

import sys

import pytest


class CheckReport:
    def __init__(self) -> None:
        self.problems: list[str] = []
        self.scenarios = 0

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.problems += str(report.longrepr).strip().splitlines()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.scenarios = len(session.items)

    def summary(self) -> str:
        if self.problems:
            count = len(self.problems)
            return "\n".join([*self.problems, f"gatekit certify --check: {count} problem{'s' * (count != 1)}; "
                              "nothing ran"])  # fmt: skip
        return f"gatekit certify --check: {self.scenarios} scenarios; every step has a phrase and every value is known"


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(CheckReport(), "gatekit-check")


def pytest_unconfigure(config: pytest.Config) -> None:
    report = config.pluginmanager.get_plugin("gatekit-check")
    if isinstance(report, CheckReport):
        print(report.summary(), file=sys.stdout, flush=True)
