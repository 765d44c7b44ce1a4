"""Capture, void, return and chargeback: the money rules of spec section 3 on one order, in one DB transaction.

An order is named by its ``orderid``; its later transactions keep that orderid (behaviour section 10).

- capture: of an approved preauth; partial captures up to what is still authorized.  A capture that
  was voided gives its amount back to the preauth.
- void: of the order's latest approved, unsettled capture (its amount goes back to the preauth) when what
  stays charged still covers what was returned and charged back, else of the approved, unsettled sale or
  preauth itself when nothing was captured, returned or charged back; never a partial amount.  A voided
  transaction never settles.
- return: of a final approved order: a ``reversal`` of a sale (or of what was captured on a
  preauth), partial up to what was charged less reversals and chargebacks; on a preauth with
  nothing captured, a ``cancel`` of the whole hold.
- chargeback (the control API): the issuer takes back a part of what was charged; it counts
  against what may still be returned.
Amounts are counted under ``BEGIN IMMEDIATE`` so concurrent requests cannot overspend, and each side of
the ledger counts what is still processing the cautious way (``held``, ``captured``, ``taken_back``): for
every order, at every moment and whatever the outcomes, charged >= returned + charged back.
"""

from __future__ import annotations

from typing import Any

from toolkit import lifecycle
from toolkit.lifecycle import Money
from toolkit.money import from_minor_units, to_minor_units
from toolkit.operations import ResponseKind, get_operation
from toolkit.simulator.rules.engine import Call, Engine, Result
from toolkit.simulator.rules.errors import field_error, state_error
from toolkit.simulator.rules.plans import CARD_COLUMNS
from toolkit.simulator.storage import Row, dumps, order_rows
from toolkit.simulator.storage.order_rows import APPROVED, LIVE


def _sum(
    engine: Engine, order: Row, kinds: tuple[str, ...], *, counted: str = LIVE, unvoided: str | None = None
) -> int:
    return order_rows.later_total(engine.store, order["orderid"], kinds, counted=counted, unvoided=unvoided)


# Both sides of the ledger are counted the cautious way while something is still processing, so that no
# outcome of it can break ``charged >= taken back`` (spec section 3; issue 19):
# - what a preauth has given up to captures counts a capture still processing, and gets a capture's amount
#   back only once its void is approved;
# - what was charged counts approved captures only, and drops a capture as soon as a void of it is asked for;
# - what was taken back counts reversals and chargebacks still processing.


def held(engine: Engine, order: Row) -> int:
    """Minor units of a preauth already given to captures: approved or processing, unless a void was approved."""
    return _sum(engine, order, lifecycle.kinds_with(Money.CAPTURE), unvoided=APPROVED)


def captured(engine: Engine, order: Row) -> int:
    """Minor units captured on a preauth for sure: approved captures with no void approved or processing."""
    return _sum(engine, order, lifecycle.kinds_with(Money.CAPTURE), counted=APPROVED, unvoided=LIVE)


def taken_back(engine: Engine, order: Row) -> int:
    """Minor units reversed or charged back (approved or processing)."""
    return _sum(engine, order, lifecycle.kinds_with(Money.TAKE_BACK))


def charged(engine: Engine, order: Row) -> int:
    """What the payer was charged for sure: the sale's amount, or what was captured on a preauth."""
    return captured(engine, order) if lifecycle.KINDS[order["kind"]].holds else int(order["amount_minor"] or 0)


def _latest(engine: Engine, order: Row, kinds: tuple[str, ...], **where: Any) -> Row | None:
    """The order's latest later transaction of ``kinds`` that did not fail (``order_rows.latest_later``)."""
    return order_rows.latest_later(engine.store, order["orderid"], kinds, **where)


def voided(engine: Engine, tx: Row) -> bool:
    """A void of ``tx`` that did not fail (approved or processing)."""
    return order_rows.live_child(engine.store, tx["id"], "void") is not None


def _money(order: Row, minor: int) -> str:
    return f"{from_minor_units(minor, order['currency'])} {order['currency']}"


