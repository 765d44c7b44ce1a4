"""Capture, void and return: the money rules of spec section 3, enforced in one DB transaction.

- capture: only of an approved preauth; partial captures up to what is still authorized.
- void: of an approved, not yet settled sale, preauth or capture; never a partial amount.
- return: only of a final approved transaction; partial returns never exceed what was charged;
  no amount means the whole remainder; on a preauth it releases the hold (a reversal).
What is still available is the original amount less every capture, return and reversal that has
not failed (declined, filtered, error), counted under ``BEGIN IMMEDIATE`` so concurrent requests
cannot overspend; a void that has not failed closes the order to every follow-up.
"""

from __future__ import annotations

from toolkit.money import from_minor_units, to_minor_units
from toolkit.operations import ResponseKind
from toolkit.simulator.engine import FAILED_SQL, Call, Engine, Result
from toolkit.simulator.errors import field_error, state_error
from toolkit.simulator.plans import CARD_COLUMNS
from toolkit.simulator.store import Row

RETURNABLE = ("sale", "capture", "preauth", "rebill", "recurring-charge", "transfer")
VOIDABLE = ("sale", "preauth", "capture")


def consumed(engine: Engine, parent: Row) -> int:
    """Minor units of the parent already captured, returned or released (declined ones do not count)."""
    row = engine.store.one(
        "SELECT COALESCE(SUM(amount_minor), 0) AS total FROM transactions "
        f"WHERE parent=? AND kind IN ('capture', 'return', 'reversal') AND status NOT IN {FAILED_SQL}",
        (parent["orderid"],),
    )
    return int(row["total"]) if row else 0


def voided(engine: Engine, parent: Row) -> bool:
    return (
        engine.store.one(
            f"SELECT 1 FROM transactions WHERE parent=? AND kind='void' AND status NOT IN {FAILED_SQL}",
            (parent["orderid"],),
        )
        is not None
    )


def _money(parent: Row, minor: int) -> str:
    return f"{from_minor_units(minor, parent['currency'])} {parent['currency']}"


def requested_minor(call: Call, parent: Row, available: int, verb: str) -> int:
    """The amount asked for (the whole remainder when none is sent), checked against what is left."""
    fields = call.fields
    if "amount" not in fields:
        if available <= 0:
            raise state_error(f"nothing left to {verb} on orderid {parent['orderid']}")
        return available
    if fields["currency"] != parent["currency"]:
        raise field_error(f"currency {fields['currency']} differs from the original {parent['currency']}")
    minor = to_minor_units(fields["amount"], fields["currency"])
    if minor > available:
        raise state_error(
            f"{verb} of {_money(parent, minor)} exceeds the {_money(parent, available)} still available "
            f"on orderid {parent['orderid']} (original {_money(parent, parent['amount_minor'])})"
        )
    return minor


def _parent(engine: Engine, call: Call, kinds: tuple[str, ...], verb: str) -> Row:
    parent = engine.find(call.merchant.login, call.fields["orderid"], call.client_orderid)
    if parent["kind"] not in kinds:
        raise state_error(
            f"cannot {verb} a {parent['kind']} (orderid {parent['orderid']}); {verb} applies to {', '.join(kinds)}"
        )
    if parent["status"] != "approved":
        raise state_error(
            f"cannot {verb} orderid {parent['orderid']}: its status is {parent['status']}, not a final approved one"
        )
    if voided(engine, parent):
        raise state_error(f"cannot {verb} orderid {parent['orderid']}: it was voided")
    return parent


def _child(engine: Engine, call: Call, parent: Row, kind: str, minor: int) -> Row:
    child = engine.new_tx(
        call,
        kind,
        parent=parent["orderid"],
        amount_minor=minor,
        currency=parent["currency"],
        **{k: parent[k] for k in (*CARD_COLUMNS, "email")},
    )
    return engine.schedule(child)


def capture(engine: Engine, call: Call) -> Result:
    with engine.store.transaction():
        parent = _parent(engine, call, ("preauth",), "capture")
        minor = requested_minor(call, parent, parent["amount_minor"] - consumed(engine, parent), "capture")
        child = _child(engine, call, parent, "capture", minor)
    return Result(ResponseKind.ASYNC, child)


def void(engine: Engine, call: Call) -> Result:
    if "amount" in call.fields:
        raise field_error("amount: void does not support a partial amount (spec section 3, rule 2)")
    with engine.store.transaction():
        parent = _parent(engine, call, VOIDABLE, "void")
        if parent["settled"]:
            raise state_error(f"cannot void orderid {parent['orderid']}: it is already settled; use return")
        if consumed(engine, parent):
            raise state_error(f"cannot void orderid {parent['orderid']}: it has captures or returns")
        child = _child(engine, call, parent, "void", parent["amount_minor"] or 0)
    return Result(ResponseKind.ASYNC, child)


def return_(engine: Engine, call: Call) -> Result:
    with engine.store.transaction():
        parent = _parent(engine, call, RETURNABLE, "return")
        minor = requested_minor(call, parent, parent["amount_minor"] - consumed(engine, parent), "return")
        kind = "reversal" if parent["kind"] == "preauth" else "return"
        child = _child(engine, call, parent, kind, minor)
    return Result(ResponseKind.ASYNC, child)


def install(engine: Engine) -> None:
    engine.register("capture", capture)
    engine.register("void", void)
    engine.register("return", return_)
