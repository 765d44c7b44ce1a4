"""Locust's own figures stay HTTP's: gatekit's flows and callbacks keep their rows, out of the ``Aggregated`` row.

``toolkit.load.users`` reports a whole flow (type ``flow``) and each expected callback (type ``callback``) through
Locust's request event: they get Locust's rows, percentiles, failures, CSV files (the per-second history that
notebook ``07-load`` draws), web UI table and exit status.  But Locust adds every request type into its
``Aggregated`` row, which its requests per second, failure ratio, charts and response-time figures read: a flow
of four requests counted as a fifth request.  ``keep_totals_http`` makes a process's statistics leave these two
types out of ``Aggregated``; their own rows are kept as they were.

Applied in each Locust process (a worker sends its ``Aggregated`` row to the master, which adds them up), at
``init``: the runners keep the statistics object they were made with, so its class changes in place.

Imports Locust: only ``toolkit.load.users`` (a locustfile's module) imports this.
"""

from __future__ import annotations

from locust.stats import RequestStats, StatsError

NOT_HTTP = frozenset({"flow", "callback"})  # (``gateway`` and ``payer`` are HTTP requests: Locust counts them)


class HttpTotals(RequestStats):
    """Locust's ``RequestStats`` whose ``Aggregated`` row counts HTTP requests only."""

    def log_request(self, method: str, name: str, response_time: int, content_length: int) -> None:
        if method in NOT_HTTP:
            self.entries[(name, method)].log(response_time, content_length)
        else:
            super().log_request(method, name, response_time, content_length)

    def log_error(self, method: str, name: str, error: Exception | str | None) -> None:
        if method not in NOT_HTTP:
            super().log_error(method, name, error)
            return
        self.entries[(name, method)].log_error(error)
        key = StatsError.create_key(method, name, error)  # (listed with Locust's failures, by type and name)
        self.errors.setdefault(key, StatsError(method, name, error)).occurred()


def keep_totals_http(stats: RequestStats) -> None:
    """From now on, ``stats`` leaves flows and callbacks out of its ``Aggregated`` row."""
    if type(stats) is RequestStats:
        stats.__class__ = HttpTotals
