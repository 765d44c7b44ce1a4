"""Card payments: sale, preauth, account verification, their hosted forms, and status (spec 4.1).

CVV2 chooses the outcome (behaviour section 6, ``toolkit.testdata.outcomes``); 3-D Secure cards
go through ``threeds`` before the decision.  Hosted forms start ``processing`` and wait for
the payer to submit the page (``submit_form``).  The transfer-form page (behaviour section 12) takes the
source card as the sale's page does, and the number of the card that receives the money: the transaction
(``transfer``) keeps the source card's columns and the masked destination in ``extra``, as a v4 transfer does.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from toolkit.models import Status
from toolkit.operations import ResponseKind, get_operation
from toolkit.simulator.rules import payouts, threeds
from toolkit.simulator.rules.engine import Call, Engine, Result, new_token
from toolkit.simulator.rules.errors import SimError, state_error
from toolkit.simulator.rules.plans import card_values, expiry_plan, plan_of
from toolkit.simulator.shaping import chance
from toolkit.simulator.storage import Row, dumps, order_rows
from toolkit.simulator.storage.serving import Later
from toolkit.testdata.outcomes import GENERIC_DECLINE, CardOutcome, is_three_ds_v1_card
from toolkit.validation import Problem, request_problems

# What the payer enters on a hosted page; checked with the sale operation's rules.
# A card payment the decline_rate setting declines (an approving CVV2 drawn into the decline mix)
MIXED_DECLINE = CardOutcome("declined (decline_rate)", "", Status.DECLINED, "none", GENERIC_DECLINE.error_code,
                            GENERIC_DECLINE.error_message, "declined: the decline_rate setting")  # fmt: skip
CARD_FORM_FIELDS = ("credit_card_number", "card_printed_name", "expire_month", "expire_year", "cvv2")
PAYOUT_FORM_FIELDS = ("credit_card_number", "card_printed_name", "expire_month", "expire_year")
TRANSFER_FORM_FIELDS = (*CARD_FORM_FIELDS, "destination-card-no")  # the source card, then the destination's number
# The page's fields and the operation whose rules check their formats, by form (any other: the sale's page).
PAGES = {"payout_form": (PAYOUT_FORM_FIELDS, "payout_check"), "transfer_form": (TRANSFER_FORM_FIELDS, "transfer")}
CARD_NUMBERS = ("credit_card_number", "destination-card-no")  # typed with spaces or dashes, read without


class FormProblems(Exception):
    """The payer's entries on a hosted page break rules; ``problems`` name each field."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(str(p) for p in problems))
        self.problems = problems


