"""Views for the notebooks and the explorer: the toolkit's display views (``toolkit.display``), the
timeline of orders, and ``show`` (the view of anything).  All masked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolkit.auth import SignatureTrace
from toolkit.callbacks import Received
from toolkit.display.html import esc, masked_items, page, section, shorten, table, text_lines
from toolkit.display.pages import PageView
from toolkit.display.views import (
    KEY_PLACEHOLDER,
    ExchangeView,
    FieldsView,
    Note,
    OrderView,
    ResponseView,
    SignatureView,
)
from toolkit.exchange import Exchange
from toolkit.explorer.timeline import Event
from toolkit.flows import Order
from toolkit.masking import mask_text
from toolkit.models import Response
from toolkit.payer.forms import Page

__all__ = [
    "KEY_PLACEHOLDER",
    "ExchangeView",
    "FieldsView",
    "Note",
    "PageView",
    "SignatureView",
    "TimelineView",
    "esc",
    "masked_items",
    "page",
    "section",
    "shorten",
    "show",
    "table",
    "text_lines",
]


def response_view(response: Response | Mapping[str, str], title: str = "") -> FieldsView:
    if isinstance(response, Response):
        return ResponseView(title or f"response: {response.kind}", dict(response.raw), response)
    return FieldsView(title or f"response: {response.get('type', '')}", dict(response))


def order_view(order: Order) -> FieldsView:
    fields = {"operation": order.operation, **order.ack.raw, **{f"sent {k}": v for k, v in order.fields.items()}}
    return OrderView(f"order {order.orderid} ({order.client_orderid})", fields, order)


def arrival_view(received: Received) -> FieldsView:
    return FieldsView(received.summary() + f" [control ok: {received.control_ok}]", received.params)


_KIND_LABELS = {"request": "→ request", "poll": "↻ status", "callback": "⇠ callback", "redirect": "⇠ redirect"}


@dataclass(frozen=True)
class TimelineView:
    """Events in order: requests, status polls, callbacks, payer redirects and payer steps."""

    events: Sequence[Event]
    title: str = "timeline"
    collapse_polls: bool = True

    def rows(self) -> list[tuple[str, str, str]]:
        """(time, kind, what); consecutive identical polls become one row ``↻ status ×3``."""
        grouped: list[tuple[Event, int]] = []
        for event in self.events:
            last = grouped[-1][0] if grouped else None
            if self.collapse_polls and last and event.kind == last.kind == "poll" and event.summary == last.summary:
                grouped[-1] = (last, grouped[-1][1] + 1)
            else:
                grouped.append((event, 1))
        return [
            (event.time, _KIND_LABELS.get(event.kind, "☺ payer") + (f" ×{count}" if count > 1 else ""), event.summary)
            for event, count in grouped
        ]

    def __repr__(self) -> str:
        return mask_text(f"TimelineView({self.title!r}, {len(self.events)} events)")

    def _repr_html_(self) -> str:
        if not self.events:
            return page(section(self.title, "<p>nothing yet</p>"))
        return page(section(f"{self.title} ({len(self.events)} events, UTC)", table(self.rows(), ("time", "", "what"))))

    def __str__(self) -> str:
        return mask_text("\n".join(f"{t}  {k:<12} {s}" for t, k, s in self.rows()) or "nothing yet")


def show(obj: Any, title: str = "") -> Any:
    """The view of a toolkit object (responses, orders, exchanges, traces, callbacks, events)."""
    if isinstance(obj, Response):
        return response_view(obj, title)
    if isinstance(obj, Order):
        return order_view(obj)
    if isinstance(obj, Exchange):
        return ExchangeView(obj)
    if isinstance(obj, SignatureTrace):
        return SignatureView(obj)
    if isinstance(obj, Received):
        return arrival_view(obj)
    if isinstance(obj, Page):
        return PageView(obj)
    if isinstance(obj, Mapping):
        return FieldsView(title or "fields", {str(k): str(v) for k, v in obj.items()})
    if isinstance(obj, (list, tuple)) and all(isinstance(item, Event) for item in obj):
        return TimelineView(list(obj), title or "timeline")
    if hasattr(obj, "_repr_html_"):
        return obj
    return Note(mask_text(repr(obj)))
