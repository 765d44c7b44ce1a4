"""Every collected test has a node id of its own, and the run stops when two share one.

schemathesis 4.32 makes one test per API operation and names each ``test_x[POST /api/v2/sale/{endpointId}]``,
but pytest 9.2 builds a test's id from its ``originalname`` and its parametrization only, so all 50 operations
got the id ``test_x``.  ``--dist loadgroup`` keeps one test per id: ``make test`` fuzzed one operation of 50,
and said nothing.  Here each operation's label becomes its test's parameter, as schemathesis meant; any other
duplicate id fails the collection, naming it.
"""

from __future__ import annotations

from collections import Counter

import pytest

from toolkit.certify.pytest_compat import give_params


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        label = getattr(item, "operation_label", None)  # (a schemathesis test: one API operation)
        if label:
            give_params(item, label)


def pytest_collection_finish(session: pytest.Session) -> None:
    shared = sorted(node_id for node_id, count in Counter(item.nodeid for item in session.items).items() if count > 1)
    if shared:
        raise pytest.UsageError(f"{len(shared)} node ids are shared by several tests (one would run): {shared[:5]}")
