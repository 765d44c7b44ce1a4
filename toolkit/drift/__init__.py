"""Drift: where the simulator differs from a sandbox, scenario by scenario, from recordings.

    gatekit certify --profile sandbox --record recordings/sandbox
    gatekit drift recordings/sandbox               # replayed on a fresh simulator, then compared
    gatekit drift recordings/sandbox recordings/b  # two recordings compared

``trace`` reads a recording as steps, ``replay`` replays one on the simulator, ``compare`` finds the
differences, ``accept`` applies ``drift.toml``, ``report`` writes them (terminal, Markdown, HTML, JSON).
"""

from __future__ import annotations

from pathlib import Path

from toolkit.drift.accept import apply, load_rules
from toolkit.drift.compare import Difference, compare_runs
from toolkit.drift.report import DriftReport, fitted_settings
from toolkit.drift.trace import Trace, read, trace_of
from toolkit.recording import read_index


def traces(folder: Path, names: set[str] | None = None) -> list[Trace]:
    """The scenarios of a recorded run (those named, when ``names`` is given), in the order they started."""
    index = read_index(folder)
    return [
        trace_of(read(Path(folder) / scenario["file"]), scenario["name"])
        for scenario in index["scenarios"]
        if names is None or scenario["name"] in names
    ]


def drift_report(
    sandbox: Path,
    simulator: Path,
    *,
    accept: Path | None = None,
    skipped: dict[str, str] | None = None,
    notes: dict[str, list[str]] | None = None,
    simulator_label: str = "",
    latency_now: float = 0.0,
) -> DriftReport:
    """Compare two recorded runs (``sandbox`` as recorded, ``simulator`` its replay or another recording)."""
    skipped = dict(skipped or {})
    a = [trace for trace in traces(sandbox) if trace.name not in skipped]
    b = traces(simulator)
    differences = apply(load_rules(accept), compare_runs(a, b))
    return DriftReport(
        str(sandbox),
        simulator_label or str(simulator),
        differences,
        len(a),
        skipped,
        dict(notes or {}),
        fitted_settings(a, b, latency_now),
    )


__all__ = ["Difference", "DriftReport", "Trace", "drift_report", "trace_of", "traces"]