def card_plan(
    engine: Engine,
    fields: Mapping[str, str],
    amount: Decimal | None,
    *,
    managed: bool,
    lenient: bool = False,
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """Card columns, planned outcome and 3-D Secure steps of a card transaction: its CVV2 chooses (``outcome_plan``)."""
    outcome = engine.settings.outcome_for_cvv(fields["cvv2"])
    v1 = is_three_ds_v1_card(fields["credit_card_number"])
    return outcome_plan(engine, outcome, card_values(fields), amount, managed=managed, v1=v1, lenient=lenient,
                        warnings=warnings)  # fmt: skip


def outcome_plan(
    engine: Engine,
    outcome: CardOutcome,
    card: Mapping[str, str],
    amount: Decimal | None,
    *,
    managed: bool,
    v1: bool,
    lenient: bool = False,
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """The plan of a card transaction whose card (``plans.card_values``) and CVV2 outcome are known: by a request's
    card, or by a Hosted Fields token that kept them (``v1``: a 3-D Secure 1.0.2 test card).

    A card whose expiry month has passed (on the simulator's clock) is declined as expired, with no
    3-D Secure step, whatever its CVV2; a lenient simulator lets it through with a warning.
    """
    if outcome.status is Status.APPROVED and chance(engine.settings.decline_rate):  # the decline_rate setting
        outcome = MIXED_DECLINE
    expired = expiry_plan(
        engine.clock.now(),
        card["card_exp_month"],
        card["card_exp_year"],
        lenient=lenient,
        warnings=warnings if warnings is not None else [],
    )
    if expired is not None:
        return {**card, **expired}
    three_ds = threeds.plan_three_ds(engine, "", amount, outcome, managed=managed, v1=v1)
    return {**card, **plan_of(outcome), **three_ds}


def _amount(call: Call) -> Decimal | None:
    known = call.operation.knows("amount")  # account verification is a zero-amount operation
    return Decimal(call.fields["amount"]) if known and "amount" in call.fields else None


def card_payment(engine: Engine, call: Call) -> Result | Later[Result]:
    """sale, preauth and account-verification.  The outcome is planned before the write transaction (it reads
    nothing stored): processes that share the store hold its write lock only for the writes."""
    values = card_plan(engine, call.fields, _amount(call), managed=False, lenient=call.lenient, warnings=call.warnings)
    draft = engine.draft_scheduled_tx(call, call.operation.makes, **values)

    def write() -> Result:
        with engine.store.transaction():
            tx = engine.insert_draft(call, draft)
        return Result(ResponseKind.ASYNC, tx)

    # (on the loop: with its batch of writes, whose new orders' inserts may be made together: ``ahead_of``)
    return engine.write_soon(lambda: engine.answering(call, write), lambda: engine.ahead_of(call, draft))


def start_form(engine: Engine, call: Call) -> Result:
    """Hosted forms: a page waits for the payer (``redirect-url``); nothing is decided yet."""
    with engine.store.transaction():
        tx = engine.new_tx(
            call,
            call.operation.makes,
            form_token=new_token(),
            tds_state="form",
            deadline_at=engine.clock.now() + engine.settings.form_timeout,
            extra=dumps({"form": call.operation.name}),
        )
    return Result(ResponseKind.FORM, tx)


FORM_EXPIRED = ("05", "the payer did not submit the payment page in time: it expired")


def expire_forms(engine: Engine, now: float) -> None:
    """Hosted pages not submitted by their deadline (``form_timeout``): the order declines, its callback goes out."""
    for tx in order_rows.past_deadline(engine.store, ("form",), now):
        engine.finalize(engine.set_extra(tx, form_expired=True), Status.DECLINED.value, *FORM_EXPIRED)


def form_by_token(engine: Engine, token: str) -> Row | None:
    return order_rows.by_form_token(engine.store, token)


def form_fields(form: str) -> tuple[str, ...]:
    """The fields the payer fills in on this hosted page (a payout page collects no CVV2; a transfer page the
    destination card's number too)."""
    return PAGES.get(form, (CARD_FORM_FIELDS, "sale"))[0]


def form_problems(form: str, entries: Mapping[str, str]) -> list[Problem]:
    """Every field of the page is required; formats follow the sale (or payout, or transfer) rules.

    Messages speak to the payer (``is required``) and never repeat the value entered.
    """
    names, checked_as = PAGES.get(form, (CARD_FORM_FIELDS, "sale"))
    filled = {name: entries[name] for name in names if entries.get(name, "").strip()}
    missing = [Problem(name, "is required") for name in names if name not in filled]
    wrong = [p for p in request_problems(get_operation(checked_as), filled) if p.field in filled]
    return sorted([*missing, *wrong], key=lambda p: names.index(p.field))


def _entries(form: str, entries: Mapping[str, str]) -> dict[str, str]:
    """What the payer typed into the page's fields, trimmed; card numbers without their spaces or dashes."""
    typed = {name: str(entries.get(name, "")).strip() for name in form_fields(form)}
    for name in CARD_NUMBERS:
        if name in typed:
            typed[name] = typed[name].replace(" ", "").replace("-", "")
    return typed


def submit_form(engine: Engine, token: str, entries: Mapping[str, str]) -> Row:
    """The payer submitted a hosted page: check the entries, then run the payment gateway-side."""
    with engine.store.transaction():
        tx = form_by_token(engine, token)
        if tx is None or tx["tds_state"] != "form":
            raise state_error("this payment page has already been used or does not exist")
        form = engine.extra(tx)["form"]
        entries = _entries(form, entries)
        problems = form_problems(form, entries)
        if problems:
            raise FormProblems(problems)
        if form == "payout_form":
            tx = engine.update(tx, **card_values(entries), tds_state="", deadline_at=None)
            return engine.schedule(payouts.plan_payout(engine, tx))
        if form == "transfer_form":  # the destination, masked, as a v4 transfer keeps it
            destination = card_values({"credit_card_number": entries.pop("destination-card-no")})
            tx = engine.set_extra(tx, destination={"bin": destination["card_bin"], "last4": destination["card_last4"]})
        tx = engine.update(tx, deadline_at=None)  # the page's own deadline is over: 3-D Secure may set another
        amount = Decimal(engine.amount_text(tx)) if tx["amount_minor"] else None
        warnings: list[str] = []
        lenient = engine.settings.is_lenient(engine.merchant(tx["login"]))
        plan = card_plan(engine, entries, amount, managed=True, lenient=lenient, warnings=warnings)
        tx = engine.set_extra(engine.update(tx, **{"tds_state": "", **plan}), managed=True, warnings=warnings)
        return tx if tx["tds_state"] else engine.schedule(tx)


def status(engine: Engine, call: Call) -> Result:
    """The order's latest transaction, or the one a request made (``by-request-sn``, behaviour section 10).

    What is due is done first, so polling sees it at once without waiting for the scheduler: when
    this transaction is due, or when none is found yet (a recurring charge due this very moment).
    A status of a transaction with nothing due takes no write lock.
    """
    try:
        tx = _status_tx(engine, call)
    except SimError:
        engine.run_due()
        tx = _status_tx(engine, call)
    if engine.is_due(tx):
        engine.run_due()
        tx = engine.tx(tx["id"])
    return Result(ResponseKind.STATUS, tx)


def _status_tx(engine: Engine, call: Call) -> Row:
    serial = call.fields.get("by-request-sn")
    if not serial:
        return engine.latest_of(call)
    order = engine.order(call)
    tx = engine.by_request(call.merchant.login, serial)
    if tx is None or tx["orderid"] != order["orderid"]:
        raise state_error(f"by-request-sn: no request {serial} on orderid {order['orderid']}")
    return tx


def install(engine: Engine) -> None:
    for name in ("sale", "preauth", "account_verification"):
        engine.register(name, card_payment)
    for name in ("sale_form", "preauth_form", "payment_form", "account_verification_form", "payout_form"):
        engine.register(name, start_form)
    engine.register("transfer_form", start_form)
    engine.register("status", status)
    engine.tick_hooks.append(lambda now: expire_forms(engine, now))
