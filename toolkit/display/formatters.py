"""The toolkit's types in a notebook: masked HTML views registered as IPython formatters.

The displayed objects (responses, exchanges, orders, pages, drift reports) do not import their display: this module
registers a view for each type with IPython's ``text/html`` formatter (``for_type``), the way ``rich`` and
pandas keep their renderers apart.  ``toolkit`` registers them by name when it is imported in a running
IPython kernel (``register_by_name``); importing ``toolkit.display`` registers them as types.
``html_of(obj)`` is the same view outside IPython (the explorer, tests).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

from toolkit.display.pages import PageView
from toolkit.display.views import ExchangeView, order_html, response_html
from toolkit.exchange import Exchange
from toolkit.flows import Order
from toolkit.models import Response
from toolkit.payer.forms import Page

View = Callable[[Any], str]
VIEWS: dict[type, View] = {
    Response: response_html,
    Exchange: lambda exchange: ExchangeView(exchange)._repr_html_(),
    Order: order_html,
    Page: lambda page: PageView(page)._repr_html_(),
}
# Views of types whose own package draws with this one (``toolkit.drift``): named, imported when one is shown.
NAMED_VIEWS: dict[tuple[str, str], tuple[str, str]] = {
    ("toolkit.drift.report", "DriftReport"): ("toolkit.drift.page", "report_html"),
}


def html_of(obj: object) -> str | None:
    """The masked HTML view of a toolkit object (its type or a base type registered), or None."""
    for cls in type(obj).__mro__:
        view = VIEWS.get(cls) or _named_view(cls)
        if view is not None:
            return view(obj)
    return None


def _named_view(cls: type) -> View | None:
    where = NAMED_VIEWS.get((cls.__module__, cls.__qualname__))
    if where is None:
        return None
    view: View = getattr(importlib.import_module(where[0]), where[1])
    return view


def register(shell: Any = None) -> bool:
    """Register the views with ``shell``'s ``text/html`` formatter (default: the running IPython, if any)."""
    if shell is None:  # (toolkit._ipython has the same look-up; it imports this module when a view is asked for)
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return False
    formatter = shell.display_formatter.formatters["text/html"]
    for cls, view in VIEWS.items():
        formatter.for_type(cls, view)
    for module, name in NAMED_VIEWS:
        formatter.for_type_by_name(module, name, html_of)
    return True
