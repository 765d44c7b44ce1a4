"""The end of a Locust process's run, in order: the users stop, then the reports are written.

Locust quits at the end of ``--run-time``, and on SIGTERM (``gatekit load`` forwards its Ctrl-C and SIGTERM as
one) or Ctrl-C; on a signal it fires ``quitting`` while the users still run. ``finish`` stops them first (their
requests in flight are abandoned, never counted as failures: a killed user raises no ``Exception``), then the
master, or a lone process, writes ``summary.md``, ``results.json`` and ``report.html``. A run that was still
going (or a headless one that never started) is *interrupted*: its summary says INTERRUPTED, and the process
exits ``EXIT_INTERRUPTED`` (130, as ``gatekit certify`` on Ctrl-C). ``gatekit load`` stops its embedded
simulator only once this process has ended.

Imports Locust: only ``toolkit.load.users`` (a locustfile's module) imports this.
"""

from __future__ import annotations

import time
from pathlib import Path

from locust.env import Environment
from locust.runners import STATE_INIT, STATE_RUNNING, STATE_SPAWNING, MasterRunner, WorkerRunner

from toolkit.load import report

EXIT_INTERRUPTED = 130  # (128 + SIGINT, as shells report a command that Ctrl-C stopped)


def interrupted(environment: Environment) -> bool:
    """Locust was told to quit before its run ended: users still running, or a headless run never started."""
    runner = environment.runner
    if runner is None:
        return False
    if runner.state in (STATE_SPAWNING, STATE_RUNNING):
        return True
    options = environment.parsed_options
    return bool(getattr(options, "headless", False)) and runner.state == STATE_INIT


def finish(environment: Environment, folder: Path | None, workers: int) -> bool:
    """Stop the users if they still run, then write the reports in ``folder`` (the master, or a lone process);
    an interrupted run's process exits 130. Whether the run was interrupted."""
    stopped_early = interrupted(environment)
    if stopped_early:
        environment.process_exit_code = EXIT_INTERRUPTED
        if environment.runner is not None:
            environment.runner.stop()  # (a master tells its workers and waits for their last statistics)
    if folder is not None and not isinstance(environment.runner, WorkerRunner):
        report.write(results_of(environment, workers, interrupted=stopped_early), folder)
        write_html(environment, folder / "report.html")
    return stopped_early


def write_html(environment: Environment, path: Path) -> None:
    """Locust's HTML report, written after the users stopped (Locust's own SIGTERM path writes none)."""
    from locust.html import get_html_report

    page: str = get_html_report(environment, show_download_link=False)  # type: ignore[no-untyped-call]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")


def results_of(environment: Environment, workers: int = 0, *, interrupted: bool = False) -> report.Results:
    """Locust's statistics as ``toolkit.load.report`` reads them (``workers``: the most the master saw)."""
    stats = environment.stats
    # (the last of any row: flows and their callbacks end after the last HTTP request, which ends ``Aggregated``)
    last = max((entry.last_request_timestamp or 0.0 for entry in stats.entries.values()), default=0.0)
    seconds = max(0.001, (last or time.time()) - stats.total.start_time)
    rows = tuple(
        report.Row(
            method,
            name,
            entry.num_requests,
            entry.num_failures,
            entry.num_requests / seconds,
            entry.get_response_time_percentile(0.5),
            entry.get_response_time_percentile(0.95),
            entry.get_response_time_percentile(0.99),
        )
        for (name, method), entry in stats.entries.items()
    )
    failures = tuple(
        report.failure_of(error.method, error.name, str(error.error), error.occurrences)
        for error in stats.errors.values()
    )
    options = environment.parsed_options
    runner = environment.runner
    seen = max(workers, len(runner.clients)) if isinstance(runner, MasterRunner) else 0
    users = int(getattr(options, "num_users", 0) or 0) if options is not None else 0
    return report.Results(environment.host or "", users, seconds, rows, failures, seen, interrupted=interrupted)
