"""Rich display for notebooks: masked HTML views of responses, statuses, orders, exchanges and pages.

The toolkit's own types show themselves through these (``Response._repr_html_``,
``htmlforms.Page._repr_html_``, ``flows.Order._repr_html_``, ``Exchange._repr_html_``); ``show(obj)``
in ``toolkit.notebook`` picks the view of anything.  Every view masks card data and is never given a
control key or a private key.
"""

from __future__ import annotations

from toolkit.display.formatters import html_of, register
from toolkit.display.html import Tone, esc, page, section, table, tone_of
from toolkit.display.pages import PageView, Screenshot, safe_html
from toolkit.display.views import (
    KEY_PLACEHOLDER,
    ExchangeView,
    FieldsView,
    Note,
    OrderView,
    ResponseView,
    SignatureView,
    order_html,
    response_html,
)

register()  # in a running IPython: the toolkit's types show through these views

__all__ = [
    "KEY_PLACEHOLDER",
    "ExchangeView",
    "FieldsView",
    "Note",
    "OrderView",
    "PageView",
    "ResponseView",
    "Screenshot",
    "SignatureView",
    "Tone",
    "esc",
    "html_of",
    "order_html",
    "page",
    "register",
    "response_html",
    "safe_html",
    "section",
    "table",
    "tone_of",
]
