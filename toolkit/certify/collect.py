"""Feature files as test modules: ``-p toolkit.certify.collect`` (``gatekit certify`` loads it).

Each ``.feature`` file under the paths pytest is given becomes a module whose tests are its
scenarios (pytest-bdd's ``scenarios()``), so a merchant's features need no Python module to bind
them.  Their steps come from plugins (``toolkit.steps``) and from ``conftest.py`` files, which apply
as usual.  The features' tags are registered as markers, so ``--strict-markers`` accepts them.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest
from pytest_bdd.feature import get_features

from toolkit.certify.catalog import feature_tags
from toolkit.certify.pytest_compat import BuiltModule

_BIND = "from pytest_bdd import scenarios\nscenarios(__file__)\n"


class FeatureModule(BuiltModule):
    """A ``.feature`` file collected like a test module."""

    def build(self) -> Any:
        for tag in sorted(feature_tags(get_features([str(self.path)]))):
            self.config.addinivalue_line("markers", f"{tag}: Gherkin tag")
        module = types.ModuleType(f"gatekit_features.{self.path.stem}")
        module.__file__ = str(self.path)
        exec(compile(_BIND, str(self.path), "exec"), module.__dict__)  # pytest-bdd binds into the caller
        return module


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    if file_path.suffix == ".feature":
        return FeatureModule.from_parent(parent, path=file_path)
    return None
