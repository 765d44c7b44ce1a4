"""Rich display in IPython without importing it: the toolkit's displayed types, registered by name.

``import toolkit`` in a running IPython kernel calls ``register_by_name``: IPython keeps the names and
imports ``toolkit.display.formatters`` only when one of these objects is first shown, so the objects never
import their display (``toolkit.display.formatters`` has the views).  Outside IPython nothing happens.
"""

from __future__ import annotations

import sys
from typing import Any

# (module, type): the toolkit objects a notebook shows as masked HTML (their subclasses too)
DISPLAYED = (
    ("toolkit.models", "Response"),
    ("toolkit.exchange", "Exchange"),
    ("toolkit.flows", "Order"),
    ("toolkit.payer.forms", "Page"),
    ("toolkit.drift.report", "DriftReport"),
)


def running_shell() -> Any:
    """The running IPython shell, or None (IPython not imported, or not in a kernel or terminal shell)."""
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def register_by_name() -> bool:
    """Register the views by type name with the running IPython's ``text/html`` formatter (False: none runs)."""
    shell = running_shell()
    if shell is None:
        return False
    formatter = shell.display_formatter.formatters["text/html"]
    for module, name in DISPLAYED:
        formatter.for_type_by_name(module, name, _html)
    return True


def _html(obj: Any) -> str | None:
    from toolkit.display.formatters import html_of

    return html_of(obj)
