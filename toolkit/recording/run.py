"""A recorded run: one HAR per scenario in a directory, and ``index.json`` saying what the run was.

``index.json``: ``profile``, ``base_url`` (the gateway's; "embedded simulator" for the simulator), ``started``
(UTC), ``gatekit`` (version), ``simulator`` (the embedded simulator's settings, when it was one) and
``scenarios``: one ``{"name", "nodeid", "file", "outcome", "started", "tags"}`` per scenario, in the order they
started (parallel workers write ``index.<worker>.json`` each; ``read_index`` of ``reading.py`` merges them, and
``join_parts`` writes them as one ``index.json`` once the run is over, as a serial run leaves it).
"""

from __future__ import annotations

import json
import re
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolkit._version import __version__
from toolkit.recording.har import iso
from toolkit.recording.reading import INDEX, read_index
from toolkit.recording.recorder import Recorder


def file_name(name: str, folder: Path, taken: set[str]) -> str:
    """A file name for a scenario: its name in lower case, words joined by ``-``, unique in the folder."""
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:90] or "scenario"
    candidate, number = f"{base}.har", 2
    while candidate in taken or (folder / candidate).exists():
        candidate, number = f"{base}-{number}.har", number + 1
    taken.add(candidate)
    return candidate


def clear(folder: Path) -> None:
    """Empty ``folder`` of an earlier run's recordings (its archives and index), once, before a run writes."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in (*folder.glob("*.har"), *folder.glob("index*.json")):
        old.unlink()


def join_parts(folder: Path) -> None:
    """The parallel workers' ``index.<worker>.json`` as one ``index.json`` (their scenarios in the order they started,
    the run's start its first part's), the parts removed: the folder as a serial run leaves it."""
    parts = [part for part in Path(folder).glob("index.*.json") if part.name != INDEX]
    if not parts or (Path(folder) / INDEX).exists():
        return
    joined = read_index(Path(folder))
    (Path(folder) / INDEX).write_text(json.dumps(joined, indent=1) + "\n", encoding="utf-8")
    for part in parts:
        part.unlink()


class RecordingRun:
    """Writes a run's recordings into ``folder``: ``add(name, recorder)`` per scenario, the index each time."""

    def __init__(
        self,
        folder: Path,
        *,
        profile: str,
        base_url: str,
        simulator: dict[str, Any] | None = None,
        part: str = "",
    ) -> None:
        """``part``: the name of a parallel worker (its index is ``index.<part>.json``); the folder is cleared
        by whoever starts the run (``clear``), not here."""
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.index_file = self.folder / (f"index.{part}.json" if part else INDEX)
        self.index: dict[str, Any] = {
            "profile": profile,
            "base_url": base_url,
            "started": iso(datetime.now(UTC)),
            "gatekit": __version__,
            "simulator": simulator,
            "scenarios": [],
        }
        self._taken: set[str] = set()
        self._kept: dict[str, dict[str, Any]] = {}  # name -> its entry in the index, for ``keep``
        self._lock = threading.Lock()
        self._write_index()

    def add(
        self,
        name: str,
        recorder: Recorder,
        *,
        nodeid: str = "",
        outcome: str = "",
        started: str = "",
        tags: list[str] | None = None,
    ) -> Path:
        with self._lock:
            file = file_name(name, self.folder, self._taken)
            path = recorder.write(self.folder / file, title=name, comment=nodeid)
            scenario = {"name": name, "nodeid": nodeid, "file": file, "outcome": outcome, "started": started,
                        "tags": tags or []}  # fmt: skip
            self.index["scenarios"].append(scenario)
            self._write_index()
        return path

    def keep(self, name: str, recorder: Recorder, *, tags: list[str] | None = None) -> Path:
        """Write ``recorder`` as the scenario ``name``, again each time it grew (a proxy's order): one file
        and one entry of the index per name."""
        with self._lock:
            scenario = self._kept.get(name)
            if scenario is None:
                file = file_name(name, self.folder, self._taken)
                scenario = self._kept[name] = {"name": name, "nodeid": "", "file": file, "outcome": "",
                                               "started": iso(datetime.now(UTC)), "tags": tags or []}  # fmt: skip
                self.index["scenarios"].append(scenario)
                self._write_index()
            return recorder.write(self.folder / scenario["file"], title=name)

    def _write_index(self) -> None:
        self.index_file.write_text(json.dumps(self.index, indent=1) + "\n", encoding="utf-8")
