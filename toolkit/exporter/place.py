"""Where an exported scenario goes, and the command that runs it there.

The merchant's suite is where ``gatekit certify`` looks for it: ``GATEKIT_SUITE`` when set, else
``features/`` of the current project (the nearest folder upwards from the working directory, a
notebook's folder in Jupyter, that has ``gatekit.toml``, ``features/``, ``pyproject.toml`` or ``.git``;
the working directory itself when none has).  Exports go to ``exported/`` inside it.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path

SUITE_ENV = "GATEKIT_SUITE"
EXPORTED = "exported"
_MARKERS = ("gatekit.toml", "features", "pyproject.toml", ".git")


def project_root(start: Path | None = None) -> Path:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if any((folder / marker).exists() for marker in _MARKERS):
            return folder
    return here


def suite_folder(env: Mapping[str, str] | None = None, start: Path | None = None) -> Path:
    """The merchant's feature folder: ``GATEKIT_SUITE``, else the project's ``features/``."""
    named = (os.environ if env is None else env).get(SUITE_ENV, "").strip()
    return Path(named).expanduser().resolve() if named else project_root(start) / "features"


def default_export_path(env: Mapping[str, str] | None = None, start: Path | None = None) -> Path:
    return suite_folder(env, start) / EXPORTED / "explorer.feature"


def how_to_run(saved: Path, env: Mapping[str, str] | None = None, start: Path | None = None) -> str:
    """The command that runs a saved export: ``gatekit certify`` from the project (it reads ``GATEKIT_SUITE``,
    else ``./features``), with ``--suite`` when the file is elsewhere."""
    saved = saved.resolve()
    root = shlex.quote(str(project_root(start)))
    if saved.is_relative_to(suite_folder(env, start)):
        return f"it runs with: cd {root} && gatekit certify (only the exported scenarios: --tags exported)"
    return f"it runs with: cd {root} && gatekit certify --suite {shlex.quote(str(saved.parent))} --suite-only"
