"""Requests built from the table: exactly the mandatory fields, or with every optional one too.

Values come from ``orders.SAMPLE`` and, for follow-ups, from a fresh earlier order made for the
request (``Wire.needs``), so that accepting one request never spoils another test's order.
"""

from __future__ import annotations

from tests.wire.orders import CALLBACK_URL, SAMPLE, Order, Orders, new_id
from tests.wire.table import Wire

OPTIONAL_SAMPLE: dict[str, str] = {
    "server_callback_url": CALLBACK_URL,
    "notify_url": CALLBACK_URL,
    "first_name": "John",
    "last_name": "Smith",
    "state": "NY",
    "birthday": "19800101",
    "ssn": "1234",
    "cell_phone": "+12125550100",
    "site_url": "https://merchant.example",
    "purpose": "wire test",
    "merchant_data": "wire-data",
    "enumerate_amounts": "10.00,5.00",
    "recurrent_scenario": "REGULAR",
}


def prerequisite(wire: Wire, orders: Orders) -> Order | None:
    """The earlier order ``wire`` refers to, made now (None for operations that start an order)."""
    makers = {
        "nothing": lambda: None,
        "sale": orders.approved,
        "preauth": lambda: orders.approved("preauth"),
        "card_ref": orders.card_ref,
        "tds_method": orders.tds_method,
        "tds_challenge": orders.tds_challenge,
        "tds_v1": orders.tds_v1,
        "payout_check": orders.payout_check,
    }
    return makers[wire.needs]()


def values_for(wire: Wire, orders: Orders) -> dict[str, str]:
    """A value for every field ``wire`` may send, tied to a fresh prerequisite order."""
    order = prerequisite(wire, orders)
    values = {**SAMPLE, **OPTIONAL_SAMPLE, "login": orders.gateway.login}
    fresh = new_id(wire.name)
    values.update({"client_orderid": fresh, "client-order-id": fresh})
    if order is None:
        return values
    if wire.needs == "card_ref":  # a new order charged to (or sent from) the stored card
        ref = order.extra["cardrefid"]
        values.update(
            {
                name: ref
                for name in ("cardrefid", "sending-card-ref-id", "source-card-ref-id", "destination-card-ref-id")
            }
        )
        return values
    values.update(
        {
            "client_orderid": order.client_orderid,
            "client-order-id": order.client_orderid,
            "orderid": order.orderid,
            "by-request-sn": order.created["serial-number"],
        }
    )
    if wire.needs == "tds_challenge":
        values["cRes"] = orders.acs_result(order, "cres")
    if wire.needs == "tds_v1":
        values["paRes"] = orders.acs_result(order, "pares")
    return values


def minimal(wire: Wire, orders: Orders) -> dict[str, str]:
    """Exactly the mandatory fields (one of each one-of group), unsigned: ``control`` is added by the caller."""
    values = values_for(wire, orders)
    fields = {name: values[name] for name in wire.mandatory if name != "control"}
    fields.update({group[0]: values[group[0]] for group in wire.one_of})
    return fields


def complete(wire: Wire, orders: Orders) -> dict[str, str]:
    """The mandatory fields and every optional one the table lists, unsigned."""
    values = values_for(wire, orders)
    if "state" in wire.optional:
        values["country"] = "US"  # a state is only meaningful (and required) for US, CA, AU [S10]
    names = [*wire.mandatory, *(group[0] for group in wire.one_of), *wire.optional]
    return {name: values[name] for name in names if name != "control"}
