"""Payouts (spec 4.4; the v4 one-step payout of behaviour section 11).

The merchant's payout balance lives in the ``merchants`` table.  An approved payout reserves its
amount in the same DB transaction that decides it, so concurrent payouts never overdraw; a
payout above the balance is declined ("insufficient funds").  A deposit (a transfer from the merchant to a card,
``transfers``) spends the balance the same way (``spend_balance``; behaviour section 12).  v4 is two-step: payout-check
registers without moving funds; payout-pay executes a registered, approved check exactly once.
Outcomes by amount: minor units ending in 13 decline, 17 end ``unknown`` (behaviour section 6); a
destination card whose expiry has passed declines "Expired card".  A destination given as ``cardrefid`` must
be one of the merchant's stored cards.
"""

from __future__ import annotations

from toolkit import lifecycle
from toolkit.money import from_minor_units
from toolkit.operations import ResponseKind
from toolkit.simulator.rules.cards import card_ref, ref_columns
from toolkit.simulator.rules.engine import FAILED, Call, Engine, Result
from toolkit.simulator.rules.errors import field_error, state_error
from toolkit.simulator.rules.plans import CARD_COLUMNS, amount_plan, card_values, has_expired, plan_of
from toolkit.simulator.storage import Row, account_rows, order_rows
from toolkit.testdata.outcomes import AMOUNT_RULES, card_outcome

DESTINATIONS = ("destination-card-no", "credit_card_number")
INSUFFICIENT_FUNDS = AMOUNT_RULES["13"]  # also a payout above the balance (behaviour section 6)


def balance(engine: Engine, login: str) -> int:
    return account_rows.balance(engine.store, login)


def check_currency(call: Call) -> None:
    """A payout (or a deposit) is paid from the balance, in its currency: another one is refused."""
    if call.fields["currency"] != call.merchant.currency:
        raise field_error(
            f"currency {call.fields['currency']} differs from the payout balance currency {call.merchant.currency}"
        )


def _destination(engine: Engine, call: Call) -> dict[str, str]:
    """Masked destination card columns (the PAN itself is never stored), of a card number or a stored card
    (``cardrefid``: one of the merchant's; an expired one plans the decline)."""
    fields = call.fields
    number = next((fields[name] for name in DESTINATIONS if fields.get(name)), "")
    if number:
        return card_values({**fields, "credit_card_number": number})
    if fields.get("cardrefid"):
        ref = card_ref(engine, call.merchant.login, fields["cardrefid"])
        return {**ref_columns(ref), "cardrefid": str(ref["cardrefid"])}
    return {}


def plan_payout(engine: Engine, tx: Row, *, reserve: bool = True) -> Row:
    """Amount rule, then the balance: declined when the payout exceeds it; with ``reserve``, held unless declined.

    A payout whose amount plans ``unknown`` is held too (it may still go out), so it must fit.
    """
    currency = tx["currency"]
    amount = str(from_minor_units(tx["amount_minor"], currency))
    plan = amount_plan(amount, currency)
    if has_expired(engine.clock.now(), tx["card_exp_month"], tx["card_exp_year"]):  # a card whose expiry passed
        plan = plan_of(card_outcome("expired-card"))
    return spend_balance(engine, tx, plan, reserve=reserve)


def spend_balance(engine: Engine, tx: Row, plan: dict[str, str], *, reserve: bool = True, what: str = "payout") -> Row:
    """``tx`` planned with ``plan``, unless it declines anyway: declined "Insufficient funds" when its amount exceeds
    the merchant's payout balance, else (with ``reserve``) its amount held from the balance until it is final.

    Payouts and deposits (``what``: the word of the decline message) spend the balance alike (behaviour section 12).
    Call inside the store's transaction that writes ``tx``: concurrent spenders never overdraw.
    """
    currency = tx["currency"]
    available = balance(engine, tx["login"])
    if plan["plan_status"] != "declined" and tx["amount_minor"] > available:
        amount, money = from_minor_units(tx["amount_minor"], currency), from_minor_units(available, currency)
        plan = plan_of(INSUFFICIENT_FUNDS)
        plan["plan_message"] += f": {what} {amount} {currency} exceeds the balance {money} {currency}"
    tx = engine.update(tx, **plan)
    if reserve and plan["plan_status"] != "declined":
        tx = _hold(engine, tx, True)
    return tx


def _hold(engine: Engine, tx: Row, held: bool) -> Row:
    """Take the payout's amount from the balance (``held``) or give it back; recorded as ``extra.reserved``."""
    change = -tx["amount_minor"] if held else tx["amount_minor"]
    account_rows.change_balance(engine.store, tx["login"], change)
    return engine.set_extra(tx, reserved=held)


def keep_balance(engine: Engine, tx: Row) -> None:
    """Final hook: a held payout that ends declined, filtered or error gives its amount back, once.

    A status forced later (control API) moves the money again: back to approved holds it anew.
    A payout that was never held (declined when planned, or a payout-check) moves nothing.
    """
    if '"reserved"' not in (tx["extra"] or ""):  # (the JSON text: most transactions never held anything)
        return
    extra, going_out = engine.extra(tx), tx["status"] not in FAILED
    if "reserved" in extra and extra["reserved"] != going_out:
        _hold(engine, tx, going_out)


def _payout(engine: Engine, call: Call, *, reserve: bool) -> Result:
    """A payout or a payout check: the kind the catalogue says the operation makes (``Operation.makes``)."""
    check_currency(call)
    with engine.store.transaction():
        tx = engine.new_tx(call, call.operation.makes, **_destination(engine, call))
        tx = engine.schedule(plan_payout(engine, tx, reserve=reserve))
    return Result(ResponseKind.ASYNC, tx)


def payout(engine: Engine, call: Call) -> Result:
    return _payout(engine, call, reserve=True)


def payout_check(engine: Engine, call: Call) -> Result:
    """Registers the payout and checks recipient and balance; no funds move."""
    return _payout(engine, call, reserve=False)


def payout_pay(engine: Engine, call: Call) -> Result:
    with engine.store.transaction():
        check = engine.order(call)
        if check["kind"] not in lifecycle.applies_to(lifecycle.PAYOUT_PAY):
            raise state_error(
                f"payout-pay needs the orderid of a payout-check; orderid {check['orderid']} is a {check['kind']}"
            )
        if check["status"] != "approved":
            raise state_error(f"payout-check orderid {check['orderid']} is {check['status']}, not approved")
        paid = order_rows.live_child(engine.store, check["id"], "payout-pay")
        if paid:
            raise state_error(f"this payout-check was already paid (by request {paid['serial']})")
        columns = {k: check[k] for k in ("amount_minor", "currency", *CARD_COLUMNS)}
        tx = engine.add_tx(check, call, "payout-pay", parent=check["id"], **columns)
        tx = engine.schedule(plan_payout(engine, tx))
    return Result(ResponseKind.ASYNC, tx)


def install(engine: Engine) -> None:
    engine.register("payout", payout)
    engine.register("payout_check", payout_check)
    engine.register("payout_pay", payout_pay)
    engine.register("payout_v4", payout)
    engine.final_hooks.append(lambda tx: keep_balance(engine, tx))
