"""Expensive test data built once per pytest run, shared by the xdist workers.

Under xdist a module- or session-scoped fixture runs once on each worker that runs one of its tests
(``--dist loadgroup`` would keep an ``xdist_group`` on one worker, but with pytest 9.2.0 it no longer
does: pytest-xdist#1386; gatekit's tag checks use 9.2's ``Expression.idents``, so no downgrade).  A fixture
that builds something slow (a wheel and its venv, a suite run's Allure results) calls
``once_per_run``: the first worker builds under a lock file in the run's base directory (common to
its workers), the others wait on that lock and read what it recorded.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

_BUILT: dict[tuple[str, str], dict[str, Any]] = {}  # what this process built, by run and name (without xdist)


def once_per_run(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], dict[str, Any]]
) -> dict[str, Any]:
    """``build(directory)`` run once per run; its JSON-able record returned to every worker."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:  # (one process: built at its first call, kept for the others)
        key = (str(tmp_path_factory.getbasetemp()), name)
        if key not in _BUILT:
            _BUILT[key] = build(tmp_path_factory.mktemp(name))
        return dict(_BUILT[key])
    shared = tmp_path_factory.getbasetemp().parent / f"shared-{name}"  # the run's directory, common to its workers
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other workers wait here while the first one builds
        record = shared / "record.json"
        if not record.exists():
            record.write_text(json.dumps(build(shared)))
        return dict(json.loads(record.read_text()))
