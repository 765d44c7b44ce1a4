"""``--dist loadgroup`` made to work again: tests marked ``xdist_group(name)`` run on one worker.

pytest-xdist 3.8 groups a test by appending ``@name`` to its node id in the worker, through ``item._nodeid``;
pytest 9.2 keeps the id elsewhere (a structured ``NodeId``), so the suffix is lost and a group's tests are spread
over the workers.  The id xdist made is applied here, after its own hook has run (the group's name as xdist
writes it; ``toolkit.certify.pytest_compat.take_xdist_group_id``); where xdist's id is the node's id already,
nothing changes.
"""

from __future__ import annotations

import pytest

from toolkit.certify.pytest_compat import take_xdist_group_id


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):  # (set in an xdist worker when --dist loadgroup)
        return
    for item in items:
        take_xdist_group_id(item)
