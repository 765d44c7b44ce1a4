"""Rich display for notebooks: masked HTML views of responses, statuses, orders, exchanges and pages.

The toolkit's own types (``Response``, ``Page``, ``Order``, ``Exchange``, ``DriftReport``) do not render
themselves: ``formatters`` registers a view for each with IPython's HTML formatter (``html_of(obj)`` outside
IPython), and ``show(obj)`` in ``toolkit.notebook`` picks the view of anything.  Every view masks card
data and is never given a control key or a private key.
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
