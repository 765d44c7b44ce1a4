"""The transaction lifecycle (``toolkit.lifecycle``): consistent with itself, with the catalogue that names its
kinds for each operation, with what the simulator's rules write, and with the stage names of the docs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.test_layout import import_graph, module_names
from toolkit import lifecycle
from toolkit.client import LATER_TRANSACTIONS
from toolkit.lifecycle import FOLLOW_UPS, INITIAL, KINDS, Money, applies_to, is_later, kinds_with, stage
from toolkit.operations import OPERATIONS, ResponseKind, iter_operations, makers

SIMULATOR = Path(__file__).resolve().parents[1] / "toolkit" / "simulator"
WINGS = sorted([*(SIMULATOR / "rules").glob("*.py"), *(SIMULATOR / "storage").glob("*.py")])  # handlers and SQL
CLOCK_MADE = {"recurring-charge"}  # made by the simulator's clock (a subscription's charge), no operation


def test_the_lifecycle_imports_nothing_of_the_toolkit():
    """The catalogue reads it: it must load nothing of the simulator (``gatekit sign`` loads the catalogue)."""
    assert import_graph(module_names())["toolkit.lifecycle"] == set()


def test_every_follow_up_a_kind_names_exists_and_every_kind_a_follow_up_makes_is_a_later_one():
    for kind in KINDS.values():
        assert set(kind.follow_ups) <= set(FOLLOW_UPS), kind.name
    for follow_up in FOLLOW_UPS.values():
        assert all(made in KINDS and is_later(made) for made in follow_up.makes), follow_up.name
        assert applies_to(follow_up.name), f"{follow_up.name} applies to no kind"


def test_later_kinds_open_no_order_and_take_no_follow_up():
    for kind in KINDS.values():
        if is_later(kind.name):
            assert not kind.initial and not kind.follow_ups, kind.name


def test_every_kind_is_made_by_an_operation_a_follow_up_or_the_clock():
    made = {op.makes for op in iter_operations() if op.makes}
    added = {kind for follow_up in FOLLOW_UPS.values() for kind in follow_up.makes}
    assert made | added | CLOCK_MADE == set(KINDS)


def test_the_money_rules_and_the_follow_ups_agree():
    """Return and chargeback take back what was charged: they apply to exactly the kinds that charge (a hold
    charges what its captures took); capture applies to exactly the holds; what settles is what charges or
    captures (a hold settles through its captures)."""
    charging = tuple(kind.name for kind in KINDS.values() if kind.charges)
    assert applies_to(lifecycle.RETURN) == applies_to(lifecycle.CHARGEBACK) == charging
    assert applies_to(lifecycle.CAPTURE) == kinds_with(Money.HOLD)
    assert {kind.name for kind in KINDS.values() if kind.settles} == {*kinds_with(Money.CHARGE), "capture"}


@pytest.mark.parametrize(
    ("follow_up", "kinds"),
    [
        (lifecycle.CAPTURE, ("preauth",)),
        (lifecycle.VOID, ("sale", "preauth")),
        (lifecycle.RETURN, ("sale", "preauth", "rebill", "recurring-charge", "transfer")),
        (lifecycle.CHARGEBACK, ("sale", "preauth", "rebill", "recurring-charge", "transfer")),
        (lifecycle.CARD_REF, ("sale", "preauth", "account-verification")),
        (lifecycle.PAYOUT_PAY, ("payout-check",)),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_what_each_follow_up_applies_to(follow_up: str, kinds: tuple[str, ...]):
    """In this order the simulator names them when it refuses ("capture applies to preauth")."""
    assert applies_to(follow_up) == kinds


def test_the_kinds_a_repeated_client_orderid_is_checked_against():
    """A recurring charge numbers its own client_orderid; a card-eligibility send is not checked (as before)."""
    assert set(INITIAL) == {"sale", "preauth", "account-verification", "rebill", "payout", "payout-check", "transfer"}


@pytest.mark.parametrize(
    ("kind", "state", "order_stage"),
    [
        ("sale", lifecycle.THREE_DS_VALIDATING, "sale_3d_validating"),  # behaviour section 3's example
        ("sale", "approved", "sale_approved"),
        ("preauth", "approved", "auth_approved"),
        ("account-verification", "approved", "verify_approved"),
        ("recurring-charge", "declined", "recurring_declined"),
        ("payout-check", "processing", "payout_check_processing"),
        ("payout-pay", "approved", "payout_approved"),
        ("pan-eligibility", "approved", "eligibility_approved"),
    ],
)
def test_order_stages_are_the_prefix_and_the_state(kind: str, state: str, order_stage: str):
    assert stage(kind, state) == order_stage


def test_an_unknown_follow_up_is_named_with_the_known_ones():
    with pytest.raises(KeyError, match="unknown follow-up 'refund'; known follow-ups: capture, void"):
        applies_to("refund")


# --- the catalogue names the lifecycle's kinds ----------------------------------------------------------------


def test_every_operation_that_makes_a_transaction_says_which():
    """An asynchronous or hosted-form answer carries an order: its operation makes a kind or is a follow-up
    (the 3-D Secure uploads carry on the transaction they answer for)."""
    for op in iter_operations():
        if op.response in (ResponseKind.ASYNC, ResponseKind.FORM) and op.family != "3ds/v1":
            assert bool(op.makes) != bool(op.follow_up), op.name


def test_the_later_operations_are_those_the_client_follows_by_serial_number():
    """``toolkit.client.LATER_TRANSACTIONS`` restates ``Operation.later`` (until the client reads it)."""
    assert {op.name for op in iter_operations() if op.later} == LATER_TRANSACTIONS


def test_a_make_rebill_preauth_makes_a_hold_that_capture_void_and_return_apply_to():
    """Behaviour section 11: "a hold (transaction type ``preauth``) that capture, void and return apply to"."""
    assert OPERATIONS["make_rebill_preauth"].makes == "preauth"
    for follow_up in ("capture", "void", "return"):
        assert "make_rebill_preauth" in makers(OPERATIONS[follow_up].applies_to), follow_up


# --- the simulator writes and reads only the lifecycle's kinds -----------------------------------------------

_KIND_ARGUMENT = {"new_tx": 1, "add_tx": 2, "_child": 3, "draft_scheduled_tx": 1}  # where a handler names the kind


def _kinds_written(path: Path) -> set[str]:
    """Kinds a module names: the kind argument of a new transaction, and ``kind='...'`` in its SQL."""
    tree = ast.parse(path.read_text())
    named = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            index = _KIND_ARGUMENT.get(name)
            if index is not None and len(node.args) > index and isinstance(node.args[index], ast.Constant):
                named.add(node.args[index].value)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named.update(re.findall(r"kind='([a-z-]+)'", node.value))
            named.update(kind for kinds in re.findall(r"kind IN \(([^)?]+)\)", node.value)
                         for kind in re.findall(r"'([a-z-]+)'", kinds))  # fmt: skip
    return named


@pytest.mark.parametrize("path", WINGS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_the_rules_and_the_storage_name_only_kinds_of_the_lifecycle(path: Path):
    assert _kinds_written(path) <= set(KINDS)


def test_the_check_of_the_rules_sees_a_kind_the_lifecycle_lacks(tmp_path: Path):
    module = tmp_path / "refunds.py"
    module.write_text(
        "def refund(engine, call, order):\n"
        "    engine.add_tx(order, call, 'refund')\n"
        "    engine.store.one(\"SELECT 1 FROM transactions WHERE kind IN ('reversal', 'rebate')\")\n"
    )
    assert _kinds_written(module) - set(KINDS) == {"refund", "rebate"}
