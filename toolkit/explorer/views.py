"""Small view objects that notebooks display as HTML (``_repr_html_``) and print as text; all masked.

Every value goes through ``toolkit.masking`` (by field name, then any card number or ``cvv2=`` in
free text) and the finished HTML through ``mask_text`` once more.  No view is ever given a
control key or a private key, so none can show one.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from toolkit.auth import SignatureTrace
from toolkit.callbacks import Received, mask_params
from toolkit.exchange import Exchange
from toolkit.explorer.timeline import Event, decoded_answer
from toolkit.flows import Order
from toolkit.masking import mask_text
from toolkit.models import Response

KEY_PLACEHOLDER = "<merchant_control_key>"
_STYLE = (
    "<style>.gk table{border-collapse:collapse;margin:2px 0 8px 0}"
    ".gk td,.gk th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top;font-size:12px}"
    ".gk th{background:#f4f4f4}.gk code{white-space:pre-wrap;word-break:break-all}"
    ".gk .bad{color:#b00020;font-weight:bold}.gk .ok{color:#1b7f3b;font-weight:bold}"
    ".gk h4{margin:6px 0 2px 0}</style>"
)
_HIDDEN_HEADERS = frozenset({"content-length", "connection", "accept-encoding"})
_LONG = 240


def esc(value: object) -> str:
    return html.escape(str(value))


def shorten(value: str, limit: int = _LONG) -> str:
    return value if len(value) <= limit else value[:limit] + f"… ({len(value)} characters)"


def table(rows: Iterable[Sequence[object]], head: Sequence[str] = ()) -> str:
    """An HTML table of escaped cells."""
    header = "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>" if head else ""
    body = "".join("<tr>" + "".join(f"<td><code>{esc(c)}</code></td>" for c in row) + "</tr>" for row in rows)
    return f"<table>{header}{body}</table>"


def section(title: str, content: str) -> str:
    return f"<h4>{esc(title)}</h4>{content}"


def page(*parts: str) -> str:
    """Wrap parts in the styled container and mask the whole once more."""
    return mask_text(_STYLE + '<div class="gk">' + "".join(parts) + "</div>")


def masked_items(fields: Mapping[str, str]) -> list[tuple[str, str]]:
    """Card data masked by name and in free text; a value masked already (``453897******6732``) stays."""
    masked = mask_params(dict(fields))
    return [(name, shorten(value if "*" in value else masked[name])) for name, value in fields.items()]


def text_lines(fields: Mapping[str, str]) -> str:
    return "\n".join(f"  {name} = {value}" for name, value in masked_items(fields))


@dataclass(frozen=True)
class FieldsView:
    """A titled table of fields (a response, a callback, a request)."""

    title: str
    fields: Mapping[str, str]

    def _repr_html_(self) -> str:
        return page(section(self.title, table(masked_items(self.fields), ("field", "value"))))

    def __str__(self) -> str:
        return mask_text(f"{self.title}\n{text_lines(self.fields)}")

    def __repr__(self) -> str:
        return mask_text(f"FieldsView({self.title!r}, {len(self.fields)} fields)")


def response_view(response: Response | Mapping[str, str], title: str = "") -> FieldsView:
    raw = response.raw if isinstance(response, Response) else response
    return FieldsView(title or f"response: {raw.get('type', '')}", dict(raw))


def order_view(order: Order) -> FieldsView:
    fields = {"operation": order.operation, **order.ack.raw, **{f"sent {k}": v for k, v in order.fields.items()}}
    return FieldsView(f"order {order.orderid} ({order.client_orderid})", fields)


def arrival_view(received: Received) -> FieldsView:
    return FieldsView(received.summary() + f" [control ok: {received.control_ok}]", received.params)


@dataclass(frozen=True)
class SignatureView:
    """The control formula with its parts, or the OAuth base string, signature and header."""

    trace: SignatureTrace

    def rows(self) -> list[tuple[str, str]]:
        trace = self.trace.masked()
        if trace.scheme == "control":
            parts = [*trace.parts, ("merchant_control_key", KEY_PLACEHOLDER)]
            return [
                ("formula", trace.formula),
                *[(f"  {name}", value) for name, value in parts],
                ("control", trace.control),
            ]
        method, url, params = ([*trace.base_string.split("&", 2), "", ""])[:3]
        readable = unquote(params).replace("&", "\n")
        return [
            ("scheme", f"OAuth 1.0a {trace.scheme}"),
            ("base string", trace.base_string),
            ("  method", method),
            ("  URL", unquote(url)),
            ("  parameters (decoded once, sorted)", readable),
            ("signature", trace.signature),
            ("Authorization", trace.header),
        ]

    def _repr_html_(self) -> str:
        return page(section(f"signature ({self.trace.scheme})", table(self.rows())))

    def __repr__(self) -> str:
        return f"SignatureView({self.trace.scheme})"

    def __str__(self) -> str:
        return mask_text("\n".join(f"{name}: {value}" for name, value in self.rows()))


@dataclass(frozen=True)
class ExchangeView:
    """One HTTP exchange: the request (masked), what was signed, and the decoded answer."""

    exchange: Exchange

    def __repr__(self) -> str:
        ex = self.exchange
        return mask_text(f"ExchangeView({ex.operation}: {ex.method} {ex.url} -> HTTP {ex.status_code})")

    def answer(self) -> dict[str, str]:
        return decoded_answer(self.exchange)

    def request_html(self) -> str:
        """The request line, its headers and its (masked) fields, unwrapped: ``page`` masks the whole."""
        ex = self.exchange
        headers = [(k, v) for k, v in ex.request_headers.items() if k.lower() not in _HIDDEN_HEADERS]
        return section(f"request: {ex.method} {ex.url}", table(headers, ("header", "value"))) + table(
            masked_items(dict(ex.request_fields)), ("field", "value")
        )

    def _repr_html_(self) -> str:
        ex = self.exchange
        status = ex.status_code if ex.status_code is not None else f"no answer: {ex.error}"
        parts = [self.request_html()]
        if ex.signature is not None:
            parts.append(section(f"signature ({ex.signature.scheme})", table(SignatureView(ex.signature).rows())))
        parts.append(
            section(f"response: HTTP {status} in {ex.elapsed * 1000:.0f} ms", table(masked_items(self.answer())))
        )
        return page(*parts)

    def __str__(self) -> str:
        ex = self.exchange
        lines = [f"{ex.method} {ex.url}", text_lines(dict(ex.request_fields))]
        if ex.signature is not None:
            lines.append(str(SignatureView(ex.signature)))
        lines += [f"HTTP {ex.status_code}", text_lines(self.answer())]
        return mask_text("\n".join(lines))


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


@dataclass(frozen=True)
class Note:
    """A short message (an error, a hint) shown in the same style."""

    text: str
    bad: bool = False
    extra: Sequence[str] = field(default_factory=tuple)

    def __repr__(self) -> str:
        return mask_text(f"Note({self.text!r})")

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{esc(line)}</li>" for line in self.extra)
        css = "bad" if self.bad else "ok"
        return page(f'<p class="{css}">{esc(self.text)}</p>' + (f"<ul>{items}</ul>" if items else ""))

    def __str__(self) -> str:
        return mask_text("\n".join([self.text, *(f"  - {line}" for line in self.extra)]))


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
    if isinstance(obj, Mapping):
        return FieldsView(title or "fields", {str(k): str(v) for k, v in obj.items()})
    if isinstance(obj, (list, tuple)) and all(isinstance(item, Event) for item in obj):
        return TimelineView(list(obj), title or "timeline")
    if hasattr(obj, "_repr_html_"):
        return obj
    return Note(mask_text(repr(obj)))
