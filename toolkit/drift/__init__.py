"""Drift: where the simulator differs from a sandbox, scenario by scenario, from recordings.

    gatekit certify --profile sandbox --record recordings/sandbox
    gatekit drift recordings/sandbox               # replayed on a fresh simulator, then compared
    gatekit drift recordings/sandbox recordings/b  # two recordings compared

``recorded`` reads a recording (its index and archives, checked at the edge by ``archive``: ``RecordingError``
for what cannot be read), ``trace`` reads an archive as steps, ``replay`` replays one on the simulator,
``compare`` finds the differences, ``accept`` applies ``drift.toml``, ``report`` writes them (terminal, Markdown,
HTML, JSON), ``views`` shows a scenario's two sequence diagrams side by side (a notebook).

    report = against_simulator(Path("recordings/sandbox"), Path("reports/drift/replay"))
    report                                              # the table, in a notebook
    side_by_side(report, report.scenario_names[0])      # the sandbox's diagram beside the simulator's
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.drift.accept import apply, load_rules
from toolkit.drift.compare import Difference, compare_runs
from toolkit.drift.recorded import Recording, read_recording
from toolkit.drift.report import DriftReport, fitted_settings
from toolkit.drift.trace import Trace, trace_of
from toolkit.drift.views import SideBySide, side_by_side
from toolkit.recording import RecordingError

if TYPE_CHECKING:
    from toolkit.simulator.settings import SimulatorSettings


def traces(recording: Path | Recording, names: set[str] | None = None) -> list[Trace]:
    """The scenarios of a recorded run (those named, when ``names`` is given), in the order they started;
    RecordingError for a recording that cannot be read."""
    return [
        trace_of(scenario.archive, scenario.name)
        for scenario in _read(recording).scenarios
        if names is None or scenario.name in names
    ]


def drift_report(
    sandbox: Path | Recording,
    simulator: Path | Recording,
    *,
    accept: Path | None = None,
    skipped: dict[str, str] | None = None,
    notes: dict[str, list[str]] | None = None,
    simulator_label: str = "",
    latency_now: float = 0.0,
    answer_model: float | None = None,
) -> DriftReport:
    """Compare two recorded runs (``sandbox`` as recorded, ``simulator`` its replay or another recording; each
    a folder or a recording read already); RecordingError when one cannot be read.  ``answer_model``: a replay's
    answer times as its simulator's settings make them (``compare.compare_timings``)."""
    skipped = dict(skipped or {})
    one, other = _read(sandbox), _read(simulator)
    rules = load_rules(accept)
    a = [trace for trace in traces(one) if trace.name not in skipped]
    b = traces(other)
    differences = apply(rules, compare_runs(a, b, answer_model=answer_model))
    return DriftReport(
        str(one.folder),
        simulator_label or str(other.folder),
        differences,
        len(a),
        skipped,
        dict(notes or {}),
        fitted_settings(a, b, latency_now),
        (str(one.folder), str(other.folder)),
    )


def _read(recording: Path | Recording) -> Recording:
    return recording if isinstance(recording, Recording) else read_recording(Path(recording))


def against_simulator(
    recording: Path,
    out: Path,
    *,
    accept: Path | None = None,
    settings: SimulatorSettings | None = None,
) -> DriftReport:
    """Replay ``recording`` on a fresh embedded simulator (``settings``: those of ``gatekit certify`` by default),
    the replay recorded in ``out``, and compare the two."""
    from toolkit.certify.target import embedded_settings
    from toolkit.drift.replay import replay_run

    recorded = read_recording(Path(recording))  # (all of it, before the simulator starts)
    settings = settings or embedded_settings(None)
    replayed = replay_run(recorded, Path(out), settings)
    label = f"a fresh simulator (latency {settings.latency:g} s; its replay in {replayed.folder})"
    return drift_report(
        recorded,
        replayed.folder,
        accept=accept,
        skipped=replayed.skipped,
        notes=replayed.notes,
        simulator_label=label,
        latency_now=settings.latency,
        answer_model=settings.answer_delay + (settings.answer_latency.p50 if settings.answer_latency else 0.0),
    )


__all__ = [
    "Difference",
    "DriftReport",
    "Recording",
    "RecordingError",
    "SideBySide",
    "Trace",
    "against_simulator",
    "drift_report",
    "read_recording",
    "side_by_side",
    "trace_of",
    "traces",
]
