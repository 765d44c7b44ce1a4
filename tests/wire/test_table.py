"""The table's control formulas reproduce every vector of tests/vectors/control.json (computed with openssl).

A check of the hand-built signing the wire tests rely on: ``tests/wire/gateway.control_for`` over the
table's formula parts, with the amount in major units turned into minor units, gives each vector's digest.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.wire.gateway import control_for
from tests.wire.table import ENDPOINT, TESTED, WIRES, misspell, wire

_FOLDER = Path(__file__).parents[1] / "vectors"
VECTORS = json.loads((_FOLDER / "control.json").read_text())
# behaviour section 11's formulas, computed for gatekit with openssl in control.json's format (same meta)
VECTORS["vectors"] += json.loads((_FOLDER / "control-family.json").read_text())["vectors"]
OPERATIONS = {
    "sale, doc example": ("sale",),
    # [S12] transfer-form: "the fields and the control of sale-form"
    "sale / preauth / sale-form / preauth-form": ("sale", "preauth", "sale-form", "preauth-form", "transfer-form"),
    "account-verification(-form)": ("account-verification", "account-verification-form"),
    "capture partial": ("capture",),
    "capture full (no amount sent)": ("capture",),
    "return partial": ("return",),
    "return full (no amount sent)": ("return",),
    "void": ("void",),
    "status by orderid": ("status",),
    "status by client_orderid only": ("status",),
    "create-card-ref v2": ("create-card-ref",),
    "make-rebill": ("make-rebill", "make-rebill-sale", "make-rebill-preauth"),  # [S11] "as make-rebill"
    "get-card-info": ("get-card-info",),
    "3DS upload (method-url / cres / pares)": ("upload-method-url-result", "upload-cres-result", "upload-pares-result"),
    "transfer-by-ref": ("transfer-by-ref",),
    "transfer-by-ref without a source": ("transfer-by-ref",),
}


def _cases() -> list[object]:
    return [
        pytest.param(vector, name, id=f"{name}:{vector['case']}")
        for vector in VECTORS["vectors"]
        for name in OPERATIONS[vector["case"]]
    ]


@pytest.mark.parametrize(("vector", "name"), _cases())
def test_the_table_signs_like_the_vectors(vector: dict[str, object], name: str) -> None:
    op = wire(name)
    parts = list(vector["parts"])[:-1]  # type: ignore[call-overload]
    formula = [p for p in op.control if p not in op.control_if_sent] if len(parts) < len(op.control) else op.control
    fields = {part: value for part, value in zip(formula, parts, strict=True) if value != ""}
    if "amount" in fields:
        fields["amount"] = str(vector["amount"])
    path_id = fields.pop(ENDPOINT, "")
    login = fields.get("login", VECTORS["meta"]["login"])
    key = VECTORS["meta"]["merchant_control_key"]
    assert control_for(op, fields, path_id=path_id, login=login, key=key) == vector["sha1_hex"]


def test_every_vector_case_is_mapped() -> None:
    assert {v["case"] for v in VECTORS["vectors"]} == set(OPERATIONS)


def test_every_tested_control_operation_has_a_vector() -> None:
    signed = {name for names in OPERATIONS.values() for name in names}
    unvectored = [w.name for w in TESTED if w.auth == "control" and w.name not in signed]
    assert not unvectored, f"control formulas without a vector: {unvectored}"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("client-order-id", "client_order_id"),
        ("client_orderid", "clientorderid"),
        ("cRes", "CRES"),
        ("threeDSCompInd", "THREEDSCOMPIND"),
        ("login", "Login"),
        ("orderid", "Orderid"),
    ],
)
def test_the_misspelling_rule(name: str, expected: str) -> None:
    assert misspell(name) == expected and misspell(name) != name


def test_names_are_unique_and_every_mandatory_field_is_listed_once() -> None:
    assert len({w.name for w in WIRES}) == len(WIRES)
    for op in TESTED:
        assert len(set(op.mandatory)) == len(op.mandatory), op.name
        assert not set(op.mandatory) & set(op.optional), op.name
