"""Section 10, field by field: exactly the mandatory fields are accepted; one missing or misspelled is refused.

Every request is built by hand from ``tests/wire/table.py`` and signed by ``tests/independent.py``.
The control is always computed over the fields as the gateway receives them (a missing or misspelled
field counts as empty), so that a refusal can only be about the field itself: the refusal must name
the field and must not be a complaint about ``control``.  Both answer forms are checked: JSON
(``Accept: application/vnd.pay+json``, HTTP 400 ``validation-error``) and legacy (no Accept header,
HTTP 200 with ``type=validation-error`` in ``key=value`` pairs).
"""

from __future__ import annotations

import pytest

from tests.wire.build import complete, minimal
from tests.wire.gateway import ERROR_TYPES, Answer, Gateway, names_field
from tests.wire.orders import Orders
from tests.wire.table import TESTED, Wire, misspell

MODES = (pytest.param(True, id="json"), pytest.param(False, id="legacy"))


def _cases() -> list[object]:
    return [pytest.param(wire, name, id=f"{wire.name}-{name}") for wire in TESTED for name in wire.mandatory]


def assert_accepted(wire: Wire, answer: Answer) -> None:
    expected = wire.response[0]
    assert answer.http_status == 200, answer.describe()
    if expected is None:
        assert answer.type and answer.type not in ERROR_TYPES, answer.describe()
    else:
        assert answer.type == expected, answer.describe()


def assert_refused(answer: Answer, name: str, *, json_mode: bool) -> None:
    """Behaviour 2: 400 in JSON, 200 in legacy form; ``validation-error`` naming ``name``, not the control."""
    assert answer.http_status == (400 if json_mode else 200), answer.describe()
    assert answer.type == "validation-error", answer.describe()
    assert names_field(answer.message, name), f"the refusal does not name {name}: {answer.describe()}"
    if name != "control":
        assert not names_field(answer.message, "control"), f"refused for its control, not {name}: {answer.describe()}"


def without(gateway: Gateway, wire: Wire, fields: dict[str, str], name: str) -> dict[str, str]:
    """The signed request with ``name`` left out (the control then covers what is really sent)."""
    if name == "control":
        return {k: v for k, v in gateway.with_control(wire, fields).items() if k != "control"}
    return gateway.with_control(wire, {k: v for k, v in fields.items() if k != name})


def misspelled(gateway: Gateway, wire: Wire, fields: dict[str, str], name: str) -> dict[str, str]:
    """The signed request with ``name`` sent under ``misspell(name)`` (its control as if it were missing)."""
    if name == "control":
        signed = gateway.with_control(wire, fields)
        return {**{k: v for k, v in signed.items() if k != "control"}, misspell("control"): signed["control"]}
    signed = gateway.with_control(wire, {k: v for k, v in fields.items() if k != name})
    return {**signed, misspell(name): fields[name]}


@pytest.mark.parametrize("json_mode", MODES)
@pytest.mark.parametrize("wire", [pytest.param(w, id=w.name) for w in TESTED])
def test_exactly_the_mandatory_fields_are_accepted(
    gateway: Gateway, orders: Orders, wire: Wire, json_mode: bool
) -> None:
    fields = gateway.with_control(wire, minimal(wire, orders))
    assert_accepted(wire, gateway.post(wire, fields, json_mode=json_mode))


@pytest.mark.parametrize("json_mode", MODES)
@pytest.mark.parametrize(("wire", "name"), _cases())
def test_a_missing_mandatory_field_is_refused_by_name(
    gateway: Gateway, orders: Orders, wire: Wire, name: str, json_mode: bool
) -> None:
    request = without(gateway, wire, minimal(wire, orders), name)
    assert_refused(gateway.post(wire, request, json_mode=json_mode), name, json_mode=json_mode)


@pytest.mark.parametrize("json_mode", MODES)
@pytest.mark.parametrize(("wire", "name"), _cases())
def test_a_misspelled_mandatory_field_is_refused_naming_the_right_spelling(
    gateway: Gateway, orders: Orders, wire: Wire, name: str, json_mode: bool
) -> None:
    request = misspelled(gateway, wire, minimal(wire, orders), name)
    assert misspell(name) in request and name not in request
    assert_refused(gateway.post(wire, request, json_mode=json_mode), name, json_mode=json_mode)


@pytest.mark.parametrize("wire", [pytest.param(w, id=w.name) for w in TESTED if w.optional])
def test_every_optional_field_is_accepted_too(gateway: Gateway, orders: Orders, wire: Wire) -> None:
    fields = gateway.with_control(wire, complete(wire, orders))
    assert_accepted(wire, gateway.post(wire, fields))


# Fields whose value the merchant chooses freely, with a value one character over the documented length
# that is otherwise well-formed.  Identifiers the gateway assigns (orderid, cardrefid) are left out.
TOO_LONG = {
    "client_orderid": "c" * 129,
    "address1": "A" * 51,
    "city": "B" * 51,
    "zip_code": "1" * 11,
    "country": "DEU",
    "phone": "+" + "1" * 15,
    "email": "e" * 39 + "@example.com",
    "state": "NYC",
    "comment": "x" * 51,
    "purpose": "p" * 129,
    "enumerate_amounts": ",".join(["10.00"] * 22),
}


def _length_cases() -> list[object]:
    return [
        pytest.param(wire, name, id=f"{wire.name}-{name}-{wire.lengths[name]}")
        for wire in TESTED
        for name in TOO_LONG
        if name in wire.lengths and not (name == "client_orderid" and wire.needs not in ("nothing", "card_ref"))
    ]


@pytest.mark.parametrize(("wire", "name"), _length_cases())
def test_a_value_over_its_documented_length_is_refused_by_name(
    gateway: Gateway, orders: Orders, wire: Wire, name: str
) -> None:
    fields = complete(wire, orders) if name in wire.optional else minimal(wire, orders)
    fields[name] = TOO_LONG[name]
    assert len(TOO_LONG[name]) == wire.lengths[name] + 1 or name == "enumerate_amounts"
    assert_refused(gateway.post(wire, gateway.with_control(wire, fields)), name, json_mode=True)
