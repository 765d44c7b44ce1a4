"""The engine: transactions, their life (spec section 3) and the decisions of the sandbox table.

Handlers take a ``Call`` (operation, merchant, addressed endpoint, canonical fields) and return
a ``Result`` for the renderer.  Every state change runs inside ``Store.transaction()``.
Asynchronous like the gateway: a transaction starts ``processing`` and is decided at
``decide_at`` (now + latency) unless the payer must act first (3-D Secure, hosted form).
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

from toolkit import lifecycle
from toolkit.models import FINAL_STATUSES, Status
from toolkit.money import from_minor_units, to_minor_units
from toolkit.operations import Operation, ResponseKind
from toolkit.signing import callback_control
from toolkit.simulator.clock import SimClock
from toolkit.simulator.rules.errors import SimError, state_error
from toolkit.simulator.settings import Merchant, SimulatorSettings
from toolkit.simulator.storage import Row, Store, account_rows, dumps, loads, order_rows, row_id, serving, stored_text
from toolkit.simulator.storage.base import Insert
from toolkit.simulator.storage.serving import Later

# What tells one card from another in a repeated request (``_check_repeat``): a card is never stored whole.
CARD_IDENTITY = ("card_bin", "card_last4", "card_exp_month", "card_exp_year", "cardrefid")
# Final statuses of a transaction that did not go through: it holds, moves or uses up no money.
FAILED = (Status.DECLINED.value, Status.ERROR.value, Status.FILTERED.value)


@dataclass
class Call:
    """One accepted request, ready for the engine."""

    operation: Operation
    merchant: Merchant
    endpoint_id: str
    group_id: str | None
    fields: dict[str, str]
    serial: str
    warnings: list[str] = field(default_factory=list)
    lenient: bool = False  # forgive what the production gateway refuses, with a warning

    @cached_property
    def client_orderid(self) -> str:
        """The client_orderid sent, as the store keeps it (a card number typed into it masked: ``stored_text``)."""
        return stored_text(
            "client_orderid", self.fields.get("client_orderid") or self.fields.get("client-order-id", "")
        )

    def forgive(self, problem: str) -> None:
        """A problem the production gateway refuses: a SimError, or a warning on a lenient simulator."""
        if not self.lenient:
            raise SimError(problem, code="1")
        self.warnings.append(f"{problem} (lenient: accepted)")


@dataclass
class Result:
    """What a handler produced: the response kind, the transaction (if any) and extra fields."""

    kind: ResponseKind
    tx: Row | None = None
    fields: dict[str, str] = field(default_factory=dict)


Handler = Callable[["Engine", Call], "Result | Later[Result]"]
T = TypeVar("T")


class RepeatedOrder(Exception):
    """A request that repeats a live order (same merchant, client_orderid, kind and amount): answered with it."""

    def __init__(self, order: Row) -> None:
        super().__init__(f"repeats orderid {order['orderid']}")
        self.order = order


FinalHook = Callable[[Row], None]


@dataclass(frozen=True)
class Draft:
    """A new order's initial transaction as ``Engine.draft_scheduled_tx`` made it, before the write transaction."""

    kind: str
    row: dict[str, Any]
    decided: bool  # inserted with its decision (no latency, no payer step): the final hooks follow the insert


