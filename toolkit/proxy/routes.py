"""Which operation of the catalogue a request path addresses, whatever the base URL before it."""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass

from toolkit.operations import Operation, iter_operations


@dataclass(frozen=True)
class Route:
    """The operation at a path, and the id in it (an endpoint's, or an endpoint group's)."""

    operation: Operation
    path_id: str
    by_group: bool


@functools.cache
def _patterns() -> tuple[tuple[re.Pattern[str], Operation, bool], ...]:
    patterns = []
    for op in iter_operations():
        addresses = [(op.path, False), *([(op.group_path, True)] if op.group else [])]
        for path, by_group in addresses:
            template = re.escape(path).replace(r"\{endpointId\}", "([^/]+)").replace(r"\{endpointGroupId\}", "([^/]+)")
            patterns.append((re.compile(f"(?:^|.*?){template}/?$"), op, by_group))
    patterns.sort(key=lambda item: not item[2])  # group addresses first: ``.../sale/group/7`` is not ``sale/group``
    return tuple(patterns)


def route(path: str) -> Route | None:
    """The operation ``path`` (``/paynet/api/v2/sale/1001``, ``/api/v2/sale/group/7``) addresses, or None."""
    for pattern, op, by_group in _patterns():
        match = pattern.fullmatch(path)
        if match:
            return Route(op, match.group(1), by_group)
    return None


def nearest(path: str) -> str | None:
    """The operation path nearest to an unknown ``path`` (``/api/v2/sael/1001`` -> ``/api/v2/sale/{endpointId}``)."""
    tail = re.sub(r"/[^/]*$", "/{endpointId}", path[path.find("/api/") :] if "/api/" in path else path)
    close = difflib.get_close_matches(tail, [op.path for op in iter_operations()], 1, 0.8)
    return close[0] if close else None
