"""A recorded run as drift reads it: the index's scenarios, each with its archive read and checked, before anything
is replayed or compared (a broken file is said at once, not after minutes of replay)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.drift.archive import Archive, read_archive
from toolkit.recording.reading import archive_file, read_index

EMBEDDED = "embedded simulator"  # the base_url of a recording made against the embedded simulator


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
    """A recorded run's folder and its scenarios, in the order they started; what its index says of the gateway it
    was made against: the profile, the gateway's URL, the embedded simulator's settings (None: not one)."""

    folder: Path
    scenarios: list[RecordedScenario]
    profile: str = ""
    base_url: str = ""
    simulator: dict[str, Any] | None = None

    @property
    def target(self) -> str:
        """The gateway it was made against, as its index knows it: ``profile acme, https://...``, or a simulator."""
        said = [f"profile {self.profile}"] if self.profile else []
        if self.simulator is not None or self.base_url == EMBEDDED:
            latency = (self.simulator or {}).get("latency")
            known = isinstance(latency, (int, float)) and not isinstance(latency, bool)
            said.append("a gatekit simulator" + (f" (latency {latency:g} s)" if known else ""))
        elif self.base_url:
            said.append(self.base_url)
        return ", ".join(said) or "a recording whose index does not say its gateway"


def read_recording(folder: Path) -> Recording:
    """Every scenario of the recording in ``folder``; RecordingError (naming the file, the entry, the field) for
    the first thing that cannot be read."""
    folder = Path(folder)
    index = read_index(folder)
    scenarios = [
        RecordedScenario(
            scenario["name"],
            read_archive(archive_file(folder, scenario), shown_as=folder / scenario["file"]),
            tuple(scenario.get("tags", [])),
            scenario.get("nodeid", ""),
            scenario.get("started", ""),
        )
        for scenario in index["scenarios"]
    ]
    simulator = index.get("simulator")
    return Recording(folder, scenarios, _text(index.get("profile")), _text(index.get("base_url")),
                     simulator if isinstance(simulator, dict) else None)  # fmt: skip


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


__all__ = ["RecordedScenario", "Recording", "read_recording"]
