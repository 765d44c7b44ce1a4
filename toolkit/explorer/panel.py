"""Explorer: the ipywidgets panel, a thin view over ``ExplorerModel`` (every decision is the model's).

    panel = Explorer(toolkit.notebook.start_simulator())
    panel                                   # shows the panel in a notebook

Compact: the operation, the outcome and Send on top; the card, with Tokenize as the payer (a Hosted
Fields checkout: the card typed into the gateway's iframes); the request's fields folded (required ones
pre-filled, optional ones apart); the selected order with Status, Act as the payer and the next
steps that apply; export and save; the payer's options (who runs 3-D Secure, the challenge password,
the method step); one message in the colour of the outcome; tabs with the request, the signature,
the response, the order's sequence diagram and the export.  Where widgets
cannot render, the panel shows a static picture of itself (``snapshot``).

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
from toolkit.explorer import panel_views as views
from toolkit.explorer.flowsteps import STEPS
from toolkit.explorer.forms import FormField
from toolkit.explorer.history import GATEWAY_RUN, MERCHANT_RUN
from toolkit.explorer.model import METHOD_RESULTS, PASSWORDS, ExplorerModel
from toolkit.explorer.session import GatewaySession
from toolkit.explorer.timeline import Event
from toolkit.explorer.views import Note
from toolkit.exporter.feature import ExportError
from toolkit.exporter.place import default_export_path
from toolkit.masking import mask_text

NO_OUTCOME = "(the data decides nothing here)"
TABS = ("request", "signature", "response", "timeline", "export")
_EXPECTED = (GatewayError, ExportError, LookupError, ValueError)
_NARROW = {"description_width": "initial"}
_FIELD = {"description_width": "170px"}
ROAD_LABELS = (
    ("the gateway (the status html shown, nothing uploaded)", GATEWAY_RUN),
    ("the merchant (its own pages, the uploads)", MERCHANT_RUN),
)


def _button(description: str, tip: str = "", **options: Any) -> W.Button:
    return W.Button(description=description, tooltip=tip, layout=W.Layout(width="auto"), **options)


class Explorer:
    """The panel; ``model`` holds the state, ``widget`` is what a notebook shows."""

    def __init__(self, source: GatewaySession | ExplorerModel, *, operation: str = "sale") -> None:
        self.model = source if isinstance(source, ExplorerModel) else ExplorerModel(source, operation=operation)
        model = self.model
        self._syncing = False
        self._form_of = ""
        operations = [(f"{op.name}: {op.summary}", op.name) for op in model.operations]
        self.operation = W.Dropdown(options=operations, description="operation", style=_NARROW,
                                    layout=W.Layout(width="400px"))  # fmt: skip
        self.outcome = W.Dropdown(description="outcome", style=_NARROW, layout=W.Layout(width="330px"))
        self.send_button = _button("Send", "sign and send the request", button_style="primary", icon="paper-plane")
        self.card = W.Dropdown(description="card", style=_NARROW, layout=W.Layout(width="400px"))
        self.new_data_button = _button("New test data", "a new payer and new ids", icon="refresh")
        self.required, self.optional = W.VBox(), W.VBox()
        self.form = W.Accordion(children=[self.required, self.optional], titles=("required fields", "optional"))
        self.inputs: dict[str, W.Widget] = {}
        self.orders = W.Dropdown(description="order", style=_NARROW, layout=W.Layout(width="480px"))
        self.status_button = _button("Status", "poll until final, the payer must act, or unknown")
        self.payer_button = _button("Act as the payer", "3-D Secure or the hosted page", button_style="info")
        typed = "Hosted Fields: the payer types the form's card into the gateway's iframes; the token fills sale_v4"
        self.tokenize_button = _button("Tokenize as the payer", typed, button_style="info")
        self.amount = W.Text(placeholder="amount (blank: all that is left)", layout=W.Layout(width="220px"))
        self.step_buttons = {step: _button(step.capitalize()) for step in STEPS}
        self.road = W.Dropdown(options=ROAD_LABELS, value=model.road, description="3-D Secure run by",
                               style=_NARROW, layout=W.Layout(width="480px"))  # fmt: skip
        self.password = W.Dropdown(options=PASSWORDS, description="challenge password", style=_NARROW)
        self.method = W.Dropdown(options=METHOD_RESULTS, description="method step (merchant-run)", style=_NARROW)
        self.auto_method = W.Checkbox(value=True, description="merchant-run: report the method step right after Send",
                                      style=_NARROW, layout=W.Layout(width="auto"))  # fmt: skip
        self.export_button = _button("Export scenario", "what was done, as a scenario of the suite", icon="file-text")
        self.new_scenario_button = _button("New scenario", "forget the actions recorded so far")
        self.include_callbacks = W.Checkbox(value=False, description="check callbacks in the export",
                                            style=_NARROW, layout=W.Layout(width="auto"))  # fmt: skip
        self.save_path = W.Text(value=str(default_export_path()), description="save to",
                                style=_NARROW, layout=W.Layout(width="420px"))  # fmt: skip
        self.save_button = _button("Save", "write the export to this file", icon="save")
        self.options = W.Accordion(
            children=[
                W.VBox([self.road, W.HBox([self.password, self.method]), self.auto_method, self.include_callbacks])
            ],
            titles=("payer and export options",),
        )
        self.message = W.HTML()
        self.panes = {name: W.HTML() for name in TABS}
        self.exported = W.Textarea(layout=W.Layout(width="100%", height="240px"))
        self.tabs = W.Tab(children=[*(self.panes[n] for n in TABS[:-1]), W.VBox([self.exported])], titles=TABS)
        self.widget = W.VBox(
            [
                W.HTML("<b>gatekit explorer</b>"),
                W.HBox([self.operation, self.outcome, self.send_button]),
                W.HBox([self.card, self.new_data_button, self.tokenize_button]),
                self.form,
                W.HBox([self.orders, self.status_button, self.payer_button]),
                W.HBox([self.amount, *self.step_buttons.values()]),
                W.HBox([self.export_button, self.save_path, self.save_button, self.new_scenario_button]),
                self.options,
                self.message,
                self.tabs,
            ],
            layout=W.Layout(max_width="1100px"),
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
        self._on_change(self.road, lambda value: setattr(model, "road", value))
        self._on_change(self.password, lambda value: setattr(model, "password", value))
        self._on_change(self.method, lambda value: setattr(model, "method_result", value))
        self._on_change(self.auto_method, lambda value: setattr(model, "auto_method", value))
        self._on_change(self.include_callbacks, lambda value: setattr(model, "include_callbacks", value))
        self._on_click(self.send_button, model.send)
        self._on_click(self.new_data_button, model.new_test_data)
        self._on_click(self.status_button, model.refresh)
        self._on_click(self.payer_button, model.follow_as_payer)
        self._on_click(self.tokenize_button, model.tokenize)
        for step, button in self.step_buttons.items():
            self._on_click(button, self._step_action(step))
        self._on_click(self.export_button, self._export)
        self._on_click(self.new_scenario_button, model.new_scenario)
        self._on_click(self.save_button, lambda: model.save_export(self.save_path.value))

    def _export(self) -> None:
        self.model.export()
        self.tabs.selected_index = TABS.index("export")

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
        try:
            action()
        except _EXPECTED as exc:
            self.render()
            self.message.value = Note(f"{exc.__class__.__name__}: {exc}", bad=True)._repr_html_()
            return
        self.render()

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
            self.road.value = model.road
            self.auto_method.value = model.auto_method
            self.include_callbacks.value = model.include_callbacks
        finally:
            self._syncing = False
        steps = model.next_steps()
        for step, button in self.step_buttons.items():
            button.disabled = step not in steps
            button.tooltip = model.why_not(step) if model.selected and step not in steps else f"{step} the order"
        self.status_button.disabled = model.selected is None
        self.payer_button.disabled = not model.payer_can_act()
        self.tokenize_button.disabled = not model.can_tokenize()
        self._render_panes()

    def _render_form(self) -> None:
        model = self.model
        if self._form_of != model.operation.name:
            self.inputs = {spec.name: self._input(spec) for spec in model.fields}
            required = [self.inputs[s.name] for s in model.fields if s.section != "optional"]
            optional = [self.inputs[s.name] for s in model.fields if s.section == "optional"]
            self.required.children, self.optional.children = required, optional
            self.form.titles = (f"required fields ({len(required)}, pre-filled)", f"optional ({len(optional)})")
            self._form_of = model.operation.name
        for name, widget in self.inputs.items():
            widget.value = model.display_value(name)

    def _input(self, spec: FormField) -> W.Widget:
        suffix = {"one of": " (one of)", "together": " (with its group)"}.get(spec.section, "")
        label = spec.name + (" *" if spec.required else "") + suffix
        layout = W.Layout(width="640px")
        name = spec.name
        if spec.secret:  # shown masked; a value put in it is refused by the model and masked again
            tip = "card data: chosen with the outcome and card lists, never typed or shown"
            secret = W.Text(description=label, disabled=True, tooltip=tip, style=_FIELD, layout=layout)
            self._on_change(secret, lambda value: self.model.set_value(name, value))
            return secret
        if spec.choices:
            widget: W.Widget = W.Dropdown(options=("", *spec.choices), description=label, style=_FIELD, layout=layout)
        else:
            widget = W.Text(description=label, placeholder=spec.doc, tooltip=spec.doc, style=_FIELD, layout=layout)
        self._on_change(widget, lambda value: self.model.set_value(name, value))
        return widget

    def _render_panes(self) -> None:
        model = self.model
        self.message.value = views.message_html(model)
        self.panes["request"].value = views.request_html(model.shown)
        self.panes["signature"].value = views.signature_html(model.shown)
        self.panes["response"].value = views.response_html(model.shown)
        self._render_timeline()
        self.exported.value = model.export_text

    def _render_timeline(self) -> None:
        self.panes["timeline"].value = views.timeline_html(self.model)

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

    def snapshot(self) -> views.Snapshot:
        """A static picture of the panel (message, selected order, its diagram, the export): shows anywhere."""
        return views.Snapshot(views.snapshot_html(self.model))

    def close(self) -> None:
        """Stop following the timeline and close every widget of the panel (it disappears from the notebook)."""
        self.model.session.timeline.unsubscribe(self._on_event)
        for widget in _walk(self.widget):
            widget.close()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The live widget, with a static picture beside it for where widgets cannot render."""
        bundle = dict(self.widget._repr_mimebundle_(**kwargs))
        bundle["text/html"] = views.snapshot_html(self.model)
        bundle["text/plain"] = mask_text(
            f"Explorer({self.model.selected.label if self.model.selected else 'no order'})"
        )
        return bundle

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
