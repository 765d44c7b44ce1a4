"""A recorded run as drift reads it: the index's scenarios, each with its archive read and checked, before anything
is replayed or compared (a broken file is said at once, not after minutes of replay)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toolkit.drift.archive import Archive, read_archive
from toolkit.recording.reading import archive_file, read_index


@dataclass(frozen=True)
class RecordedScenario:
    """A scenario of the index (``name``, ``tags``, ``nodeid``, ``started``) and its archive."""

    name: str
    archive: Archive
    tags: tuple[str, ...] = ()
    nodeid: str = ""
    started: str = ""


@dataclass(frozen=True)
class Recording:
    """A recorded run's folder and its scenarios, in the order they started."""

    folder: Path
    scenarios: list[RecordedScenario]


def read_recording(folder: Path) -> Recording:
    """Every scenario of the recording in ``folder``; RecordingError (naming the file, the entry, the field) for
    the first thing that cannot be read."""
    folder = Path(folder)
    scenarios = [
        RecordedScenario(
            scenario["name"],
            read_archive(archive_file(folder, scenario), shown_as=folder / scenario["file"]),
            tuple(scenario.get("tags", [])),
            scenario.get("nodeid", ""),
            scenario.get("started", ""),
        )
        for scenario in read_index(folder)["scenarios"]
    ]
    return Recording(folder, scenarios)


__all__ = ["RecordedScenario", "Recording", "read_recording"]