def requested_minor(call: Call, order: Row, available: int, verb: str) -> int:
    """The amount asked for (the whole remainder when none is sent), checked against what is left."""
    fields = call.fields
    if "amount" not in fields:
        if available <= 0:
            raise state_error(f"nothing left to {verb} on orderid {order['orderid']}")
        return available
    if fields["currency"] != order["currency"]:
        raise field_error(f"currency: {fields['currency']} differs from the order's {order['currency']}")
    minor = to_minor_units(fields["amount"], fields["currency"])
    if minor > available:
        raise state_error(
            f"{verb} of {_money(order, minor)} exceeds the {_money(order, available)} still available "
            f"on orderid {order['orderid']} (original {_money(order, order['amount_minor'])})"
        )
    return minor


def _order(engine: Engine, call: Call, verb: str) -> Row:
    """The named order, which must be a final approved one of the kinds the follow-up ``verb`` applies to
    (``toolkit.lifecycle``) and not voided."""
    order = engine.order(call)
    kinds = lifecycle.applies_to(verb)
    if order["kind"] not in kinds:
        raise state_error(
            f"cannot {verb} a {order['kind']} (orderid {order['orderid']}); {verb} applies to {', '.join(kinds)}"
        )
    if order["status"] != "approved":
        raise state_error(
            f"cannot {verb} orderid {order['orderid']}: its {order['kind']} is {order['status']}, "
            "not a final approved one"
        )
    if voided(engine, order):
        raise state_error(f"cannot {verb} orderid {order['orderid']}: it was voided")
    if _latest(engine, order, ("cancel",)):
        raise state_error(f"cannot {verb} orderid {order['orderid']}: its preauth was cancelled")
    return order


def _child(engine: Engine, call: Call, order: Row, kind: str, minor: int, parent: Row | None = None) -> Row:
    extra = {"comment": call.fields["comment"]} if call.fields.get("comment") else {}
    child = engine.add_tx(
        order,
        call,
        kind,
        parent=(parent or order)["id"],
        amount_minor=minor,
        currency=order["currency"],
        extra=dumps(extra),
        **{k: order[k] for k in (*CARD_COLUMNS, "email")},
    )
    return engine.schedule(child)


def capture(engine: Engine, call: Call) -> Result:
    with engine.store.transaction():
        order = _order(engine, call, lifecycle.CAPTURE)
        minor = requested_minor(call, order, order["amount_minor"] - held(engine, order), "capture")
        child = _child(engine, call, order, "capture", minor)
    return Result(ResponseKind.ASYNC, child)


def void(engine: Engine, call: Call) -> Result:
    if "amount" in call.fields:  # not a field of void: refused all the same, a partial void is an integration bug
        raise field_error("amount: void does not support a partial amount (spec section 3, rule 2)")
    with engine.store.transaction():
        order = _order(engine, call, lifecycle.VOID)
        target = _void_target(engine, order)
        child = _child(engine, call, order, "void", target["amount_minor"] or 0, parent=target)
    return Result(ResponseKind.ASYNC, child)


def _void_target(engine: Engine, order: Row) -> Row:
    """The order's latest approved, unsettled, unvoided capture; else the order itself, if nothing followed it."""
    capture_ = _latest(engine, order, ("capture",), status="approved", settled=False, unvoided=LIVE)
    if capture_ is not None:
        back, left = taken_back(engine, order), charged(engine, order) - int(capture_["amount_minor"] or 0)
        if back > left:
            raise state_error(
                f"cannot void the {_money(order, capture_['amount_minor'])} capture of orderid {order['orderid']}: "
                f"{_money(order, back)} of the order was returned or charged back, and only "
                f"{_money(order, max(left, 0))} would stay charged; use return"
            )
        return capture_
    if _latest(engine, order, ("capture",), status="processing"):
        raise state_error(f"cannot void orderid {order['orderid']}: a capture of it is still processing")
    if order["settled"] or _latest(engine, order, ("capture",), settled=True):
        raise state_error(f"cannot void orderid {order['orderid']}: it is already settled; use return")
    if _latest(engine, order, lifecycle.kinds_with(Money.TAKE_BACK)):
        raise state_error(f"cannot void orderid {order['orderid']}: it has reversals or chargebacks; use return")
    return order