class Engine:
    """State machine over the store; the scheduler calls ``tick`` when something is due."""

    def __init__(
        self,
        settings: SimulatorSettings,
        store: Store,
        clock: SimClock,
        *,
        wake: Callable[[], None] = lambda: None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.clock = clock
        self.wake = wake
        # this process among those that share the store (``host:pid:token``), and whether it holds the
        # scheduler's lease (``Scheduler``): only that process runs the tick hooks (callbacks, recurring charges)
        self.process = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self.scheduling: Callable[[], bool] = lambda: True
        self.final_hooks: list[FinalHook] = []
        # checks of a forced status change, in its DB transaction: each raises a SimError to refuse it
        self.money_checks: list[FinalHook] = []
        self.tick_hooks: list[Callable[[float], None]] = []
        self.due_providers: list[Callable[[], float | None]] = [self._engine_due]
        self.handlers: dict[str, Handler] = {}
        self.seed_merchants()

    # --- registry ----------------------------------------------------------------------------------

    def register(self, operation: str, handler: Handler) -> None:
        self.handlers[operation] = handler

    def handle(self, call: Call) -> Result | Later[Result]:
        handler = self.handlers.get(call.operation.name)
        if handler is None:
            raise SimError(f"{call.operation.name} is not implemented by the simulator", http_status=500, kind="error")
        return self.answering(call, lambda: handler(self, call))

    def write_soon(
        self, write: Callable[[], Result], ahead: Callable[[], Insert | None] | None = None
    ) -> Result | Later[Result]:
        """``write()`` now, or left for the loop's batch of writes (``storage.serving``: the store's choice);
        ``ahead()``: the ``insert_unless`` it will make first (``ahead_of``), which the batch may do with others'
        (asked only when the write joins a batch)."""
        return serving.write_soon(self.store, write, ahead)

    def answering(self, call: Call, work: Callable[[], T]) -> T | Result:
        """``work``'s result, or the order a repeated request names (``RepeatedOrder``)."""
        try:
            return work()
        except RepeatedOrder as repeat:  # the handler's DB transaction rolled back: nothing was made or charged
            order = repeat.order
            call.warnings.append(
                f"client_orderid {call.client_orderid} repeats orderid {order['orderid']} ({order['kind']}, "
                f"{order['status']}): answered with that order, nothing charged again"
            )
            self.remember_request(call.serial, order)
            return Result(call.operation.response, order)

    def seed_merchants(self) -> None:
        with self.store.transaction():
            for merchant in self.settings.merchants:
                account_rows.open_account(self.store, merchant.login, merchant.payout_balance_minor, merchant.currency)

    def merchant(self, login: str) -> Merchant:
        merchant = self.settings.merchant_by_login(login)
        if merchant is None:
            raise SimError(f"unknown merchant {login}", code="5")
        return merchant

    # --- orders and their transactions ---------------------------------------------------------------
    #
    # An order (``orderid``, the gateway's paynet-order-id) is made by its initial transaction (sale,
    # preauth, rebill, payout...); its later transactions (capture, reversal, void, chargeback...)
    # carry the same orderid.  A transaction's own key is ``id``; the order's is the id of its first.

    def tx(self, tx_id: int) -> Row:
        """A transaction by its own key (``id``)."""
        row = order_rows.transaction(self.store, tx_id)
        if row is None:
            raise state_error(f"transaction {tx_id} is unknown")
        return row

    def order_tx(self, login: str, orderid: str) -> Row | None:
        """The initial transaction of the merchant's order ``orderid`` (None when there is none)."""
        key = row_id(orderid)
        if key is None:
            return None
        return order_rows.merchant_order(self.store, key, login)

    def find(self, login: str, orderid: str | None, client_orderid: str) -> Row:
        """The merchant's order (its initial transaction) by orderid, or by client_orderid alone (the latest:
        a retry after a decline reuses the client_orderid)."""
        if orderid:
            row = self.order_tx(login, orderid)
            if row is None:
                raise state_error(f"orderid {orderid} is unknown for this merchant")
            return row
        row = order_rows.order_named(self.store, login, client_orderid)
        if row is None:
            raise state_error(f"no order with client_orderid {client_orderid}")
        return row

    def order_money(self, login: str, orderid: str) -> tuple[str, str] | None:
        """The amount (major units) and currency of the merchant's order, when it has them."""
        order = self.order_tx(login, orderid)
        if order is None or not order["currency"]:
            return None
        return self.amount_text(order), order["currency"]

    def order(self, call: Call) -> Row:
        """The order a follow-up names (``orderid`` and the original's ``client_orderid``, behaviour section 10).

        What is due on the simulator's clock is done first when the order has a decision or a deadline due
        (the scheduler may not have run yet): a follow-up sees the order as the clock says it is.  A follow-up
        addressed by endpoint group acts on the order's own endpoint (``end-point-id`` of the answer).
        """
        order = self.current(self.find(call.merchant.login, call.fields.get("orderid"), call.client_orderid))
        self._same_client_orderid(call, order)
        if call.group_id and order["endpoint_id"] in call.merchant.endpoint_ids:
            call.endpoint_id = order["endpoint_id"]
        return order

    def latest_of(self, call: Call) -> Row:
        """``latest(order(call))`` in one statement, for a status answer: the ``STATUS_COLUMNS`` of the latest
        transaction of the order a request names (``tx(row["id"])`` reads the whole row).

        Every transaction of an order carries the order's client_orderid (``add_tx``), so the check of
        ``order`` holds on it as well."""
        login, orderid = call.merchant.login, call.fields.get("orderid")
        if orderid:
            key = row_id(orderid)
            tx = None if key is None else order_rows.latest_by_orderid(self.store, key, login)
            if tx is None:
                raise state_error(f"orderid {orderid} is unknown for this merchant")
        else:
            tx = order_rows.latest_by_client_orderid(self.store, login, call.client_orderid)
            if tx is None:
                raise state_error(f"no order with client_orderid {call.client_orderid}")
        self._same_client_orderid(call, tx)
        return tx

    def _same_client_orderid(self, call: Call, order: Row) -> None:
        if call.client_orderid != order["client_orderid"]:
            call.forgive(
                f"client_orderid: {call.client_orderid} is not the client_orderid of orderid {order['orderid']}; "
                "a follow-up carries the original order's client_orderid"
            )

    def latest(self, order: Row) -> Row:
        """The order's latest transaction (what ``status`` reports without ``by-request-sn``)."""
        last = order_rows.latest_id(self.store, order["orderid"])
        if last is None or last == order["id"]:  # the order has no later transaction
            return order
        return self.tx(last)

    def transactions_of(self, order: Row) -> list[Row]:
        return order_rows.of_order(self.store, order["orderid"])

    def by_request(self, login: str, serial: str) -> Row | None:
        """The transaction a request (its serial-number) made (its ``serial``) or acted on (``requests``)."""
        return order_rows.by_request(self.store, login, serial)

    def remember_request(self, serial: str, tx: Row) -> None:
        """``status`` with ``by-request-sn`` finds ``tx`` by this request's serial-number."""
        if serial:
            order_rows.remember_request(self.store, serial, tx["id"])

    def new_tx(self, call: Call, kind: str, **values: Any) -> Row:
        """Insert the ``processing`` initial transaction of a new order (inside the caller's DB transaction)."""
        return self._insert_tx(call, kind, None, values)

    def new_scheduled_tx(self, call: Call, kind: str, **values: Any) -> Row:
        """``new_tx``, then ``schedule`` unless the payer has a step to take first (``tds_state``).

        Decided now (latency 0, no payer step): the transaction is inserted with its decision (one write, the
        same row as ``new_tx`` + ``decide`` leave), then the final hooks run, as ``finalize`` runs them.
        """
        return self.insert_draft(call, self.draft_scheduled_tx(call, kind, **values))

    def add_tx(self, order: Row, call: Call, kind: str, **values: Any) -> Row:
        """Insert a ``processing`` later transaction of ``order`` (same orderid, client_orderid, notify_url)."""
        return self._insert_tx(call, kind, order, values)

    def draft_scheduled_tx(self, call: Call, kind: str, **values: Any) -> Draft:
        """What ``new_scheduled_tx`` inserts, made before the write transaction (it reads nothing stored): the
        write lock, which processes sharing the store take in turns, is then held for the id and the insert only."""
        decided = not (self.settings.latency > 0 or values.get("tds_state"))
        return Draft(kind, self._draft_row(call, kind, None, values, decided=decided), decided)

    def ahead_of(self, call: Call, draft: Draft) -> Insert | None:
        """The write ``insert_draft`` makes first, known before the write transaction: a new order's insert with
        its repeat check (``order_rows.order_insert``), which a batch of sales may do together."""
        return self._order_insert(call, draft.row) if lifecycle.KINDS[draft.kind].initial else None

    def _order_insert(self, call: Call, row: dict[str, Any]) -> Insert:
        """A new order's initial transaction ``row``, inserted unless the merchant's orders hold its client_orderid."""
        return order_rows.order_insert(row, call.merchant.login, call.client_orderid, lifecycle.INITIAL)

    def insert_draft(self, call: Call, draft: Draft) -> Row:
        """``new_scheduled_tx`` of a draft (inside the caller's DB transaction)."""
        tx = self._insert_drafted(call, draft.kind, None, dict(draft.row))
        if not draft.decided:
            return tx if tx["tds_state"] else self.schedule(tx)
        for hook in self.final_hooks:
            hook(tx)
        return tx

    def _insert_tx(
        self, call: Call, kind: str, order: Row | None, values: dict[str, Any], *, decided: bool = False
    ) -> Row:
        return self._insert_drafted(call, kind, order, self._draft_row(call, kind, order, values, decided=decided))

    def _draft_row(
        self, call: Call, kind: str, order: Row | None, values: dict[str, Any], *, decided: bool = False
    ) -> dict[str, Any]:
        """The row of a new transaction but its id (and, for a new order, its orderid)."""
        now = self.clock.now()
        fields = call.fields
        row: dict[str, Any] = {
            "login": call.merchant.login,
            "endpoint_id": call.endpoint_id,
            "group_id": call.group_id,
            "serial": call.serial,
            "client_orderid": call.client_orderid,
            "kind": kind,
            "status": Status.PROCESSING.value,
            "stage": lifecycle.stage(kind, Status.PROCESSING.value),
            "plan_status": Status.APPROVED.value,
            "email": fields.get("email", ""),
            "redirect_url": fields.get("redirect_url", ""),
            "callback_url": fields.get("server_callback_url", ""),
            "notify_url": fields.get("notify_url", ""),
            "descriptor": f"GATEKIT*{call.merchant.login.upper()}"[:22],
            "created_at": now,
            "updated_at": now,
        }
        if call.operation.knows("amount") and "amount" in fields and "currency" in fields:
            row["amount_minor"] = to_minor_units(fields["amount"], fields["currency"])
            row["currency"] = fields["currency"]
        if order is not None:
            row.update(
                orderid=order["orderid"],
                client_orderid=order["client_orderid"],
                notify_url=order["notify_url"],
                callback_url="",  # server_callback_url is called for the initial transaction only
                redirect_url="",
                descriptor=order["descriptor"],
            )
        row.update(values)
        if decided:  # what ``decide`` would write next
            plan = (row["plan_status"], row.get("plan_code", ""), row.get("plan_message", ""))
            row.update(self._final_values(row, *plan))
        return row

    def _insert_drafted(self, call: Call, kind: str, order: Row | None, row: dict[str, Any]) -> Row:
        """Give a drafted row its id (a new order: its orderid too, after the repeat check) and insert it."""
        self._wake_for(row)
        if order is None:  # a new order: its orderid is its initial transaction's id, the id AUTOINCREMENT gives next
            if lifecycle.KINDS[kind].initial:  # a repeated client_orderid is checked against the merchant's orders
                repeated, tx = self.store.insert_unless(self._order_insert(call, row))
                if tx is not None:
                    return tx
                self._check_repeat(call, kind, row, self.tx(repeated))  # (a retry of a failed order: a new one)
            row["id"] = row["orderid"] = self.store.next_id("transactions")
        # (``by_request`` finds the transaction by its own serial: no ``requests`` row for the request that made it)
        return self.store.insert_row("transactions", row)

    def _check_repeat(self, call: Call, kind: str, row: dict[str, Any], existing: Row) -> None:
        """The idempotency rule for a new order whose client_orderid the merchant already used.

        - The earlier order failed (declined, filtered, error): a new order is made (a retry), with a warning.
        - It lives and the request is the same (operation kind, card, amount, currency): ``RepeatedOrder``
          answers with it; nothing is charged twice.  The card is told by BIN, last four, expiry and card
          reference (a CVV2 is never kept: the same card with another CVV2 is the same request).
        - It lives and the request differs: refused (a lenient simulator makes a new order, with a warning).
        Checked inside the caller's ``BEGIN IMMEDIATE`` transaction, so concurrent repeats cannot both create.
        """
        if existing["status"] in FAILED:
            call.warnings.append(
                f"client_orderid {call.client_orderid} was used by {existing['kind']} orderid {existing['orderid']}, "
                f"which ended {existing['status']}: a new order is made"
            )
            return
        money = (row.get("amount_minor"), row.get("currency"))
        same_card = all(existing[name] == row[name] for name in CARD_IDENTITY if row.get(name) or existing[name])
        if existing["kind"] == kind and (existing["amount_minor"], existing["currency"]) == money and same_card:
            raise RepeatedOrder(existing)
        card = f" with card {existing['card_bin']}******{existing['card_last4']}" if existing["card_bin"] else ""
        other = "another card: " if existing["kind"] == kind and not same_card else ""
        call.forgive(
            f"client_orderid: {other}{call.client_orderid} already names orderid {existing['orderid']} "
            f"({existing['kind']} {self.amount_text(existing)} {existing['currency'] or ''}".rstrip()
            + f"{card}, "
            + f"{existing['status']}); a repeated request carries the same operation, card, amount and currency, "
            "a new order a new client_orderid"
        )

    def update(self, tx: Row, **values: Any) -> Row:
        values["updated_at"] = self.clock.now()
        row = self.store.update_row("transactions", "id", tx["id"], values)
        if row is None:
            raise state_error(f"transaction {tx['id']} is unknown")
        self._wake_for(values)
        return row

    def _wake_for(self, values: dict[str, Any]) -> None:
        """A decision or a deadline set: the scheduler wakes to do it on time, whether or not anyone polls.

        (It runs once the caller's DB transaction commits: the store's lock holds it until then.)"""
        if values.get("decide_at") is not None or values.get("deadline_at") is not None:
            self.wake()

    def extra(self, tx: Row) -> dict[str, Any]:
        return dict(loads(tx["extra"]))

    def set_extra(self, tx: Row, **values: Any) -> Row:
        return self.update(tx, extra=dumps({**self.extra(tx), **values}))

    # --- decisions ---------------------------------------------------------------------------------

    def schedule(self, tx: Row) -> Row:
        """Decide now (latency 0) or at now + latency (the scheduler wakes for it)."""
        if self.settings.latency <= 0:
            return self.decide(tx)
        tx = self.update(tx, decide_at=self.clock.now() + self.settings.latency)
        self.wake()
        return tx

    def decide(self, tx: Row) -> Row:
        """Carry out the planned outcome of a transaction whose payer steps are done."""
        return self.finalize(tx, tx["plan_status"], tx["plan_code"], tx["plan_message"])

    def finalize(
        self, tx: Row, status: str, code: str = "", message: str = "", *, checks: Sequence[FinalHook] = ()
    ) -> Row:
        """Set the status (final, or ``unknown``); ``checks`` may refuse the change (a ``SimError``: the caller's
        DB transaction rolls back), then the final hooks (callbacks) run in the same DB transaction."""
        if tx["status"] not in (Status.PROCESSING.value, Status.UNKNOWN.value) and status == tx["status"]:
            return tx
        tx = self.update(tx, **self._final_values(tx, status, code, message))
        for check in checks:
            check(tx)
        for hook in self.final_hooks:
            hook(tx)
        return tx

    def _final_values(self, tx: Row, status: str, code: str, message: str) -> dict[str, Any]:
        """The columns ``finalize`` writes: status, stage, error, no more deadlines, the settlement date."""
        now = self.clock.now()
        settles = status == "approved" and lifecycle.KINDS[tx["kind"]].settles
        settle_at = now + self.settings.settlement_after if settles else None
        return {
            "status": status,
            "stage": lifecycle.stage(tx["kind"], status),
            "error_code": code if status != "approved" else "",
            "error_message": message if status != "approved" else "",
            "decide_at": None,
            "deadline_at": None,
            "tds_state": "done" if tx.get("tds_state") else "",
            "settle_at": settle_at,
            "updated_at": now,
        }

    def force_latest(self, orderid: int, status: str, code: str = "", message: str = "") -> Row:
        """``force_status`` of the order's latest transaction, found under the store's write lock (a transaction
        another request adds meanwhile is the one forced, or the force is refused: never the one before it)."""
        with self.store.transaction():
            return self.force_status(self.latest(self.tx(orderid))["id"], status, code, message)

    def force_status(self, tx_id: int, status: str, code: str = "", message: str = "") -> Row:
        """Decide a transaction now (the control API's force): one ``processing`` or ``unknown``, or change the
        final status of the order's latest transaction (a test's "that void did not go through").

        A final transaction that the order went on from (any later capture, return, void or chargeback, whatever
        its status: a declined one may be forced approved later) keeps its status: the money of what followed
        was counted on it.  Every change is checked against the order's money (``money_checks``, in the same DB
        transaction): a change that would take back more than was charged, or capture more than was authorized,
        is refused and nothing changes (issue 34, #1)."""
        with self.store.transaction():
            tx = self.tx(tx_id)
            if tx["status"] in FINAL_STATUSES and status != tx["status"]:
                later = order_rows.after(self.store, tx["orderid"], tx["id"])
                if later is not None:
                    raise state_error(
                        f"the {tx['kind']} of orderid {tx['orderid']} is {tx['status']} and the order went on from "
                        f"it (a {later['kind']}, {later['status']}): its status cannot become {status} now"
                    )
            return self.finalize(tx, status, code, message, checks=self.money_checks)

    # --- the clock ---------------------------------------------------------------------------------

    def tick(self) -> float | None:
        """Do everything that is due on the simulator's clock; returns when something is next due."""
        self.run_due()
        return self.next_due()

    def is_due(self, tx: Row) -> bool:
        """A processing transaction whose decision or 3-D Secure deadline has come."""
        due = [t for t in (tx["decide_at"], tx["deadline_at"]) if t is not None]
        return tx["status"] == Status.PROCESSING.value and bool(due) and min(due) <= self.clock.now()

    def current(self, tx: Row) -> Row:
        """``tx`` as the simulator's clock has it: when its decision or deadline is due and the scheduler has not
        done it yet, what is due is done first (the row is read again)."""
        if not self.is_due(tx):
            return tx
        self.run_due(hooks=self.scheduling())
        return self.tx(tx["id"])

    def run_due(self, *, hooks: bool = True) -> None:
        """Decisions, deadlines, tick hooks (recurring charges, callbacks; ``hooks``) and settlements that are
        due."""
        now = self.clock.now()
        with self.store.transaction():
            for tx in order_rows.due_decisions(self.store, now):
                self.decide(tx)
            for hook in self.tick_hooks if hooks else ():
                hook(now)
            order_rows.settle_due(self.store, now)

    def _engine_due(self) -> float | None:
        return order_rows.next_due(self.store)

    def next_due(self) -> float | None:
        times = [t for t in (provider() for provider in self.due_providers) if t is not None]
        return min(times) if times else None

    def settle(self, orderid: int | None = None) -> int:
        """Settle the approved sales and captures of one order, or every one that is due; returns how many.

        A voided transaction never settles.
        """
        with self.store.transaction():
            return order_rows.settle(self.store, orderid)

    # --- what goes back to the merchant ------------------------------------------------------------

    def amount_text(self, tx: Row) -> str:
        if tx["amount_minor"] is None or not tx["currency"]:
            return ""
        return str(from_minor_units(tx["amount_minor"], tx["currency"]))

    def outcome_params(self, tx: Row) -> dict[str, str]:
        """Callback and payer-redirect parameters (behaviour sections 4 and 5), signed."""
        merchant = self.merchant(tx["login"])
        orderid, client_orderid = str(tx["orderid"]), tx["client_orderid"]  # the order's, for every transaction
        return {
            "status": tx["status"],
            "orderid": orderid,
            "merchant_order": client_orderid,
            "client_orderid": client_orderid,
            "type": tx["kind"],
            "amount": self.amount_text(tx),
            "currency": tx["currency"] or "",
            "descriptor": tx["descriptor"],
            "error_code": tx["error_code"],
            "error_message": tx["error_message"],
            "bin": tx["card_bin"],
            "last-four-digits": tx["card_last4"],
            "card-type": tx["card_type"],
            "control": callback_control(tx["status"], orderid, client_orderid, merchant.control_key.reveal()),
        }


def new_token() -> str:
    return secrets.token_urlsafe(18)
