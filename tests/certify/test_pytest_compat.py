"""``toolkit.certify.pytest_compat``: pytest's private API, reached from one module only, checked against the pytest
that runs (a new minor version fails here until the module has been looked at again)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from toolkit.certify import pytest_compat
from toolkit.certify.pytest_compat import (
    CHECKED_WITH,
    fixture_manager,
    is_fixture,
    marker_expression,
    stop_rewriting,
)

ROOT = Path(__file__).resolve().parents[2]
PRIVATE = re.compile(r"_must_rewrite|_marked_for_rewrite_cache|_fixturemanager|\._id\b|\b_pytest\.|"
                     r"_fixture_function_marker|def _getobj")  # fmt: skip
# The test-side plugins that reach into pytest, beside the package.
PLUGINS = ("tests/xdist_groups.py", "tests/unique_ids.py", "tests/conftest.py")


def test_it_was_checked_against_the_pytest_that_runs() -> None:
    assert pytest.__version__.split(".")[:2] == CHECKED_WITH.split(".")[:2], (
        f"pytest {pytest.__version__}: check toolkit/certify/pytest_compat.py against it, then set CHECKED_WITH"
    )
    assert f"pytest {CHECKED_WITH}" in (pytest_compat.__doc__ or "")


def test_no_other_module_reaches_into_pytest_s_private_api() -> None:
    files = [*sorted((ROOT / "toolkit").rglob("*.py")), *(ROOT / name for name in PLUGINS)]
    reaching = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in files
        if path.name != "pytest_compat.py"
        for match in PRIVATE.finditer(path.read_text())
    ]
    assert reaching == []


def test_the_check_finds_a_reach(tmp_path: Path) -> None:
    assert PRIVATE.search("node.session._fixturemanager") and PRIVATE.search("item._id = x")
    assert not PRIVATE.search("item.nodeid") and not PRIVATE.search("self._identity")


def test_a_marker_expression_is_compiled_as_m_compiles_it() -> None:
    expression = marker_expression("threeds and not simulator")
    tags = {"threeds"}
    assert expression.evaluate(lambda name, /, **kwargs: name in tags)
    tags.add("simulator")
    assert not expression.evaluate(lambda name, /, **kwargs: name in tags)
    with pytest.raises(SyntaxError):
        marker_expression("threeds and")


@pytest.fixture
def a_fixture() -> int:
    return 1


def test_a_fixture_is_told_from_a_function() -> None:
    assert is_fixture(a_fixture) and not is_fixture(test_a_fixture_is_told_from_a_function)


def test_the_fixture_manager_knows_this_test_s_fixtures(request: pytest.FixtureRequest) -> None:
    manager = fixture_manager(request.node)
    assert [definition.argname for definition in manager.getfixturedefs("a_fixture", request.node)] == ["a_fixture"]


class _Finder:
    """An assertion rewriter's state, as pytest 9.2 keeps it."""

    def __init__(self) -> None:
        self._must_rewrite = {"toolkit", "tests"}
        self._marked_for_rewrite_cache = {"toolkit.client": True}

    def find_spec(self, *args: object) -> None:
        return None


def test_a_package_is_taken_off_what_pytest_rewrites(monkeypatch: pytest.MonkeyPatch) -> None:
    finder = _Finder()
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    stop_rewriting("toolkit")
    assert finder._must_rewrite == {"tests"} and finder._marked_for_rewrite_cache == {}
