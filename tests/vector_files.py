"""The signing vectors of tests/vectors (copied from the shared vectors; never read from ../shared)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

VECTORS = Path(__file__).parent / "vectors"


def load_vectors(name: str) -> dict[str, Any]:
    """``control.json``, ``callback.json`` or ``oauth.json``: ``meta`` and a list of ``vectors``."""
    data: dict[str, Any] = json.loads((VECTORS / name).read_text())
    return data
