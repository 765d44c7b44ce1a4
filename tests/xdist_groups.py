"""``--dist loadgroup`` made to work again: tests marked ``xdist_group(name)`` run on one worker.

pytest-xdist 3.8 groups a test by appending ``@name`` to its node id in the worker, through ``item._nodeid``;
pytest 9.2 keeps the id in ``item._id`` (a ``NodeId``), so the suffix is lost and a group's tests are spread
over the workers.  The suffix is put back here, after xdist's own hook has run; where xdist already put it,
nothing changes.
"""

from __future__ import annotations

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):  # (set in an xdist worker when --dist loadgroup)
        return
    from _pytest.nodeid import NodeId  # (pytest 9's structured node id)

    for item in items:
        names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                        for mark in item.iter_markers("xdist_group")})  # fmt: skip
        if names and "@" not in item.nodeid:
            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")  # type: ignore[attr-defined]
