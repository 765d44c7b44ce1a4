"""The plugin leaves gatekit's own modules to Python's import (no assert rewriting), tests to pytest.

pytest marks every module of a plugin's distribution for assert rewriting, which puts each gatekit import
through ``ast.parse``; the embedded simulator imports in its own threads, and on CPython 3.11 two threads in
``ast.parse`` at once fail with ``SystemError: AST constructor recursion depth mismatch`` (seen in CI: 25
scenarios of one run failed on it).
"""

from __future__ import annotations

import importlib
import sys

import pytest

IMPORTED_IN_THREADS = ("toolkit.simulator.web.app", "toolkit.simulator.web.pages", "toolkit.simulator.web.pages_forms",
                       "toolkit.simulator.web.gateway", "toolkit.simcontrol", "toolkit.payer")  # fmt: skip


def is_rewritten(module_name: str) -> bool:
    module = importlib.import_module(module_name)
    return type(module.__loader__).__name__ == "AssertionRewritingHook"


@pytest.mark.parametrize("name", IMPORTED_IN_THREADS)
def test_gatekit_modules_are_imported_as_they_are(name):
    assert not is_rewritten(name), f"{name} went through pytest's assert rewriting"


def test_test_modules_are_still_rewritten():
    assert is_rewritten(__name__)
    assert any(type(finder).__name__ == "AssertionRewritingHook" for finder in sys.meta_path)
