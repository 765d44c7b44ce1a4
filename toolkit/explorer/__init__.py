"""The notebook side of gatekit: the explorer panel, its model, the scenario exporter, the signing debugger.

    from toolkit import notebook
    from toolkit.explorer import Explorer          # the ipywidgets panel (the ``notebook`` extra)

    session = notebook.start_simulator()
    panel = Explorer(session)                      # shows itself in a notebook
    panel.model.send()                             # everything the panel does, without widgets
    print(panel.model.export())                    # what was done, as a scenario of the suite

Everything but ``Explorer`` imports without ipywidgets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.debugger import Diagnosis, Finding, diagnose
from toolkit.explorer.history import Action, Result, Tracked
from toolkit.explorer.model import ExplorerModel
from toolkit.explorer.session import GatewaySession
from toolkit.explorer.timeline import Event, Timeline
from toolkit.exporter.feature import ExportError, export_feature

if TYPE_CHECKING:
    from toolkit.explorer.panel import Explorer

__all__ = [
    "Action",
    "Diagnosis",
    "Event",
    "Explorer",
    "ExplorerModel",
    "ExportError",
    "Finding",
    "GatewaySession",
    "Result",
    "Timeline",
    "Tracked",
    "diagnose",
    "export_feature",
]


def __getattr__(name: str) -> Any:
    """``Explorer`` is imported on first use: only it needs ipywidgets."""
    if name == "Explorer":
        from toolkit.explorer.panel import Explorer

        return Explorer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
