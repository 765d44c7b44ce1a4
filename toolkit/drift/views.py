"""A scenario's sequence diagram as A's recording draws it, beside B's (a notebook view)."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.diagram import Diagram, recording_diagram
from toolkit.drift.archive import archive_of
from toolkit.recording.reading import archive_file, read_index, read_json
from toolkit.terminal import printable

if TYPE_CHECKING:
    from toolkit.drift.report import DriftReport


@dataclass(frozen=True)
class SideBySide:
    """Two diagrams of one scenario, left and right; HTML in a notebook, each diagram scrolling on its own."""

    left: Diagram
    right: Diagram
    caption: str = ""

    def __repr__(self) -> str:
        return f"SideBySide({self.left.title!r}, {self.right.title!r})"

    def _repr_html_(self) -> str:
        cell = '<div style="flex:1 1 0;min-width:0;overflow-x:auto">{}</div>'
        caption = f"<p><strong>{escape(self.caption)}</strong></p>" if self.caption else ""
        return (
            f'<div class="gk-side-by-side">{caption}<div style="display:flex;gap:1rem;align-items:flex-start">'
            + cell.format(self.left.svg)
            + cell.format(self.right.svg)
            + "</div></div>"
        )


def _archive(folder: Path, name: str) -> dict[str, object]:
    """The HAR document of the scenario ``name`` of the recording in ``folder``, read and checked as drift reads
    it (RecordingError when it cannot be)."""
    scenario = next((s for s in read_index(folder)["scenarios"] if s["name"] == name), None)
    if scenario is None:
        raise KeyError(f"{folder}: no scenario named {name!r}")
    document = read_json(archive_file(folder, scenario), shown_as=folder / scenario["file"])
    archive_of(document, str(folder / scenario["file"]))
    return dict(document)


def side_by_side(report: DriftReport, scenario: str) -> SideBySide:
    """``scenario`` as A's recording and B's (its replay, or the other recording) draw it."""
    one, other = (Path(folder) for folder in report.folders)
    differences = [d for d in report.differences if d.scenario == scenario]
    said = f"{len(differences)} difference(s)" if differences else "no difference"
    name = printable(scenario)  # (a name from a recording: its control characters escaped)
    a, b = (printable(side) for side in report.names)
    return SideBySide(
        recording_diagram(_archive(one, scenario), title=f"A, {a}: {name}"),
        recording_diagram(_archive(other, scenario), title=f"B, {b}: {name}"),
        f"{name}: {said}",
    )
