"""``gatekit drift RECORDING [OTHER]``: where the simulator differs from a sandbox, from recordings.

    gatekit certify --profile sandbox --record recordings/sandbox
    gatekit drift recordings/sandbox                      # replay on a fresh simulator, compare
    gatekit drift recordings/sandbox recordings/simulator # compare two recordings

A replay says each scenario as it is done.  The terminal gets a summary by kind and one row per group of like
differences (A and B named after the recordings); ``--out`` (default ``reports/drift``) gets ``drift.md`` (for a
CI summary), ``drift.html`` (standalone, groups folded), ``drift.json``, ``simulator.toml`` (the ``[simulator]``
section fitted to the recording) and the replay's recordings (``replay/``).  ``drift.toml`` (or ``--accept
FILE``) lists the differences a team knows, each with its reason: they are counted, and listed with
``--show-accepted``.  Exit status: 0 no difference
that is not accepted, 1 some, 2 it could not run: a recording it cannot read (the message names the file, the
entry and the field, and what was expected), an index naming a file outside its folder, a drift.toml it cannot
use.  Every recording is read, and checked, before the simulator starts.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.commands.common import Subparsers, UsageError

if TYPE_CHECKING:
    from toolkit.drift.replay import Progress
    from toolkit.drift.report import DriftReport


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "drift",
        help="compare a sandbox run's recordings with the simulator (or with another recording)",
        description="Replay a recorded run (gatekit certify --record DIR) on a fresh embedded simulator and say, "
        "scenario by scenario, where the simulator answers otherwise; or compare two recordings.",
    )
    parser.add_argument("recording", type=Path, help="a recorded run: a folder with index.json and .har files")
    parser.add_argument("other", type=Path, nargs="?", help="another recorded run to compare with (no replay)")
    parser.add_argument("--accept", type=Path, help="the differences known and accepted (default: ./drift.toml)")
    parser.add_argument("--out", type=Path, default=Path("reports/drift"), help="where the reports go")
    parser.add_argument(
        "--show-accepted", action="store_true", help="list the differences drift.toml accepts (else counted only)"
    )
    parser.add_argument(
        "--profile",
        help="a simulator profile of gatekit.toml whose [profiles.NAME.simulator] settings the replay uses "
        "(default: the embedded simulator of gatekit certify)",
    )
    parser.add_argument("--config", type=Path, help="profiles TOML (default: gatekit.toml)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.drift import drift_report
    from toolkit.drift.accept import AcceptError
    from toolkit.drift.report import table
    from toolkit.recording import RecordingError, read_index

    accept = args.accept or (Path("drift.toml") if Path("drift.toml").is_file() else None)
    if args.accept is not None and not args.accept.is_file():
        raise UsageError(f"--accept {args.accept}: no such file")
    out: Path = args.out
    try:
        for folder in (args.recording, args.other):
            if folder is not None:
                read_index(folder)  # (at once: not a recording, or its index is broken)
        if args.other is not None:
            report = drift_report(args.recording, args.other, accept=accept)
        else:
            _not_the_recording(out / "replay", args.recording)
            report = _replayed(args, out, accept)
    except (AcceptError, RecordingError) as exc:
        raise UsageError(str(exc)) from None
    _write(out, report)
    print(table(report, show_accepted=args.show_accepted), end="")
    written = ", ".join(str(out / name) for name in ("drift.md", "drift.html", "drift.json"))
    print(f"\nReports: {written}; the fitted section: {out / 'simulator.toml'}")
    return 1 if report.open else 0


def _write(out: Path, report: DriftReport) -> None:
    """``drift.md``, ``drift.html``, ``drift.json`` and ``simulator.toml`` (the fitted section) in ``out``."""
    from toolkit.drift.fit import settings_toml
    from toolkit.drift.page import html_page
    from toolkit.drift.report import json_text, markdown
    from toolkit.drift.shown import terminal

    out.mkdir(parents=True, exist_ok=True)
    (out / "drift.md").write_text(markdown(report), encoding="utf-8")
    (out / "drift.html").write_text(html_page(report), encoding="utf-8")
    (out / "drift.json").write_text(json_text(report), encoding="utf-8")
    fitted = [f"# fitted by gatekit drift to {terminal(report.folders[0])} (A)", *settings_toml(report.fitted)]
    (out / "simulator.toml").write_text("\n".join(fitted) + "\n", encoding="utf-8")


def _not_the_recording(replay: Path, recording: Path) -> None:
    """The replay is written in ``replay``, emptied first: never the recording replayed."""
    if replay.resolve() == recording.resolve():
        raise UsageError(f"--out: its replay/ folder is the recording {recording}: the replay would replace it")


def _replayed(args: argparse.Namespace, out: Path, accept: Path | None) -> DriftReport:
    from toolkit.certify.target import embedded_settings
    from toolkit.drift import against_simulator, read_recording
    from toolkit.drift.shown import terminal

    settings = embedded_settings(args.profile, config_file=args.config)
    recording = read_recording(args.recording)  # (all of it, checked, before the simulator starts)
    name, count = terminal(args.recording.name or args.recording), len(recording.scenarios)
    shaped = f"latency {settings.latency:g} s, answer_delay {settings.answer_delay:g} s"
    print(f"gatekit drift: replaying {count} scenarios of {name} on a fresh simulator ({shaped})", flush=True)
    began = time.monotonic()
    report = against_simulator(recording, out / "replay", accept=accept, settings=settings, progress=_said)
    print(f"replayed in {time.monotonic() - began:.1f} s", flush=True)
    return report


def _said(progress: Progress) -> None:
    """A line per scenario replayed: its place, its name, how long it took (or why it was not replayed)."""
    from toolkit.drift.shown import terminal

    done = progress.skipped or f"{progress.seconds:.1f} s"
    print(f"  {progress.number}/{progress.total}  {terminal(progress.name, 100)}  {done}", flush=True)
