"""Card references, card info, rebills and recurring payments (spec 4.3).

A card reference is made only from a final approved card transaction; it keeps BIN, last four,
brand, expiry and holder (never the PAN or CVV).  Rebills and recurring charges have no CVV: the
amount chooses their outcome (``outcomes.outcome_for_amount``), unless the stored card has expired
on the simulator's clock (declined "Expired card", as a direct sale).  make-rebill-preauth leaves a
hold (a ``preauth``) that capture, void and return treat as a card preauth.  Recurring payments are charged
by the simulator's clock: advancing it past ``next_at`` makes the charge.
"""

from __future__ import annotations

import calendar
import datetime as dt
from typing import Any

from toolkit import lifecycle
from toolkit.money import MoneyError, from_minor_units, to_minor_units
from toolkit.operations import ResponseKind, get_operation
from toolkit.simulator.rules.engine import Call, Engine, Result
from toolkit.simulator.rules.errors import field_error, state_error
from toolkit.simulator.rules.plans import amount_plan, expiry_plan
from toolkit.simulator.storage import Row, card_rows, dumps, row_id

PERIOD_DAYS = {"day": 1, "week": 7}
LAST_MOMENT = dt.datetime(dt.MAXYEAR, 12, 31, 23, 59, 59, tzinfo=dt.UTC).timestamp()
_RECURRING_OP = get_operation("make_rebill")  # a recurring charge is a rebill made by the clock


def create_card_ref(engine: Engine, call: Call) -> Result:
    with engine.store.transaction():
        tx = engine.order(call)
        engine.remember_request(call.serial, tx)
        tokenizable = tx["kind"] in lifecycle.applies_to(lifecycle.CARD_REF)
        if not tokenizable or tx["status"] != "approved" or not tx["card_last4"]:
            raise state_error(
                f"a card reference needs a final approved card transaction; orderid {tx['orderid']} "
                f"is a {tx['kind']} with status {tx['status']}"
            )
        existing = card_rows.ref_of(engine.store, tx["id"])
        cardrefid = (
            existing
            if existing is not None
            else card_rows.add_ref(
                engine.store,
                {
                    "login": tx["login"],
                    "source_tx": tx["id"],
                    "bin": tx["card_bin"],
                    "last4": tx["card_last4"],
                    "card_type": tx["card_type"],
                    "exp_month": tx["card_exp_month"],
                    "exp_year": tx["card_exp_year"],
                    "holder": tx["cardholder"],
                    "created_at": engine.clock.now(),
                },
            )
        )
    return Result(ResponseKind.CARD_REF, tx, {"card-ref-id": str(cardrefid), "status": "approved"})


def card_ref(engine: Engine, login: str, cardrefid: str, field: str = "cardrefid") -> Row:
    """The merchant's stored card ``cardrefid`` (sent as ``field``).

    Another merchant's reference is refused as an unknown one, naming the field: a merchant learns
    nothing about the references of others."""
    key = row_id(cardrefid)
    row = card_rows.ref(engine.store, key, login) if key is not None else None
    if row is None:
        raise state_error(f"{field}: {cardrefid} is not a card reference of this merchant")
    return row


def ref_expiry_plan(
    engine: Engine, ref: Row, call: Call, what: str = "the stored card", *, at: float | None = None
) -> dict[str, str] | None:
    """The plan of a charge of an expired stored card (declined as a direct sale is), or None (behaviour 11).

    ``at``: when the charge is due (a recurring charge the clock passed), by default now."""
    return expiry_plan(
        engine.clock.now() if at is None else at,
        ref["exp_month"],
        ref["exp_year"],
        lenient=call.lenient,
        warnings=call.warnings,
        what=f"{what} {ref['cardrefid']}",
    )


def get_card_info(engine: Engine, call: Call) -> Result:
    """``get-card-info-response`` with the gateway's fields (behaviour section 10), and the brand (spec 4.3)."""
    ref = card_ref(engine, call.merchant.login, call.fields["cardrefid"])
    return Result(
        ResponseKind.CARD_INFO,
        None,
        {
            "card-ref-id": str(ref["cardrefid"]),
            "card-printed-name": ref["holder"],
            "bin": ref["bin"],
            "last-four-digits": ref["last4"],
            "expire-month": ref["exp_month"],
            "expire-year": ref["exp_year"],
            "card-type": ref["card_type"],
        },
    )


def ref_columns(ref: Row) -> dict[str, Any]:
    return {
        "card_bin": ref["bin"],
        "card_last4": ref["last4"],
        "card_type": ref["card_type"],
        "card_exp_month": ref["exp_month"],
        "card_exp_year": ref["exp_year"],
        "cardholder": ref["holder"],
        "cardrefid": str(ref["cardrefid"]),
    }


def make_rebill(engine: Engine, call: Call) -> Result:
    """A charge of a stored card (a ``rebill``; a hold, a ``preauth``, with make-rebill-preauth: the kind the
    catalogue says the operation makes, behaviour section 11); with ``enumerate_amounts``, the amount
    first, then each of them in turn until one is approved (behaviour section 10): the order keeps the amount
    that went through.  An expired stored card is declined (behaviour section 11), whatever the amount.
    """
    fields = call.fields
    currency = fields["currency"]
    tried = _rebill_amounts(fields)
    with engine.store.transaction():
        ref = card_ref(engine, call.merchant.login, fields["cardrefid"])
        expired = ref_expiry_plan(engine, ref, call)
        plans = [(amount, expired or amount_plan(amount, currency)) for amount in tried[: 1 if expired else None]]
        amount, plan = next(((a, p) for a, p in plans if p["plan_status"] != "declined"), plans[-1])
        extra: dict[str, Any] = {"tried_amounts": [a for a, _ in plans[: plans.index((amount, plan)) + 1]]}
        extra.update({name: fields[name] for name in ("recurrent_scenario", "comment") if name in fields})
        tx = engine.new_tx(
            call,
            call.operation.makes,
            amount_minor=to_minor_units(amount, currency),
            currency=currency,
            extra=dumps(extra),
            **ref_columns(ref),
            **plan,
        )
        tx = engine.schedule(tx)
    return Result(ResponseKind.ASYNC, tx)


