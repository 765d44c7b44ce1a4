"""A certification run's files written aside, then put in place together: a run that is interrupted (or that
crashes) leaves the previous run's reports as they were, never a partial ``junit.xml`` beside an older summary.

    staged = StagedRun(options)          # where pytest, Allure and the summary write this run's files
    ... run with staged.options ...
    staged.commit()                      # the Allure results, junit.xml, summary.md, the HTML report,
                                         # history.jsonl and the recordings replace the previous ones
    staged.discard()                     # (interrupted) nothing of this run is kept

Staging folders sit beside their targets (``reports/.gatekit-run-PID``, ``.allure-results.partial-PID``), on
the same file system, so that putting them in place is a rename each; signals are held while it happens.
"""

from __future__ import annotations

import os
import shutil
import signal
from dataclasses import replace
from pathlib import Path

from toolkit.certify.options import CertifyOptions
from toolkit.certify.parallel import DURATIONS


def _beside(target: Path, tag: str) -> Path:
    return target.parent / f".{target.name}.{tag}-{os.getpid()}"


def _put(staged: Path, target: Path) -> None:
    """``staged`` in the place of ``target`` (a file replaced at once; a folder swapped, the old one removed)."""
    if staged.is_dir():
        old = _beside(target, "old") if target.exists() else None
        if old is not None:
            os.replace(target, old)
        os.replace(staged, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    elif staged.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staged, target)


class StagedRun:
    """The staging folders of one run, and the options that point pytest, Allure and the summary at them."""

    def __init__(self, options: CertifyOptions) -> None:
        self.final = options
        options.reports.mkdir(parents=True, exist_ok=True)
        self.reports = options.reports / f".gatekit-run-{os.getpid()}"
        self.results = _beside(options.results, "partial")
        self.record = _beside(options.record, "partial") if options.record else None
        self.discard()  # (a folder left by a run of the same process id that was killed)
        self.reports.mkdir(parents=True)
        history = options.reports / options.history  # Allure's trends: kept across runs, appended by this one
        if history.is_file():
            shutil.copy2(history, self.reports / options.history)
        durations = options.reports / DURATIONS  # the scenarios' seconds in earlier runs: the longest start first
        if durations.is_file():
            shutil.copy2(durations, self.reports / DURATIONS)
        self.options = replace(options, results=self.results, reports=self.reports, record=self.record)

    def final_path(self, staged: Path) -> Path:
        """Where a file written in the staging folders will be once the run is committed."""
        staged = staged.resolve()
        for folder, target in ((self.reports, self.final.reports), (self.results, self.final.results),
                               (self.record, self.final.record)):  # fmt: skip
            if folder is not None and target is not None and staged.is_relative_to(folder.resolve()):
                return target.resolve() / staged.relative_to(folder.resolve())
        return staged

    def commit(self) -> None:
        """Everything this run wrote, in place of the previous run's (signals held meanwhile)."""
        held = {signal.SIGINT, signal.SIGTERM}
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
        try:
            _put(self.results, self.final.results)
            for staged in sorted(self.reports.iterdir()):
                _put(staged, self.final.reports / staged.name)
            if self.record is not None and self.final.record is not None:
                _put(self.record, self.final.record)
        finally:
            self.discard()
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    def discard(self) -> None:
        """Forget what this run wrote (an interrupted run): the previous run's files stay as they were."""
        for folder in (self.reports, self.results, self.record):
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
