"""Which next step the explorer offers on an order: what the catalogue says each step applies to (read from
``toolkit.lifecycle``), and what the explorer saw happen to the order (no gateway here: the orders are made up)."""

from __future__ import annotations

import pytest

from toolkit.explorer.applicable import next_steps, orders_of, why_not
from toolkit.explorer.flowsteps import CAPTURE, OPERATION_OF, PAYOUT_PAY, REBILL, RETURN, STEPS, VOID
from toolkit.explorer.history import Tracked
from toolkit.flows import Order
from toolkit.models import AsyncResponse, StatusResponse
from toolkit.operations import OPERATIONS

ORDERID = "8056020"


def tracked(operation: str, amount: str = "10.00", status: str = "approved", parent: Tracked | None = None) -> Tracked:
    """A transaction the explorer followed: ``operation`` sent for ``amount`` EUR, now ``status``."""
    ack = AsyncResponse.from_mapping({"type": "async-response", "paynet-order-id": ORDERID, "serial-number": operation})
    answer = {"type": "status-response", "status": status, "paynet-order-id": ORDERID, "amount": amount}
    fields = {"amount": amount, "currency": "EUR"} if amount else {}
    return Tracked(Order(operation, ack, fields), parent, StatusResponse.from_mapping(answer))


# What an approved order of each operation is offered: the kind it makes, and what applies to that kind.
OFFERED = {
    "sale": (RETURN, VOID, REBILL),
    "sale_form": (RETURN, VOID, REBILL),
    "payment_form": (RETURN, VOID, REBILL),
    "preauth": (CAPTURE, RETURN, VOID, REBILL),
    "preauth_form": (CAPTURE, RETURN, VOID, REBILL),
    "make_rebill_preauth": (CAPTURE, RETURN, VOID, REBILL),  # a hold (behaviour section 11)
    "make_rebill": (RETURN,),
    "make_rebill_sale": (RETURN,),
    "transfer": (RETURN,),
    "transfer_by_ref": (RETURN,),
    "transfer_form": (RETURN,),  # a transfer, paid on the hosted page (behaviour section 12)
    "account_verification": (REBILL,),  # its card may be stored, then charged
    "payout": (),
    "payout_v4": (),
    "payout_check": (PAYOUT_PAY,),
    "pan_eligibility_send": (),
}


@pytest.mark.parametrize("operation", OFFERED, ids=OFFERED)
def test_an_approved_order_is_offered_what_applies_to_its_kind(operation: str):
    order = tracked(operation)
    assert next_steps(order, [order]) == OFFERED[operation]


def test_the_steps_apply_to_the_operations_the_catalogue_names():
    assert orders_of(CAPTURE) == ("preauth", "preauth_form", "make_rebill_preauth")
    for step in STEPS:
        kinds = OPERATIONS[OPERATION_OF[step]].applies_to
        assert all(OPERATIONS[name].makes in kinds for name in orders_of(step)), step


def test_a_step_that_does_not_apply_names_every_operation_it_applies_to():
    sale = tracked("sale")
    assert why_not(CAPTURE, sale, [sale]) == (
        "capture applies to preauth, preauth_form or make_rebill_preauth, not to a sale"
    )
    assert why_not(PAYOUT_PAY, sale, [sale]) == "payout-pay applies to payout_check, not to a sale"


def test_a_rebill_preauth_is_a_hold_whose_captures_are_what_it_charged():
    hold = tracked("make_rebill_preauth", "30.00")
    capture = tracked("capture", "30.00", parent=hold)
    orders = [hold, capture]
    assert next_steps(hold, orders) == (RETURN, VOID, REBILL)
    assert why_not(CAPTURE, hold, orders) == "all of 30.00 EUR is captured"
    orders.append(tracked("return", "30.00", parent=hold))
    assert why_not(RETURN, hold, orders) == "nothing left to return: 30.00 EUR charged, 30.00 EUR returned"


def test_a_declined_order_is_offered_nothing():
    declined = tracked("make_rebill_preauth", status="declined")
    assert next_steps(declined, [declined]) == ()
    assert why_not(CAPTURE, declined, [declined]) == f"the make_rebill_preauth {ORDERID} is declined, not approved"
