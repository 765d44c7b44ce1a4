"""Drift: where the simulator differs from a sandbox, scenario by scenario, from recordings.

    gatekit certify --profile sandbox --record recordings/sandbox
    gatekit drift recordings/sandbox               # replayed on a fresh simulator, then compared
    gatekit drift recordings/sandbox recordings/b  # two recordings compared

``recorded`` reads a recording (its index and archives, checked at the edge by ``archive``: ``RecordingError``
for what cannot be read), ``trace`` reads an archive as steps, ``replay`` replays one on the simulator,
``compare`` finds the differences, ``accept`` applies ``drift.toml``, ``groups`` gathers repeated ones, ``fit``
fits a ``[simulator]`` section to the recording, ``report`` and ``page`` write them (terminal, Markdown, HTML,
JSON), ``views`` shows a scenario's two sequence diagrams side by side (a notebook).  The two runs compared are A
(the recording) and B (its replay, or another recording), named after their folders.

    report = against_simulator(Path("recordings/sandbox"), Path("reports/drift/replay"))
    report                                              # the grouped differences, in a notebook
    report.fitted                                       # the fitted [simulator] settings, and what each rests on
    side_by_side(report, report.scenario_names[0])      # A's diagram beside B's
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.drift.accept import apply, load_rules
from toolkit.drift.compare import Difference, compare_runs
from toolkit.drift.fit import Fitted, fit, settings_toml
from toolkit.drift.groups import Group
from toolkit.drift.recorded import Recording, read_recording
from toolkit.drift.report import DriftReport, names_of
from toolkit.drift.trace import Trace, trace_of
from toolkit.drift.views import SideBySide, side_by_side
from toolkit.recording import RecordingError

if TYPE_CHECKING:
    from toolkit.drift.replay import Progress
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
    one: Path | Recording,
    other: Path | Recording,
    *,
    accept: Path | None = None,
    skipped: dict[str, str] | None = None,
    notes: dict[str, list[str]] | None = None,
    other_label: str = "",
    other_name: str = "",
    latency_now: float = 0.0,
    answer_model: float | None = None,
) -> DriftReport:
    """Compare two recorded runs, A (``one``) and B (``other``: its replay or another recording), each a folder or
    a recording read already; RecordingError when one cannot be read.  ``other_label`` and ``other_name`` say what
    B was (default: what its recording knows) and name its column; ``answer_model``: a replay's answer times as its
    simulator's settings make them (``compare.compare_timings``)."""
    skipped = dict(skipped or {})
    first, second = _read(one), _read(other)
    rules = load_rules(accept)
    a = [trace for trace in traces(first) if trace.name not in skipped]
    b = traces(second)
    differences = apply(rules, compare_runs(a, b, answer_model=answer_model))
    names = names_of(first.folder, second.folder)
    return DriftReport(
        first.target,
        other_label or second.target,
        differences,
        len(a),
        skipped,
        dict(notes or {}),
        fit(a, b, differences, latency_now),
        (str(first.folder), str(second.folder)),
        (names[0], other_name) if other_name and other_name != names[0] else names,
    )


def _read(recording: Path | Recording) -> Recording:
    return recording if isinstance(recording, Recording) else read_recording(Path(recording))


def against_simulator(
    recording: Path | Recording,
    out: Path,
    *,
    accept: Path | None = None,
    settings: SimulatorSettings | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> DriftReport:
    """Replay ``recording`` (its folder, or the recording read) on a fresh embedded simulator (``settings``: those
    of ``gatekit certify`` by default), the replay recorded in ``out``, and compare the two (``progress``: told of
    each scenario replayed)."""
    from toolkit.certify.target import embedded_settings
    from toolkit.drift.replay import replay_run

    recorded = _read(recording)  # (all of it, before the simulator starts)
    settings = settings or embedded_settings(None)
    replayed = replay_run(recorded, Path(out), settings, progress=progress)
    label = f"a fresh simulator (latency {settings.latency:g} s; its replay in {replayed.folder})"
    return drift_report(
        recorded,
        replayed.folder,
        accept=accept,
        skipped=replayed.skipped,
        notes=replayed.notes,
        other_label=label,
        other_name="simulator",
        latency_now=settings.latency,
        answer_model=settings.answer_delay + (settings.answer_latency.p50 if settings.answer_latency else 0.0),
    )


__all__ = [
    "Difference",
    "DriftReport",
    "Fitted",
    "Group",
    "Recording",
    "RecordingError",
    "SideBySide",
    "Trace",
    "against_simulator",
    "drift_report",
    "read_recording",
    "settings_toml",
    "side_by_side",
    "trace_of",
    "traces",
]
