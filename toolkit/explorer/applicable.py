"""Which next steps can apply to an order, from what the explorer saw of it (spec section 3, behaviour 10).

An order keeps its ``orderid`` through its captures, returns and voids, so every step acts on the
order, whichever of its transactions is selected.  The rules the gateway applies, counted from the
transactions the explorer followed (one that failed does not count; one still processing does):

- which step applies to which order is the catalogue's: the kind of transaction the order's operation makes
  (``Operation.makes``: a ``make_rebill_preauth`` makes a ``preauth``) and the kinds the step's operation
  applies to (``Operation.applies_to``), both read from ``toolkit.lifecycle``;
- every step needs the order's own transaction approved, not voided, not cancelled;
- capture: a hold (a preauth) with some of its amount not yet captured;
- return: a hold with nothing captured (a ``cancel`` of the hold), or what was charged (the order's
  amount, the captures of a hold) less what was returned: a return after a full capture is a
  ``reversal`` of what was captured;
- void: nothing returned; it voids the latest capture, else the order;
- card ref + rebill: the card of an approved card transaction;
- payout-pay: a payout check not yet paid.

``why_not`` says, for every step, why it cannot apply ("" when it can); the gateway stays the judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from toolkit.explorer.flowsteps import CAPTURE, OPERATION_OF, PAYOUT_PAY, RETURN, STEPS, VOID
from toolkit.explorer.history import Tracked
from toolkit.models import Status
from toolkit.operations import OPERATIONS, makers

FAILED = frozenset({Status.DECLINED, Status.FILTERED, Status.ERROR})


def orders_of(step: str) -> tuple[str, ...]:
    """The operations whose orders ``step`` applies to, in the catalogue's order (capture: preauth,
    preauth_form, make_rebill_preauth)."""
    return makers(OPERATIONS[OPERATION_OF[step]].applies_to)


def _holds(tracked: Tracked) -> bool:
    """The order is a hold (a preauth): what it charged is what its captures took."""
    op = OPERATIONS.get(tracked.operation)
    return op is not None and op.kind is not None and op.kind.holds


def _either(names: tuple[str, ...]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else "".join(names)


def root_of(tracked: Tracked, orders: Sequence[Tracked]) -> Tracked:
    """The order's own transaction (a sale, a preauth...) of a transaction the explorer follows."""
    if not tracked.is_later:
        return tracked
    return next((t for t in orders if t.orderid == tracked.orderid and not t.is_later), tracked.parent or tracked)


def later_of(root: Tracked, orders: Sequence[Tracked], operation: str) -> list[Tracked]:
    """The order's later transactions of one operation that count (not failed)."""
    return [t for t in orders if t.orderid == root.orderid and t.operation == operation and t.state not in FAILED]


def amount_of(tracked: Tracked) -> Decimal:
    """What a transaction moved: the status's amount when known (a return of "the rest"), else what was sent."""
    if tracked.status is not None and tracked.status.amount is not None:
        return tracked.status.amount
    return tracked.amount or Decimal(0)


def _total(transactions: Sequence[Tracked]) -> Decimal:
    return sum((amount_of(t) for t in transactions), Decimal(0))


def _is_cancel(tracked: Tracked) -> bool:
    return tracked.status is not None and tracked.status.transaction_type == "cancel"


def _order_state(root: Tracked, orders: Sequence[Tracked]) -> str:
    """Why no step applies to the order at all ("" when some may)."""
    if root.state is not Status.APPROVED:
        state = root.state.value if root.state else "not known yet"
        return f"the {root.operation} {root.orderid} is {state}, not approved"
    voids = [v for v in later_of(root, orders, "void") if v.state is Status.APPROVED]
    if len(voids) > len(later_of(root, orders, "capture")):  # each void takes the latest capture, then the order
        return f"order {root.orderid} was voided"
    if any(_is_cancel(t) for t in later_of(root, orders, "return")):
        return f"the preauth {root.orderid} was cancelled"
    return ""


def _captured(root: Tracked, orders: Sequence[Tracked]) -> list[Tracked]:
    """Captures that count: not failed, and not voided (a void voids the latest capture)."""
    captures = later_of(root, orders, "capture")
    voids = [v for v in later_of(root, orders, "void") if v.state is Status.APPROVED]
    return captures[: max(len(captures) - len(voids), 0)]


def _why_not(step: str, root: Tracked, orders: Sequence[Tracked]) -> str:
    money = f" {root.currency}".rstrip()
    returned = _total([t for t in later_of(root, orders, "return") if not _is_cancel(t)])
    captured = _total(_captured(root, orders))
    hold = _holds(root)
    if step == CAPTURE and captured >= (root.amount or Decimal(0)):
        return f"all of {root.amount}{money} is captured"
    if step == RETURN and (not hold or captured):
        charged = captured if hold else amount_of(root)
        if returned >= charged:
            return f"nothing left to return: {charged}{money} charged, {returned}{money} returned"
    if step == VOID and returned:
        return f"{returned}{money} was returned: a void no longer applies (use return)"
    if step == PAYOUT_PAY and later_of(root, orders, "payout_pay"):
        return f"the payout check {root.orderid} was paid already"
    return ""


def why_not(step: str, tracked: Tracked, orders: Sequence[Tracked]) -> str:
    """Why ``step`` cannot apply to the order of ``tracked`` ("" when it can)."""
    root = root_of(tracked, orders)
    if root.operation not in orders_of(step):
        return f"{step} applies to {_either(orders_of(step))}, not to a {root.operation}"
    return _order_state(root, orders) or _why_not(step, root, orders)


def next_steps(tracked: Tracked, orders: Sequence[Tracked]) -> tuple[str, ...]:
    """The steps that can apply to the order of ``tracked`` now, in the panel's order."""
    return tuple(step for step in STEPS if not why_not(step, tracked, orders))
