"""gatekit's certification suite: the ``features/`` and the ``steps/`` that run them (and the ``notebooks/``).

In a wheel the build (``setup.py``) copies the repository's top-level ``features/`` and ``steps/``
here.  In a checkout (an editable install) nothing is copied: this package's path is the checkout
itself, so ``toolkit.suite.steps`` is the top-level ``steps/`` package either way.  The step modules
import each other relatively (``from .conftest import Scene``) for that reason.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent
ROOT = _HERE if (_HERE / "steps").is_dir() else _HERE.parents[1]
__path__ = [str(ROOT)]


class SuiteMissing(FileNotFoundError):
    """The installed gatekit has no certification suite (a broken build)."""


def root() -> Path:
    """The directory holding ``features/`` and ``steps/``."""
    if not (ROOT / "features").is_dir() or not (ROOT / "steps").is_dir():
        raise SuiteMissing(f"gatekit's certification suite is missing from {ROOT}: reinstall gatekit")
    return ROOT


def features_dir() -> Path:
    return root() / "features"


def notebooks_dir() -> Path:
    """gatekit's walkthrough notebooks (``gatekit notebooks DIR`` copies them out)."""
    folder = ROOT / "notebooks"
    if not folder.is_dir():
        raise SuiteMissing(f"gatekit's notebooks are missing from {ROOT}: reinstall gatekit")
    return folder
