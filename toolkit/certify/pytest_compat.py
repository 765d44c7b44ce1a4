"""Every reach into pytest's private API, in one place: checked against pytest 9.2.0 (``CHECKED_WITH``), with
pytest-xdist 3.8.0 and pytest-bdd 9.0.1.

gatekit's plugin, its feature-file collector, its phrase check and the test suite's own plugins use the public
API everywhere else.  What they rely on here, to look at again when pytest changes (``tests/test_pytest_compat``
fails on another minor version until it has been):

- ``stop_rewriting``: the assertion rewriter (``_pytest.assertion.rewrite.AssertionRewritingHook``) keeps the
  names of the modules it rewrites in ``_must_rewrite`` (a set of names: a package's name covers its modules)
  and its answers in ``_marked_for_rewrite_cache`` (a dict).  A finder without them is left alone.
- ``fixture_manager``: a session's fixture manager is ``Session._fixturemanager`` (pytest-bdd's ``compat``
  helpers take it).
- ``is_fixture``: a ``@pytest.fixture`` function is a ``FixtureFunctionDefinition`` with a
  ``_fixture_function_marker``.
- ``marker_expression``: ``-m``'s parser is ``_pytest.mark.expression.Expression`` (``compile``, ``evaluate``,
  ``idents``).
- ``give_params`` and ``take_xdist_group_id``: pytest 9 keeps a test's id in ``Item._id``, a
  ``_pytest.nodeid.NodeId`` (``params``, ``with_params``, ``parse``); ``nodeid`` is built from it.
  pytest-xdist 3.8 still writes its ``@group`` suffix to ``item._nodeid``, which pytest 9 no longer reads.
- ``BuiltModule``: a ``pytest.Module`` whose module object is built, not imported, by overriding
  ``Module._getobj``.
"""

from __future__ import annotations

from typing import Any

import pytest
from _pytest.mark.expression import Expression

CHECKED_WITH = "9.2.0"


def stop_rewriting(package: str) -> None:
    """Take ``package`` (a top-level name, ``toolkit``) off the list of what pytest's assertion rewriter rewrites."""
    import sys

    for finder in sys.meta_path:
        marked = getattr(finder, "_must_rewrite", None)
        if isinstance(marked, set) and package in marked:
            marked.discard(package)
            cache = getattr(finder, "_marked_for_rewrite_cache", None)
            if isinstance(cache, dict):
                cache.clear()


def fixture_manager(node: pytest.Item) -> Any:
    """The fixture manager of ``node``'s session (pytest's ``FixtureManager``)."""
    return node.session._fixturemanager


def is_fixture(value: object) -> bool:
    """Whether ``value`` is a function decorated with ``@pytest.fixture``."""
    return hasattr(value, "_fixture_function_marker")


def marker_expression(text: str) -> Expression:
    """``text`` compiled as ``-m`` compiles a marker expression; SyntaxError (with ``msg``) when it is not one."""
    return Expression.compile(text)


def give_params(item: pytest.Item, label: str) -> None:
    """Give ``item`` the parameter ``label`` in its node id (``test_x[label]``), unless it has parameters."""
    node_id = item._id
    if node_id.params is None:
        item._id = node_id.with_params(label)


def take_xdist_group_id(item: pytest.Item) -> None:
    """Make the node id pytest-xdist gave ``item`` in a worker (``...::test_x@group``) its node id."""
    from _pytest.nodeid import NodeId

    grouped = item.__dict__.get("_nodeid")  # (what xdist set, unread by pytest 9)
    if grouped and grouped != item.nodeid:
        item._id = NodeId.parse(grouped)


class BuiltModule(pytest.Module):
    """A test module whose module object ``build()`` makes (a feature file's scenarios bound to it)."""

    def build(self) -> Any:
        raise NotImplementedError

    def _getobj(self) -> Any:
        return self.build()


__all__ = [
    "CHECKED_WITH",
    "BuiltModule",
    "Expression",
    "fixture_manager",
    "give_params",
    "is_fixture",
    "marker_expression",
    "stop_rewriting",
    "take_xdist_group_id",
]
