"""Payers, order ids, cards and order builders: valid for the catalogue, unique, never showing card data."""

from __future__ import annotations

import random
import re
import threading
from datetime import date
from decimal import Decimal

import pytest

import toolkit.testdata as testdata
from toolkit.fields import FIELDS, format_problem, luhn_ok
from toolkit.operations import LOGIN, OPERATIONS
from toolkit.signing import control_for
from toolkit.testdata import (
    CARD_OUTCOMES,
    FORM_OPERATIONS,
    GENERIC_DECLINE,
    THREE_DS_V1_CARDS,
    Card,
    OrderIds,
    card_for,
    form_fields,
    luhn_check_digit,
    new_client_orderid,
    new_payer,
    outcome_for_amount,
    payout_fields,
    preauth_fields,
    random_card_number,
    rebill_fields,
    recurring_fields,
    sale_fields,
    three_ds_v1_card,
    verification_fields,
)
from toolkit.validation import request_problems

ORDERID = re.compile(r"^[A-Za-z0-9-]{1,39}$")
TODAY = date(2026, 11, 22)


def test_the_package_exports_its_public_names_once():
    assert len(set(testdata.__all__)) == len(testdata.__all__)
    assert all(hasattr(testdata, name) for name in testdata.__all__)


# --- payers ------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(25))
def test_payers_fit_the_field_registry(seed):
    payer = new_payer(seed)
    for name, value in payer.fields().items():
        assert value, name
        assert format_problem(FIELDS[name], value) is None, (name, value)
    assert payer.email.split("@")[1].startswith("example.")
    assert payer.full_name == f"{payer.first_name} {payer.last_name}"


def test_a_seed_gives_the_same_payer():
    assert new_payer(7) == new_payer(7)
    assert new_payer(7) != new_payer(8)


def test_payers_are_frozen():
    with pytest.raises(AttributeError):
        new_payer(1).email = "x@example.org"  # type: ignore[misc]


# --- order ids ---------------------------------------------------------------------------------