def _rebill_amounts(fields: dict[str, str]) -> list[str]:
    """``amount``, then every amount of ``enumerate_amounts``; each of them at most ``amount``."""
    amount = fields["amount"]
    extra = [item.strip() for item in fields.get("enumerate_amounts", "").split(",") if item.strip()]
    ceiling = to_minor_units(amount, fields["currency"])
    for item in extra:
        try:
            minor = to_minor_units(item, fields["currency"])
        except MoneyError as exc:  # (0, -1, 1e3, more decimals than the currency has)
            raise field_error(f"enumerate_amounts: {exc.rule}") from None
        if minor > ceiling:
            raise field_error(f"enumerate_amounts: {item} is more than the amount {amount}")
    return [amount, *(item for item in extra if item != amount)]


def _first_charge(call: Call, now: float) -> float:
    start = call.fields.get("start_date")
    if not start:
        return now
    try:
        day = dt.date.fromisoformat(start)
    except ValueError as exc:  # the format check lets 2025-02-31 through
        raise field_error(f"start_date: {start} is not a calendar date ({exc})") from None
    return max(now, dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp())


def next_charge(previous: float, period: str, interval: int) -> float | None:
    """The next charge time: days and weeks exactly; months and years on the calendar.

    None when it falls beyond the calendar (year 9999): there is no next charge.
    """
    if period in PERIOD_DAYS:
        following = previous + PERIOD_DAYS[period] * interval * 86400
        return following if following <= LAST_MOMENT else None
    moment = dt.datetime.fromtimestamp(previous, dt.UTC)
    months = interval * (12 if period == "year" else 1)
    year, month = divmod(moment.month - 1 + months, 12)
    year, month = moment.year + year, month + 1
    if year > dt.MAXYEAR:
        return None
    day = min(moment.day, calendar.monthrange(year, month)[1])
    return moment.replace(year=year, month=month, day=day).timestamp()


def create_recurring_payment(engine: Engine, call: Call) -> Result:
    fields = call.fields
    interval = int(fields["interval"])
    if interval < 1:
        raise field_error("interval: must be at least 1")
    first = _first_charge(call, engine.clock.now())
    if next_charge(first, fields["period"], interval) is None:
        raise field_error(f"interval: {interval} {fields['period']}s after the first charge is beyond the year 9999")
    with engine.store.transaction():
        card_ref(engine, call.merchant.login, fields["cardrefid"])
        rp_id = card_rows.add_subscription(
            engine.store,
            {
                "login": call.merchant.login,
                "endpoint_id": call.endpoint_id,
                "cardrefid": fields["cardrefid"],
                "client_orderid": call.client_orderid,
                "amount_minor": to_minor_units(fields["amount"], fields["currency"]),
                "currency": fields["currency"],
                "period": fields["period"],
                "interval": interval,
                "repeats": int(fields.get("repeats", "0") or 0),
                "next_at": first,
                "callback_url": fields.get("server_callback_url", ""),
                "state": "active",
                "created_at": engine.clock.now(),
            },
        )
    engine.wake()
    return Result(
        ResponseKind.RECURRING, None, {"recurring-payment-id": str(rp_id), "merchant-order-id": call.client_orderid}
    )


def charge_due(engine: Engine, now: float) -> None:
    """Charge every active subscription whose next charge is due (each one once per period)."""
    for rp in card_rows.due_subscriptions(engine.store, now):
        ref = card_ref(engine, rp["login"], rp["cardrefid"])
        charged = rp["charged"] + 1
        call = Call(
            _RECURRING_OP,
            engine.merchant(rp["login"]),
            rp["endpoint_id"],
            None,
            {"client_orderid": f"{rp['client_orderid']}-{charged}", "server_callback_url": rp["callback_url"]},
            serial="",
        )
        amount = str(from_minor_units(rp["amount_minor"], rp["currency"]))
        call.lenient = engine.settings.is_lenient(call.merchant)
        plan = ref_expiry_plan(engine, ref, call, at=rp["next_at"]) or amount_plan(amount, rp["currency"])
        tx = engine.new_tx(
            call,
            "recurring-charge",
            amount_minor=rp["amount_minor"],
            currency=rp["currency"],
            **ref_columns(ref),
            **plan,
            extra=dumps({"recurring_payment_id": str(rp["id"])}),
        )
        engine.decide(tx)
        following = next_charge(rp["next_at"], rp["period"], rp["interval"])
        done = following is None or (rp["repeats"] and charged >= rp["repeats"])
        card_rows.update_subscription(
            engine.store,
            rp["id"],
            {"charged": charged, "state": "completed" if done else "active", "next_at": None if done else following},
        )


def recurring_due(engine: Engine) -> float | None:
    return card_rows.next_subscription_due(engine.store)


def install(engine: Engine) -> None:
    engine.register("create_card_ref", create_card_ref)
    engine.register("create_card_ref_v4", create_card_ref)
    engine.register("get_card_info", get_card_info)
    for name in ("make_rebill", "make_rebill_sale", "make_rebill_preauth"):
        engine.register(name, make_rebill)
    engine.register("create_recurring_payment", create_recurring_payment)
    engine.tick_hooks.append(lambda now: charge_due(engine, now))
    engine.due_providers.append(lambda: recurring_due(engine))
