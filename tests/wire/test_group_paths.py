"""Addressing by endpoint group (spec 2.1; behaviour sections 1 and 11), by hand-built requests.

[S11]: "Every v2 operation addressed by endpoint is also addressable by endpoint group
(``/api/v2/<op>/group/{id}``); public integrations poll ``status/group/{id}``".  Each tested operation of
``tests/wire/table.py`` is sent with exactly its mandatory fields to its group address, in JSON and in the
legacy form: accepted when the table says the operation has one (``Wire.by_group``), refused by name
otherwise.  In the sale / preauth / account-verification controls the first part is whichever id is in the
path [behaviour 1]: the group id here.
"""

from __future__ import annotations

import pytest

from tests.wire.build import minimal
from tests.wire.gateway import ENDPOINT_ID, ERROR_TYPES, GROUP_ID, Gateway
from tests.wire.orders import Orders
from tests.wire.table import TESTED, Wire, wire

MODES = (pytest.param(True, id="json"), pytest.param(False, id="legacy"))


def by_group(gateway: Gateway, orders: Orders, item: Wire, *, json_mode: bool):  # type: ignore[no-untyped-def]
    fields = gateway.with_control(item, minimal(item, orders), path_id=GROUP_ID)
    return gateway.post(item, fields, json_mode=json_mode, path_id=GROUP_ID, group=True)


@pytest.mark.parametrize("json_mode", MODES)
@pytest.mark.parametrize("item", [pytest.param(w, id=w.name) for w in TESTED if w.by_group])
def test_every_v2_operation_answers_at_its_group_address(
    gateway: Gateway, orders: Orders, item: Wire, json_mode: bool
) -> None:
    answer = by_group(gateway, orders, item, json_mode=json_mode)
    assert answer.http_status == 200, answer.describe()
    expected = item.response[0]
    assert answer.type == expected if expected else answer.type not in ERROR_TYPES, answer.describe()
    # behaviour 2: "end-point-id may be present (the concrete endpoint when a group was addressed)"
    assert answer.fields.get("end-point-id", ENDPOINT_ID) == ENDPOINT_ID, answer.describe()


@pytest.mark.parametrize("json_mode", MODES)
@pytest.mark.parametrize("item", [pytest.param(w, id=w.name) for w in TESTED if not w.by_group])
def test_v4_and_3ds_operations_have_no_group_address(
    gateway: Gateway, orders: Orders, item: Wire, json_mode: bool
) -> None:
    answer = by_group(gateway, orders, item, json_mode=json_mode)
    assert answer.http_status == (400 if json_mode else 200), answer.describe()
    assert answer.type == "validation-error" and "endpoint group" in answer.message, answer.describe()


def test_status_is_polled_by_group_with_the_order_found_by_either_address(gateway: Gateway, orders: Orders) -> None:
    """The public integrations' way: the sale by endpoint, its status polled at ``status/group/{id}``."""
    order = orders.approved()
    status = wire("status")
    fields = {"login": gateway.login, "client_orderid": order.client_orderid, "orderid": order.orderid}
    answer = gateway.post(status, gateway.with_control(status, fields), path_id=GROUP_ID, group=True)
    assert (answer.http_status, answer.type, answer["status"]) == (200, "status-response", "approved")
    assert answer["paynet-order-id"] == order.orderid and answer.fields.get("end-point-id", ENDPOINT_ID) == ENDPOINT_ID
