"""Every phrase of gatekit's certification suite, for a merchant's own ``.feature`` files.

Load it as a pytest plugin, in the merchant's root ``conftest.py``::

    pytest_plugins = ["toolkit.steps"]

and any scenario may then say "Given a card that is approved", "When the merchant sends a sale of
10.00 EUR", "Then the order is approved"... beside the merchant's own steps, which win over ours
when both match.  pytest-bdd keeps step definitions as fixtures of the module that defines them;
at the start of the session (the step modules bind their scenarios, which needs pytest's configuration)
this plugin gathers the step definitions and the shared fixtures (``scene``, ``target``,
``merchant_with``) of ``toolkit.suite.steps`` and registers them as one plugin, visible everywhere.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pytest
from pytest_bdd.feature import get_features

from toolkit import suite
from toolkit.certify.catalog import feature_tags
from toolkit.certify.pytest_compat import is_fixture


def step_modules() -> list[ModuleType]:
    """``toolkit.suite.steps.conftest`` and every step module, imported."""
    package = importlib.import_module(f"{suite.__name__}.steps")
    names = sorted(info.name for info in pkgutil.iter_modules(package.__path__) if info.name.startswith("test_"))
    return [importlib.import_module(f"{package.__name__}.{name}") for name in ["conftest", *names]]


def library_of(modules: list[ModuleType], name: str) -> ModuleType:
    """One module holding the fixtures (step definitions included) of ``modules``, as a plugin to register.

    A module, not another object: pytest would bind the fixtures of other holders to them.
    """
    library = ModuleType(name)
    for module in modules:
        library.__dict__.update({key: value for key, value in vars(module).items() if is_fixture(value)})
    return library


def is_xdist_controller(config: pytest.Config) -> bool:
    """This process runs no test: pytest-xdist's controller (``-n N``), which sends them to its workers."""
    return config.pluginmanager.has_plugin("dsession")


def pytest_sessionstart(session: pytest.Session) -> None:
    """After every pytest_configure (pytest-bdd's included), before collection.

    The shared steps (``conftest``) are registered before the flows' own: when two phrases match
    one step, pytest-bdd takes the one registered last, as the suite's own modules do over its
    conftest.  A merchant's ``conftest.py`` steps come later still, so theirs win over ours.
    """
    try:
        suite.root()
    except suite.SuiteMissing as error:  # one clear line, not a traceback
        raise pytest.UsageError(str(error)) from None
    for tag in sorted(feature_tags(get_features([str(suite.features_dir())]))):  # --strict-markers accepts them
        session.config.addinivalue_line("markers", f"{tag}: gatekit scenario tag")
    if is_xdist_controller(session.config):  # it hands tests to the workers and runs none: they import the steps
        return
    shared, *flows = step_modules()
    for library in (library_of([shared], "gatekit-shared-steps"), library_of(flows, "gatekit-flow-steps")):
        session.config.pluginmanager.register(library, library.__name__)
