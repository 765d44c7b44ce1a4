"""What the explorer panel shows, as HTML: the message, the tabs, and a static picture of the whole panel.

Pure functions of an ``ExplorerModel`` (no widgets), so that the panel stays a thin wiring of
widgets and the static view (``Explorer.snapshot``) shows the same thing where widgets cannot
render (nbconvert, a code host, a notebook opened without the kernel).  Everything is masked.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.display.html import esc, folded, line, page, section
from toolkit.explorer.history import Result
from toolkit.explorer.model import ExplorerModel
from toolkit.explorer.views import ExchangeView, FieldsView, Note, SignatureView, TimelineView, response_view


@dataclass(frozen=True)
class Snapshot:
    """A static picture of the panel, shown as HTML."""

    html: str

    def _repr_html_(self) -> str:
        return self.html


def message_html(model: ExplorerModel) -> str:
    """The line under the buttons: what the last action did, in the colour of its outcome."""
    last = model.last
    if last is None:
        return Note("pick an operation and an outcome, then Send", tone="plain")._repr_html_()
    extra = [*last.problems, *([last.message] if last.message else [])]
    return Note(last.title, extra=extra, tone=last.tone)._repr_html_()


def empty(text: str) -> str:
    return page(f"<p>{esc(text)}</p>")


def request_html(shown: Result | None) -> str:
    exchange = shown.exchange if shown else None
    if exchange is None:
        return empty("nothing sent" + (f": {shown.title}" if shown else " yet"))
    return page(ExchangeView(exchange).request_html())


def signature_html(shown: Result | None) -> str:
    exchange = shown.exchange if shown else None
    if exchange is None:
        return empty("nothing sent yet")
    return SignatureView(exchange.signature)._repr_html_() if exchange.signature else empty("not signed")


def response_html(shown: Result | None) -> str:
    exchange = shown.exchange if shown else None
    if shown is None or exchange is None:
        return empty("nothing sent yet")
    answer = FieldsView(f"HTTP {exchange.status_code}: {shown.response.get('type', '')}", shown.response)
    status = response_view(shown.status, "the order's status now") if shown.status else None
    return answer._repr_html_() + (status._repr_html_() if status else "")


def timeline_html(model: ExplorerModel) -> str:
    """The selected order as a sequence diagram, with the timeline's table folded under it."""
    selected = model.selected
    if selected is None:
        return empty("no order yet: the timeline of the selected order shows here")
    title = f"timeline of {selected.label}"
    diagram = model.session.diagram_of(selected.order, title)
    table = TimelineView(model.timeline(), title)._repr_html_()
    return page(diagram.html(), folded("the same as a table (UTC)", table))


def export_html(model: ExplorerModel) -> str:
    if not model.export_text:
        return empty("nothing exported yet: press Export scenario")
    return page(section("scenario", f"<pre>{esc(model.export_text)}</pre>"))


def snapshot_html(model: ExplorerModel) -> str:
    """The panel as a static page: the last message, the selected order, its diagram, the export."""
    selected = model.selected
    order = line(f"selected: {selected.label}" if selected else "no order yet")
    steps = ", ".join(model.next_steps()) or "none"
    head = page(
        section("gatekit explorer (a static view: run the notebook to use the buttons)", order),
        line(f"next steps that apply: {steps}"),
    )
    parts = [head, message_html(model), timeline_html(model)]
    if model.export_text:
        parts.append(export_html(model))
    return "".join(parts)