def return_(engine: Engine, call: Call) -> Result:
    with engine.store.transaction():
        order = _order(engine, call, lifecycle.RETURN)
        if lifecycle.KINDS[order["kind"]].holds and not held(engine, order):
            return Result(ResponseKind.ASYNC, _cancel(engine, call, order))
        available = charged(engine, order) - taken_back(engine, order)
        if available <= 0 and _latest(engine, order, ("capture",), status="processing"):
            raise state_error(
                f"nothing to return on orderid {order['orderid']} yet: its capture is still processing "
                "(a return waits for the capture's final status)"
            )
        minor = requested_minor(call, order, available, "return")
        child = _child(engine, call, order, "reversal", minor)
    return Result(ResponseKind.ASYNC, child)


def _cancel(engine: Engine, call: Call, order: Row) -> Row:
    """A return on a preauth with nothing captured cancels the whole hold ("amount only makes sense for reversals")."""
    if (
        "amount" in call.fields
        and to_minor_units(call.fields["amount"], call.fields["currency"]) != order["amount_minor"]
    ):
        whole = _money(order, order["amount_minor"])
        raise field_error(
            f"amount: a preauth with nothing captured is cancelled as a whole ({whole}); leave amount and currency out"
        )
    return _child(engine, call, order, "cancel", order["amount_minor"])


def chargeback(engine: Engine, orderid: int, amount: str | None) -> Row:
    """The issuer takes back ``amount`` (default: all that is left) of a charged order; approved at once."""
    with engine.store.transaction():
        order = engine.tx(orderid)
        chargeable = order["kind"] in lifecycle.applies_to(lifecycle.CHARGEBACK)
        if not chargeable or order["status"] != "approved" or voided(engine, order):
            raise state_error(
                f"orderid {order['orderid']} ({order['kind']}, {order['status']}) has no charge to take back"
            )
        available = charged(engine, order) - taken_back(engine, order)
        minor = available if amount is None else to_minor_units(amount, order["currency"])
        if minor <= 0 or minor > available:
            raise state_error(
                f"a chargeback of {_money(order, minor)} does not fit the {_money(order, available)} "
                f"still charged on orderid {order['orderid']}"
            )
        call = Call(get_operation("return"), engine.merchant(order["login"]), order["endpoint_id"], None, {}, "")
        child = engine.add_tx(
            order,
            call,
            "chargeback",
            parent=order["id"],
            amount_minor=minor,
            currency=order["currency"],
            **{k: order[k] for k in (*CARD_COLUMNS, "email")},
        )
        return engine.finalize(child, "approved")


def money_problem(engine: Engine, order: Row) -> str | None:
    """What breaks the order's money rules as its rows stand, counted the cautious way, or None: a preauth's
    captures within what it still authorizes (nothing once it is declined, voided or cancelled), and what was
    charged for sure covering what was returned and charged back."""
    kind = lifecycle.KINDS[order["kind"]]
    if not kind.charges:
        return None
    standing = order["status"] == "approved" and not voided(engine, order)
    back = taken_back(engine, order)
    if kind.holds:
        authorized = order["amount_minor"] if standing and not _latest(engine, order, ("cancel",)) else 0
        if (held_ := held(engine, order)) > authorized:
            return f"{_money(order, held_)} captured on {_money(order, authorized)} authorized"
        charged_ = captured(engine, order)
    else:
        charged_ = order["amount_minor"] if standing else 0
    if back > charged_:
        return f"{_money(order, back)} returned or charged back on {_money(order, charged_)} charged"
    return None


def _money_holds(engine: Engine, tx: Row) -> None:
    """A forced status change (``Engine.force_status``) that breaks the order's money is refused."""
    order = engine.tx(tx["orderid"])
    if problem := money_problem(engine, order):
        raise state_error(
            f"the {tx['kind']} of orderid {tx['orderid']} cannot become {tx['status']}: the order would have {problem}"
        )


def _void_done(engine: Engine, tx: Row) -> None:
    """Final hook: an approved void stops its target from settling."""
    if tx["kind"] == "void" and tx["status"] == "approved" and tx["parent"]:
        order_rows.stop_settling(engine.store, tx["parent"])


def install(engine: Engine) -> None:
    engine.register("capture", capture)
    engine.register("void", void)
    engine.register("return", return_)
    engine.final_hooks.insert(0, lambda tx: _void_done(engine, tx))
    engine.money_checks.append(lambda tx: _money_holds(engine, tx))
