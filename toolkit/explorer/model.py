"""ExplorerModel: everything the explorer panel does, as plain Python (the widgets only call it).

Pick an operation of the catalogue, get a form pre-filled from faker and the outcome table, send
it, and follow what happens: the masked request, what was signed, the answer, the order's
timeline.  Then act as the payer (3-D Secure, hosted pages) or run the next step of the flow on the
selected order.  Every action is recorded in ``history``; ``export()`` writes it as a Gherkin
scenario of the certification suite (``toolkit.exporter.feature``).

3-D Secure takes one of two roads (``road``, behaviour 12): ``gateway-run`` (the default, what the shop
plugins do: the status html shown to the payer, nothing uploaded, the order final when the payer comes
back) or ``merchant-run`` (the method step reported, the CRes / PaRes uploaded: ``toolkit.explorer.payerflow``).

A Hosted Fields checkout (hosted-fields.md): send ``create_ephemeral_ticket`` (the form then shows ``sale_v4``),
choose the outcome of the card the payer types and ``tokenize`` as the payer (the token fills the form), send
``sale_v4``; act as the payer when its status sends the payer to 3-D Secure; ``status_v4`` from the form
(``toolkit.explorer.hostedflow``).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from pathlib import Path

from toolkit.callbacks import CallbackTimeout
from toolkit.client import LATER_TRANSACTIONS
from toolkit.errors import ApiError, GatewayError, InvalidRequestError, WaitTimeout
from toolkit.exchange import Exchange
from toolkit.explorer import applicable, forms
from toolkit.explorer.flowsteps import STEPS, StepRunner
from toolkit.explorer.formstate import FormState
from toolkit.explorer.history import GATEWAY_RUN, ROADS, Action, Result, Tracked
from toolkit.explorer.hostedflow import Checkout, HostedFieldsFlow
from toolkit.explorer.payerflow import PayerFlow
from toolkit.explorer.session import GatewaySession
from toolkit.explorer.timeline import Event
from toolkit.exporter.feature import export_feature
from toolkit.exporter.place import default_export_path, how_to_run
from toolkit.flows import METHOD_INDICATORS, FlowError, Order
from toolkit.masking import mask_fields
from toolkit.models import (
    AsyncResponse,
    CardRefResponse,
    EphemeralTicketResponse,
    FormResponse,
    HostedSaleResponse,
    Status,
    StatusResponse,
)
from toolkit.operations import Operation
from toolkit.payer import PASSWORDS as PAYER_PASSWORDS
from toolkit.payer import PayerError, TokenizeRefused

PASSWORDS = tuple(PAYER_PASSWORDS)  # "right", "wrong"
# Edits that need no note in an export: the phrases carry the money, and ids are new in every run.
_EXPRESSED = frozenset({"amount", "currency", "client_orderid", "client-order-id", "orderid"})
METHOD_RESULTS = tuple(METHOD_INDICATORS)  # "completed", "timed out", "absent"
_NEWS = ("first_name", "last_name", "client_orderid", "client-order-id", "credit_card_number")
_KEYWORDS = ("Given ", "When ", "Then ", "And ")


class ExplorerModel(FormState):
    """The explorer's state and actions; ``session`` is a ``GatewaySession`` (embedded or connected)."""

    def __init__(self, session: GatewaySession, *, operation: str = "sale") -> None:
        self.session = session
        self.orders: list[Tracked] = []
        self.selected: Tracked | None = None
        self.history: list[Action] = []
        self.last: Result | None = None  # the message under the buttons
        self.shown: Result | None = None  # what the request, signature and response tabs show
        self.password = PASSWORDS[0]
        self.method_result = METHOD_RESULTS[0]
        self._road = GATEWAY_RUN
        self.auto_method = True  # merchant-run: report the method step right after Send (10 s from the load)
        self.export_text = ""
        self.include_callbacks = False
        self._steps = StepRunner(self)
        self.checkout = Checkout()  # the Hosted Fields checkout page the explorer stands for
        super().__init__(operation)

    @property
    def road(self) -> str:
        """Who runs 3-D Secure on an order nobody uploaded to yet (behaviour 12): ``gateway-run`` (the status html
        shown to the payer, nothing uploaded) or ``merchant-run`` (the method step reported, the result uploaded)."""
        return self._road

    @road.setter
    def road(self, road: str) -> None:
        if road not in ROADS:
            raise ValueError(f"no 3-D Secure road {road!r}; the roads are: {', '.join(ROADS)}")
        self._road = road

    # --- the form (FormState), as this model fills it -------------------------------------------------

    def new_test_data(self) -> Result:
        """The ``New test data`` button: a new payer, new ids, the card again; says what changed."""
        self.prefill()
        shown = [f"{name} {self.display_value(name)}" for name in _NEWS if self.values.get(name)]
        return self._confirm(Result("New test data", True, ", ".join(shown)))

    def _context(self) -> forms.Context:
        order = self.selected
        refs = [t.card_ref_id for t in self.orders if t.card_ref_id]
        return forms.Context(
            redirect_url=self.session.receiver.redirect_url_for(self.operation.name),
            callback_url=self.session.callback_url,
            client_orderid=order.client_orderid if order else "",
            orderid=order.orderid if order else "",
            cardrefid=refs[-1] if refs else "",
            payer_fields=dict(order.acs_result) if order else {},
            hosted_fields_token=self.checkout.token,
        )

    # --- sending ----------------------------------------------------------------------------------

    def send(self) -> Result:
        """Sign and send the form; an order the gateway creates is followed until it settles."""
        op = self.operation
        fields = {name: value for name, value in self.values.items() if value.strip()}
        edited = tuple(
            sorted(n for n, v in self.values.items() if v != self._prefilled.get(n, v) and n not in _EXPRESSED)
        )
        target = self.find(fields.get("orderid", ""))
        mark = len(self.session.exchanges)
        try:
            call = self.session.client.prepare(op, fields)
        except InvalidRequestError as exc:
            problems = tuple(str(p) for p in exc.problems)
            return self._show(Result(f"{op.name} not sent", False, "the client refused the request", problems=problems))
        try:
            response = self.session.client.send(call)
        except ApiError as exc:
            self.history.append(Action(op.name, target, None, mask_fields(fields), refusal=exc.error_message))
            return self._show(Result(f"{op.name} refused", False, exc.error_message, self._since(mark)))
        except GatewayError as exc:
            return self._show(Result(f"{op.name} failed", False, str(exc), self._since(mark)))
        created, status = self._after_send(op, fields, response, target)
        outcome = self.outcome.name if self.outcome else ""
        self.history.append(Action(op.name, target, created, mask_fields(fields), outcome, edited=edited))
        self._renew_ids()
        message = PayerFlow(self).at_send(created) if created is not None else ""
        if isinstance(response, EphemeralTicketResponse):
            message = self._new_checkout(response.ephemeral_ticket)
        status = created.status if created is not None and created.status is not None else status
        title = f"{op.name} sent" + (f": order {created.orderid}" if created else "") + said(status)
        return self._show(Result(title, True, message, self._since(mark), status))

    def _after_send(
        self, op: Operation, fields: dict[str, str], response: object, target: Tracked | None
    ) -> tuple[Tracked | None, StatusResponse | None]:
        if isinstance(response, StatusResponse):
            known = self.find(response.orderid) or target
            if known is not None:
                known.status = response
            return None, response
        if isinstance(response, CardRefResponse) and target is not None:
            target.card_ref_id = response.card_ref_id
            return None, None
        if not isinstance(response, AsyncResponse) or not response.orderid:
            return None, None
        known = self.find(response.orderid)
        if known is not None and op.name not in LATER_TRANSACTIONS:  # an upload, or a card reference, on an order
            return None, self.settle(known)
        card = self._card if "credit_card_number" in fields else None
        if isinstance(response, HostedSaleResponse):  # the card the payer typed for the token it charged
            card = self.checkout.card if fields.get("hosted_fields_token") == self.checkout.token else None
            self.checkout.token = ""
        created = self.track(Order(op.name, response, mask_fields(fields), card), parent=target)
        return created, self.settle(created)

    def _renew_ids(self) -> None:
        if "orderid" not in self.operation.fields:
            fresh = forms.prefill(self.operation, self.outcome, self._card, self._context())
            self._refill(fresh, ("client_orderid", "client-order-id"))

    # --- orders -----------------------------------------------------------------------------------

    def track(self, order: Order, parent: Tracked | None = None, *, select: bool = True) -> Tracked:
        tracked = Tracked(order, parent)
        self.orders.append(tracked)
        if select:
            self.select_order(tracked.key)
        return tracked

    def find(self, orderid: str) -> Tracked | None:
        """The order ``orderid`` as it started (its initial transaction, not a capture or return of it)."""
        return next((t for t in self.orders if orderid and t.orderid == orderid and not t.is_later), None)

    def select_order(self, key: str) -> None:
        """The transaction (by ``Tracked.key``, or an order by its orderid) the next steps, the payer and the
        timeline work on; follow-up forms point at its order."""
        found = next((t for t in self.orders if key and t.key == key), None) or self.find(key)
        if found is None:
            raise KeyError(f"no order {key} in the explorer")
        self.selected = found
        if "orderid" in self.operation.fields:
            context = self._context()
            ids = {"client_orderid": context.client_orderid, "orderid": context.orderid}
            self._refill(ids, ids)

    def settle(self, tracked: Tracked) -> StatusResponse | None:
        """Poll until the order is final, waits for the payer, or is ``unknown`` (short deadline)."""
        if isinstance(tracked.order.ack, FormResponse) and tracked.state is None:
            tracked.status = self.session.client.status(**tracked.status_query)
            return tracked.status
        merchant = self.session.merchant
        if not tracked.is_later and any(t.is_later and t.orderid == tracked.orderid for t in self.orders):
            tracked.status = merchant.request_status(tracked.order)  # the order's status is its latest transaction's
            return tracked.status
        try:
            tracked.status = merchant.current_status(tracked.order)
        except WaitTimeout as exc:  # the latest answer of the polls (``PollAttempt.response``), if any
            answers = [attempt.response for attempt in exc.attempts if attempt.response is not None]
            tracked.status = answers[-1] if answers else tracked.status
        return tracked.status

    def refresh(self) -> Result:
        """The ``Status`` button: bring the selected order up to date (final, payer, or unknown)."""
        tracked = self.require_selected()
        mark = len(self.session.exchanges)
        try:
            status = self.settle(tracked)
        except GatewayError as exc:
            return self._show(Result(f"status of {tracked.orderid} failed", False, str(exc), self._since(mark)))
        self._collect_callbacks(tracked)
        return self._show(Result(f"status of {tracked.label}", True, "", self._since(mark), status))

    def require_selected(self) -> Tracked:
        if self.selected is None:
            raise LookupError("no order is selected: send an order first")
        return self.selected

    def timeline(self, tracked: Tracked | None = None) -> list[Event]:
        """The events of the selected order (with its follow-ups, callbacks and payer steps)."""
        tracked = tracked or self.selected
        if tracked is None:
            return []
        return self.session.timeline.for_order(tracked.orderid, tracked.client_orderid)

    # --- the payer and the next steps -------------------------------------------------------------

    def follow_as_payer(self) -> Result:
        """Do what the payer must: 3-D Secure on the order's road (``road``: the status html shown, or the method
        step, the challenge or 1.0.2 page and the uploads), or the hosted page."""
        tracked = self.require_selected()
        mark = len(self.session.exchanges)
        try:
            message = PayerFlow(self).run(tracked)
        except ApiError as exc:
            return self._show(Result(f"refused on {tracked.orderid}", False, exc.error_message, self._since(mark)))
        except (GatewayError, PayerError, FlowError, LookupError, CallbackTimeout) as exc:
            return self._show(Result(f"payer on {tracked.orderid}", False, str(exc), self._since(mark)))
        return self._show(Result(f"payer on {tracked.label}", True, message, self._since(mark), tracked.status))

    def _new_checkout(self, ticket: str) -> str:
        """A ticket for a new load of the checkout page: the form goes on to the Hosted Fields sale."""
        self.checkout = Checkout(ticket)
        self.select_operation("sale_v4")
        return (
            "an ephemeral ticket for one load of the merchant's checkout page: choose the outcome of the card the "
            "payer types, then tokenize as the payer; the token fills this sale_v4 form"
        )

    def tokenize(self) -> Result:
        """The payer types the form's card (its outcome, its number) into the Hosted Fields of the checkout page;
        the hosted fields token fills the ``sale_v4`` form."""
        card = self._card if forms.by_token(self.operation) else None
        if card is None:
            return self._confirm(Result("tokenize", False, "select sale_v4: its outcome chooses the card to type"))
        try:
            token = HostedFieldsFlow(self, self.checkout).tokenize(card)
        except LookupError as exc:
            return self._confirm(Result("tokenize", False, str(exc)))
        except TokenizeRefused as refused:
            return self._show(Result(f"tokenize refused: {refused.code}", False, str(refused)))
        except (GatewayError, PayerError) as exc:
            return self._show(Result("tokenize failed", False, str(exc)))
        self._refill({"hosted_fields_token": token.token}, ("hosted_fields_token",))
        return self._confirm(Result("tokenized", True, "the payer's card became a hosted fields token: send sale_v4"))

    def can_tokenize(self) -> bool:
        """The form is a Hosted Fields sale and a checkout page holds a ticket for the payer to type a card into."""
        return forms.by_token(self.operation) and bool(self.checkout.ticket)

    def payer_can_act(self) -> bool:
        """Whether the selected order waits for the payer (3-D Secure, a hosted page) or is not known yet."""
        selected = self.selected
        return selected is not None and selected.state in (None, Status.PROCESSING)

    def next_steps(self, tracked: Tracked | None = None) -> tuple[str, ...]:
        """The next steps that can apply to the order now (capture, return, void, card ref + rebill, payout-pay):
        by its kind and by what the explorer saw happen to it (``toolkit.explorer.applicable``)."""
        tracked = tracked or self.selected
        return applicable.next_steps(tracked, self.orders) if tracked else ()

    def why_not(self, step: str, tracked: Tracked | None = None) -> str:
        """Why ``step`` cannot apply to the selected order now ("" when it can)."""
        tracked = tracked or self.require_selected()
        return applicable.why_not(step, tracked, self.orders)

    def run_step(self, step: str, amount: str = "") -> Result:
        """Run a next step on the selected order; ``amount`` blank means the whole (or the default) amount.

        A step that cannot apply is not sent (send the operation from the form to see the gateway refuse it).
        """
        tracked = self.require_selected()
        if step not in STEPS:
            raise ValueError(f"no step {step!r}; the steps are: {', '.join(STEPS)}")
        reason = self.why_not(step, tracked)
        if reason:
            steps = ", ".join(self.next_steps(tracked)) or "none"
            return self._show(Result(step, False, f"{step} does not apply: {reason}; it takes: {steps}"))
        try:
            money = Decimal(amount.strip()) if amount.strip() else None
        except InvalidOperation:
            return self._show(Result(step, False, f"{amount!r} is not an amount (write 10.00)"))
        return self._show(self._steps.run(step, tracked, money))

    # --- export -----------------------------------------------------------------------------------

    def export(self, scenario: str | None = None) -> str:
        """The history as a Gherkin feature of the suite; ExportError says what cannot be expressed.

        With ``include_callbacks`` the signed callbacks seen for an order are checked too (those
        scenarios need a gateway that can call this machine back).
        """
        for tracked in self.orders:
            self._collect_callbacks(tracked)
        self.export_text = export_feature(self.history, scenario=scenario, callbacks=self.include_callbacks)
        name = next((line.strip() for line in self.export_text.splitlines() if "Scenario:" in line), "")
        self._confirm(Result("Exported (see the export tab)", True, name))
        return self.export_text

    def save_export(self, path: str | Path | None = None, scenario: str | None = None) -> Path:
        """Write the export to ``path`` (default: ``exported/explorer.feature`` of the merchant's suite, where
        ``gatekit certify`` finds it: ``toolkit.exporter.place``); the confirmation says how it runs."""
        target = Path(path) if path else default_export_path()
        text = self.export(scenario)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        steps = sum(1 for line in text.splitlines() if line.strip().startswith(_KEYWORDS))
        self._confirm(Result(f"Saved {target} ({steps} steps)", True, how_to_run(target)))
        return target

    def new_scenario(self) -> Result:
        """Start the history afresh (orders stay selectable; the next scenario starts from here)."""
        forgotten = len(self.history)
        self.history.clear()
        self.export_text = ""
        text = f"{forgotten} recorded action{'s' * (forgotten != 1)} forgotten; the orders stay selectable"
        return self._confirm(Result("New scenario", True, text))

    # --- helpers ----------------------------------------------------------------------------------

    def _collect_callbacks(self, tracked: Tracked) -> None:
        tracked.callbacks = tuple(self.session.receiver.callbacks(orderid=tracked.orderid))

    def _since(self, mark: int) -> tuple[Exchange, ...]:
        return self.session.exchanges_since(mark)

    def _show(self, result: Result) -> Result:
        """The result of an action on the gateway: the message, and the request / response tabs."""
        self.last = self.shown = result
        return result

    def _confirm(self, result: Result) -> Result:
        """A confirmation (saved, forgotten, new data): the message only; the tabs keep the last exchange."""
        self.last = result
        return result


def said(status: StatusResponse | None) -> str:
    """`` is approved``, `` is declined (Insufficient funds)``, `` waits for the payer``: the outcome in words."""
    if status is None:
        return ""
    if status.needs_payer:
        return " waits for the payer (3-D Secure)"
    why = f" ({status.error_message})" if status.error_message and status.status is not Status.APPROVED else ""
    return f" is {status.status.value}{why}"


__all__ = ["METHOD_RESULTS", "PASSWORDS", "ROADS", "ExplorerModel", "Result"]
