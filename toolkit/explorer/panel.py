"""Explorer: the ipywidgets panel, a thin view over ``ExplorerModel`` (every decision is the model's).

    panel = Explorer(toolkit.notebook.start_simulator())
    panel                                   # shows the panel in a notebook

Widgets only read the model (``render``) and call it (button clicks, value changes), so tests drive
the panel by setting ``.value`` and calling ``.click()``.  Card data is never put in a widget: card
fields show the masked value and are chosen with the outcome and card lists; no widget is ever
given the control key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as W

from toolkit.errors import GatewayError
from toolkit.explorer.export import ExportError
from toolkit.explorer.flowsteps import STEPS
from toolkit.explorer.forms import FormField
from toolkit.explorer.model import METHOD_RESULTS, PASSWORDS, ExplorerModel
from toolkit.explorer.session import GatewaySession
from toolkit.explorer.timeline import Event
from toolkit.explorer.views import ExchangeView, FieldsView, Note, SignatureView, TimelineView, esc, page

NO_OUTCOME = "(the data decides nothing here)"
TABS = ("request", "signature", "response", "timeline", "export")
_EXPECTED = (GatewayError, ExportError, LookupError, ValueError)
_WIDE = {"description_width": "170px"}


class Explorer:
    """The panel; ``model`` holds the state, ``widget`` is what a notebook shows."""

    def __init__(self, source: GatewaySession | ExplorerModel, *, operation: str = "sale") -> None:
        self.model = source if isinstance(source, ExplorerModel) else ExplorerModel(source, operation=operation)
        model = self.model
        self._syncing = False
        self._form_of = ""
        self.operation = W.Dropdown(
            options=[(f"{op.name}: {op.summary}", op.name) for op in model.operations],
            description="operation",
            style=_WIDE,
            layout=W.Layout(width="640px"),
        )
        self.outcome = W.Dropdown(description="outcome", style=_WIDE, layout=W.Layout(width="640px"))
        self.card = W.Dropdown(description="card", style=_WIDE, layout=W.Layout(width="640px"))
        self.form = W.VBox()
        self.inputs: dict[str, W.Widget] = {}
        self.send_button = W.Button(description="Send", button_style="primary", icon="paper-plane")
        self.new_data_button = W.Button(description="New test data", icon="refresh")
        self.orders = W.Dropdown(description="order", style=_WIDE, layout=W.Layout(width="640px"))
        self.status_button = W.Button(description="Status", tooltip="poll until final, the payer must act, or unknown")
        self.payer_button = W.Button(description="Act as the payer", tooltip="3-D Secure or the hosted page")
        self.password = W.Dropdown(options=PASSWORDS, description="challenge password", style=_WIDE)
        self.method = W.Dropdown(options=METHOD_RESULTS, description="method step", style=_WIDE)
        self.amount = W.Text(description="amount", placeholder="blank: all that is left", style=_WIDE)
        self.step_buttons = {step: W.Button(description=step.capitalize()) for step in STEPS}
        self.export_button = W.Button(description="Export scenario", icon="file-text")
        self.new_scenario_button = W.Button(description="New scenario", tooltip="forget the actions recorded so far")
        self.include_callbacks = W.Checkbox(description="check callbacks in the export", value=False)
        self.save_path = W.Text(value="../features/exported/explorer.feature", description="save to", style=_WIDE)
        self.save_button = W.Button(description="Save", icon="save")
        self.message = W.HTML()
        self.panes = {name: W.HTML() for name in TABS[:-1]}
        self.exported = W.Textarea(layout=W.Layout(width="100%", height="260px"))
        self.tabs = W.Tab(children=[*self.panes.values(), self.exported], titles=TABS)
        self.widget = W.VBox(
            [
                W.HTML("<b>gatekit explorer</b>"),
                self.operation,
                self.outcome,
                self.card,
                self.form,
                W.HBox([self.send_button, self.new_data_button]),
                self.orders,
                W.HBox([self.status_button, self.payer_button, self.password, self.method]),
                W.HBox([self.amount, *self.step_buttons.values()]),
                W.HBox([self.export_button, self.new_scenario_button, self.include_callbacks]),
                W.HBox([self.save_path, self.save_button]),
                self.message,
                self.tabs,
            ]
        )
        self._wire()
        model.session.timeline.subscribe(self._on_event)
        self.render()

    # --- wiring -----------------------------------------------------------------------------------

    def _wire(self) -> None:
        model = self.model
        self._on_change(self.operation, model.select_operation)
        self._on_change(self.outcome, lambda label: model.select_outcome(label) if model.outcomes else None)
        self._on_change(self.card, lambda label: model.select_card(label) if model.cards else None)
        self._on_change(self.orders, lambda key: model.select_order(key) if key else None)
        self._on_change(self.password, lambda value: setattr(model, "password", value))
        self._on_change(self.method, lambda value: setattr(model, "method_result", value))
        self._on_change(self.include_callbacks, lambda value: setattr(model, "include_callbacks", value))
        self._on_click(self.send_button, model.send)
        self._on_click(self.new_data_button, model.prefill)
        self._on_click(self.status_button, model.refresh)
        self._on_click(self.payer_button, model.follow_as_payer)
        for step, button in self.step_buttons.items():
            self._on_click(button, self._step_action(step))
        self._on_click(self.export_button, model.export)
        self._on_click(self.new_scenario_button, model.new_scenario)
        self._on_click(self.save_button, lambda: model.save_export(self.save_path.value))

    def _step_action(self, step: str) -> Callable[[], object]:
        return lambda: self.model.run_step(step, self.amount.value)

    def _on_change(self, widget: W.Widget, action: Callable[[Any], object]) -> None:
        def changed(change: dict[str, Any]) -> None:
            if not self._syncing:
                self._run(lambda: action(change["new"]))

        widget.observe(changed, names="value")

    def _on_click(self, button: W.Button, action: Callable[[], object]) -> None:
        button.on_click(lambda _: self._run(action))

    def _run(self, action: Callable[[], object]) -> None:
        """Call the model; an expected refusal (export, selection, gateway) is shown, not raised."""
        error: Exception | None = None
        try:
            result = action()
        except _EXPECTED as exc:
            error, result = exc, None
        self.render()
        if error is not None:
            self.message.value = Note(f"{error.__class__.__name__}: {error}", bad=True)._repr_html_()
        elif isinstance(result, str) and result.startswith("@exported"):
            self.tabs.selected_index = TABS.index("export")

    # --- rendering --------------------------------------------------------------------------------

    def render(self) -> None:
        """Put the model's state in the widgets (masked)."""
        model = self.model
        self._syncing = True
        try:
            self.operation.value = model.operation.name
            labels = [choice.label for choice in model.outcomes] or [NO_OUTCOME]
            self.outcome.options, self.outcome.disabled = labels, not model.outcomes
            self.outcome.value = model.outcome.label if model.outcome else NO_OUTCOME
            self.card.options, self.card.disabled = list(model.cards) or ["(no card)"], not model.cards
            self.card.value = model.card_label or "(no card)"
            self._render_form()
            self.orders.options = [(t.label, t.key) for t in model.orders] or [("(no order yet)", "")]
            self.orders.value = model.selected.key if model.selected else ""
            self.include_callbacks.value = model.include_callbacks
        finally:
            self._syncing = False
        steps = model.next_steps()
        for step, button in self.step_buttons.items():
            button.disabled = step not in steps
        self.status_button.disabled = self.payer_button.disabled = model.selected is None
        self._render_result()
        self.exported.value = model.export_text

    def _render_form(self) -> None:
        model = self.model
        if self._form_of != model.operation.name:
            self.inputs = {spec.name: self._input(spec) for spec in model.fields}
            self.form.children = list(self.inputs.values())
            self._form_of = model.operation.name
        for name, widget in self.inputs.items():
            widget.value = model.display_value(name)

    def _input(self, spec: FormField) -> W.Widget:
        label = spec.name + (" *" if spec.required else "") + (" (one of)" if spec.section == "one of" else "")
        layout = W.Layout(width="640px")
        name = spec.name
        if spec.secret:  # shown masked; a value put in it is refused by the model and masked again
            tip = "card data: chosen with the outcome and card lists, never typed or shown"
            secret = W.Text(description=label, disabled=True, tooltip=tip, style=_WIDE, layout=layout)
            self._on_change(secret, lambda value: self.model.set_value(name, value))
            return secret
        if spec.choices:
            widget: W.Widget = W.Dropdown(options=("", *spec.choices), description=label, style=_WIDE, layout=layout)
        else:
            widget = W.Text(description=label, placeholder=spec.doc, tooltip=spec.doc, style=_WIDE, layout=layout)
        self._on_change(widget, lambda value: self.model.set_value(name, value))
        return widget

    def _render_result(self) -> None:
        last = self.model.last
        if last is None:
            self.message.value = Note("pick an operation and an outcome, then Send")._repr_html_()
        else:
            extra = [*last.problems, *([last.message] if last.message else [])]
            self.message.value = Note(last.title, bad=not last.ok, extra=extra)._repr_html_()
        exchange = last.exchange if last else None
        if last is None or exchange is None:
            for name in ("request", "signature", "response"):
                self.panes[name].value = _empty("nothing sent" + (f": {last.title}" if last else " yet"))
        else:
            self.panes["request"].value = page(ExchangeView(exchange).request_html())
            trace = exchange.signature
            self.panes["signature"].value = SignatureView(trace)._repr_html_() if trace else _empty("not signed")
            answer = FieldsView(f"HTTP {exchange.status_code}: {last.response.get('type', '')}", last.response)
            status = FieldsView("the order's status now", dict(last.status.raw)) if last.status else None
            self.panes["response"].value = answer._repr_html_() + (status._repr_html_() if status else "")
        self._render_timeline()

    def _render_timeline(self) -> None:
        selected = self.model.selected
        title = f"timeline of {selected.label}" if selected else "timeline"
        self.panes["timeline"].value = TimelineView(self.model.timeline(), title)._repr_html_()

    def _on_event(self, event: Event) -> None:
        """Callbacks and payer redirects arrive on the receiver's thread: refresh the timeline."""
        selected = self.model.selected
        if (
            event.kind in ("callback", "redirect")
            and selected
            and event.concerns(selected.orderid, selected.client_orderid)
        ):
            self._render_timeline()

    # --- display ----------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop following the timeline and close every widget of the panel."""
        self.model.session.timeline.unsubscribe(self._on_event)
        for widget in _walk(self.widget):
            widget.close()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def texts(self) -> list[str]:
        """Every string the panel holds (values, options, labels, tips): for checks that nothing leaks."""
        found: list[str] = []
        for widget in _walk(self.widget):
            for name in ("value", "description", "placeholder", "tooltip", "options", "_options_labels", "titles"):
                value = getattr(widget, name, None)
                if isinstance(value, str):
                    found.append(value)
                elif isinstance(value, (tuple, list)):
                    found += [str(item) for item in value]
        return found


def _walk(root: W.Widget) -> list[W.Widget]:
    """The widget and all its descendants."""
    found, stack = [], [root]
    while stack:
        widget = stack.pop()
        found.append(widget)
        stack.extend(getattr(widget, "children", ()))
    return found


def _empty(text: str) -> str:
    return page(f"<p>{esc(text)}</p>")