def test_order_ids_are_unique_and_well_formed():
    ids = [new_client_orderid() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    assert all(ORDERID.match(orderid) and orderid.startswith("gk-") for orderid in ids)


def test_order_ids_are_unique_across_threads():
    ids: list[str] = []
    lock = threading.Lock()

    def make() -> None:
        made = [new_client_orderid("t") for _ in range(500)]
        with lock:
            ids.extend(made)

    threads = [threading.Thread(target=make) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(ids)) == 4000


def test_the_xdist_worker_is_part_of_the_id(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    assert "-gw3-" in new_client_orderid()
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert "-m-" in new_client_orderid()


def test_workers_of_one_run_share_the_run_and_never_collide():
    run = {"PYTEST_XDIST_TESTRUNUID": "5f2c7a190b4d4e6f8a9b0c1d2e3f4a5b"}
    workers = [OrderIds(env={**run, "PYTEST_XDIST_WORKER": f"gw{n}"}) for n in range(4)]
    same_name_again = OrderIds(env={**run, "PYTEST_XDIST_WORKER": "gw0"})  # a restarted worker
    ids = [factory.new() for factory in [*workers, same_name_again] for _ in range(300)]
    assert len(set(ids)) == len(ids)
    assert all(orderid.startswith("gk-5f2c7a19-gw") for orderid in ids)


def test_separate_runs_never_collide():
    first, second = OrderIds(env={}), OrderIds(env={})
    assert first.run != second.run
    assert {first.new() for _ in range(100)}.isdisjoint(second.new() for _ in range(100))


def test_odd_worker_names_are_cleaned():
    factory = OrderIds(env={"PYTEST_XDIST_WORKER": "gw 1/!extra-long"}, run="r-1")
    assert factory.new("p") == f"p-r1-gw1ext-{factory.process}-1"


@pytest.mark.parametrize("prefix", ["", "a b", "a_b", "-a", "a-", "ü", "x" * 20])
def test_a_bad_prefix_is_refused(prefix):
    with pytest.raises(ValueError, match=r"prefix|longer than 39"):
        OrderIds(env={"PYTEST_XDIST_WORKER": "gw123456"}).new(prefix)


def test_the_longest_ids_stay_under_40_characters():
    factory = OrderIds(env={"PYTEST_XDIST_WORKER": "gw123456", "PYTEST_XDIST_TESTRUNUID": "f" * 32})
    orderid = factory.new("inv-12345")
    assert ORDERID.match(orderid) and len(orderid) < 40


# --- cards -------------------------------------------------------------------------------------


@pytest.mark.parametrize("outcome", [*CARD_OUTCOMES, GENERIC_DECLINE], ids=lambda o: o.name)
def test_card_for_every_outcome(outcome):
    card = card_for(outcome.name, today=TODAY)
    assert card.cvv2 == outcome.cvv2 and card.outcome is outcome
    assert luhn_ok(card.number) and card.number == testdata.EXAMPLE_CARDS[0]
    assert (card.expire_month, card.expire_year) == ("12", "2029")
    assert request_problems(OPERATIONS["sale"], {**sale_fields(card=card)}) == []


def test_card_expiry_is_in_the_future():
    card = card_for("approved")
    assert int(card.expire_year) > date.today().year


@pytest.mark.parametrize("outcome", [*CARD_OUTCOMES, GENERIC_DECLINE], ids=lambda o: o.name)
def test_a_card_never_shows_its_number_or_cvv2(outcome):
    card = card_for(outcome.name, today=TODAY)
    assert repr(card) == (
        "Card(number='453897******6732', expire_month='12', expire_year='2029', cvv2='***', holder='GATEKIT TEST')"
    )
    assert str(card) == f"{card}" == "453897******6732 12/2029"
    assert "4538977399606732" not in repr([card])


def test_card_fields_use_wire_names():
    card = Card("4444555566661111", "01", "2030", "123", "JO DOE")
    assert card.fields() == {
        "credit_card_number": "4444555566661111",
        "card_printed_name": "JO DOE",
        "expire_month": "01",
        "expire_year": "2030",
        "cvv2": "123",
    }


def test_card_for_refuses_an_unknown_outcome_or_a_bad_number():
    with pytest.raises(KeyError, match="known:"):
        card_for("lucky")
    with pytest.raises(ValueError, match=r"444455\*+1112 is not Luhn-valid"):
        card_for("approved", number="4444555566661112")
    # str.isdigit accepts the superscript two, which int() and the Luhn check refuse
    with pytest.raises(ValueError, match=r"^card number \*{16} is not Luhn-valid"):
        card_for("approved", number="4444555566661\u00b211")
    with pytest.raises(ValueError, match="the bin must be digits"):
        random_card_number("44\u00b2455")


@pytest.mark.parametrize("index", [0, 1])
def test_three_ds_v1_cards(index):
    card = three_ds_v1_card(index)
    assert card.number == THREE_DS_V1_CARDS[index] and card.outcome.name == "approved"


@pytest.mark.parametrize("length", range(12, 20))
def test_random_card_numbers_are_luhn_valid(length):
    numbers = {random_card_number(length=length) for _ in range(50)}
    assert all(luhn_ok(n) and len(n) == length and n.startswith("444455") for n in numbers)
    assert len(numbers) > 1


def test_random_card_numbers_take_a_bin_and_a_seeded_rng():
    assert random_card_number("5", rng=random.Random(1)) == random_card_number("5", rng=random.Random(1))
    assert random_card_number("222100").startswith("222100")


@pytest.mark.parametrize(("bin_", "length"), [("44x4", 16), ("444455", 11), ("444455", 20), ("4" * 16, 16)])
def test_random_card_number_refuses_nonsense(bin_, length):
    with pytest.raises(ValueError, match="bin"):
        random_card_number(bin_, length)


def test_luhn_check_digit():
    assert luhn_check_digit("7992739871") == "3"  # the textbook example
    assert luhn_check_digit("453897739960673") == "2"


# --- order builders ----------------------------------------------------------------------------

BUILDERS = [
    ("sale", sale_fields),
    ("preauth", preauth_fields),
    ("account_verification", verification_fields),
    *((name, lambda name=name: form_fields(name)) for name in FORM_OPERATIONS),
    ("payout", payout_fields),
    ("payout_check", lambda: payout_fields(operation="payout_check")),
    ("make_rebill", lambda: rebill_fields("1234567")),
    ("create_recurring_payment", lambda: recurring_fields("1234567")),
]


@pytest.mark.parametrize(("operation", "build"), BUILDERS, ids=[name for name, _ in BUILDERS])
def test_every_builder_satisfies_the_catalogue(operation, build):
    op = OPERATIONS[operation]
    fields = build()
    assert set(op.required) - {LOGIN} <= set(fields)  # the client adds the login of its profile
    assert set(fields) <= set(op.fields)
    assert all(isinstance(value, str | Decimal) for value in fields.values())
    assert request_problems(op, {LOGIN: "demo", **{name: str(value) for name, value in fields.items()}}) == []
    if op.control is not None:
        control_for(op, {k: str(v) for k, v in fields.items()}, endpoint_id="1001", login="demo", control_key="k")


def test_form_operations_are_the_catalogue_s():
    assert set(FORM_OPERATIONS) == {
        "sale_form",
        "preauth_form",
        "payment_form",
        "account_verification_form",
        "payout_form",
        "transfer_form",
    }


@pytest.mark.parametrize("outcome", [*CARD_OUTCOMES, GENERIC_DECLINE], ids=lambda o: o.name)
def test_sale_fields_choose_the_outcome_by_cvv2(outcome):
    assert sale_fields(outcome.name)["cvv2"] == outcome.cvv2


def test_sale_fields_use_the_payer_and_a_given_card_wins():
    payer = new_payer(3)
    card = card_for("stolen-card", number="4444555566661111")
    fields = sale_fields("approved", Decimal("1.01"), "USD", payer=payer, card=card)
    assert (fields["email"], fields["first_name"], fields["ipaddress"]) == (
        payer.email,
        payer.first_name,
        payer.ipaddress,
    )
    assert (fields["credit_card_number"], fields["cvv2"]) == ("4444555566661111", "209")
    assert (fields["amount"], fields["currency"]) == (Decimal("1.01"), "USD")
    assert sale_fields(payer=payer)["card_printed_name"] == payer.full_name.upper()


def test_overrides_win_and_none_removes_a_field():
    fields = sale_fields(
        email=None, amount="5.00", server_callback_url="http://127.0.0.1:1/callback", order_desc=7, purpose="test"
    )
    assert "email" not in fields
    assert (fields["amount"], fields["order_desc"], fields["purpose"]) == ("5.00", "7", "test")
    assert fields["server_callback_url"] == "http://127.0.0.1:1/callback"
    assert request_problems(OPERATIONS["sale"], {k: str(v) for k, v in fields.items()})[0].field == "email"


def test_overrides_take_python_names_and_refuse_floats():
    assert payout_fields(destination_card_no="4444555566661111")["destination-card-no"] == "4444555566661111"
    with pytest.raises(TypeError, match="amount: pass money as Decimal or str, never float"):
        sale_fields(amount=10.42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="never float"):
        rebill_fields("1", amount=Decimal(1), comment=1.5)


def test_each_order_gets_its_own_client_orderid():
    ids = {sale_fields()["client_orderid"] for _ in range(20)} | {payout_fields()["client_orderid"] for _ in range(20)}
    assert len(ids) == 40


def test_verification_has_no_amount_and_forms_have_no_card():
    assert not {"amount", "currency"} & set(verification_fields())
    for name in FORM_OPERATIONS:
        assert not {"credit_card_number", "cvv2"} & set(form_fields(name)), name


def test_form_fields_take_a_hyphenated_name_and_refuse_other_operations():
    assert form_fields("sale-form", redirect_url="http://127.0.0.1:1/redirect")["redirect_url"].endswith("/redirect")
    with pytest.raises(ValueError, match="not a hosted-form operation; use one of sale_form"):
        form_fields("sale")


@pytest.mark.parametrize("outcome", ["approved", "insufficient-funds", "unknown"])
@pytest.mark.parametrize("currency", ["EUR", "JPY"])
def test_card_less_builders_choose_the_outcome_by_amount(outcome, currency):
    for fields in (
        payout_fields(outcome, currency=currency),
        rebill_fields("1234567", outcome, currency=currency),
        recurring_fields("1234567", outcome, currency=currency),
    ):
        assert outcome_for_amount(fields["amount"], currency).name == outcome


def test_an_explicit_amount_wins_over_the_outcome():
    assert payout_fields("unknown", Decimal("3.00"))["amount"] == Decimal("3.00")
    assert rebill_fields("1", "unknown", Decimal("3.00"))["amount"] == Decimal("3.00")


def test_payouts_carry_no_cvv2_and_recurring_takes_a_schedule():
    assert "cvv2" not in payout_fields()
    fields = recurring_fields("1234567", period="week", interval=2)
    assert (fields["period"], fields["interval"], fields["cardrefid"]) == ("week", "2", "1234567")
