"""The outcome table against behaviour section 6: CVV2 for cards, the amount for card-less operations."""

from __future__ import annotations

from decimal import Decimal

import pytest

from toolkit.fields import luhn_ok
from toolkit.models import Status
from toolkit.money import to_minor_units
from toolkit.testdata import outcomes
from toolkit.testdata.outcomes import (
    AMOUNT_RULES,
    CARD_OUTCOMES,
    CHALLENGE_FAILED,
    EXAMPLE_CARDS,
    GENERIC_DECLINE,
    THREE_DS_V1_AMOUNTS,
    THREE_DS_V1_CARDS,
    amount_for,
    amount_for_currency,
    card_outcome,
    decline_outcomes,
    is_three_ds_v1_card,
    outcome_for_amount,
    outcome_for_cvv,
    three_ds_v1_result,
)

# Behaviour section 6, as written there: cvv2 -> (status, 3-D Secure).
SECTION_6 = {
    "123": (Status.APPROVED, "none"),
    "1234": (Status.APPROVED, "none"),
    "321": (Status.APPROVED, "challenge"),
    "111": (Status.APPROVED, "none"),
    "217": (Status.UNKNOWN, "none"),
    "101": (Status.DECLINED, "none"),
    "116": (Status.DECLINED, "none"),
    "119": (Status.DECLINED, "none"),
    "209": (Status.DECLINED, "none"),
}


def test_the_table_is_section_6():
    assert {o.cvv2: (o.status, o.three_ds) for o in CARD_OUTCOMES} == SECTION_6


@pytest.mark.parametrize("outcome", CARD_OUTCOMES, ids=lambda o: o.name)
def test_every_outcome_is_found_by_its_cvv2_and_its_name(outcome):
    assert outcome_for_cvv(outcome.cvv2) is outcome
    assert outcome_for_cvv(f" {outcome.cvv2} ") is outcome
    assert card_outcome(outcome.name) is outcome
    assert outcome.description


@pytest.mark.parametrize("outcome", decline_outcomes(), ids=lambda o: o.name)
def test_every_decline_says_why(outcome):
    assert outcome.is_decline and outcome.status is Status.DECLINED
    assert outcome.error_code.isdigit() and outcome.error_message


def test_declines_are_the_table_s_declines_then_the_generic_one():
    declines = decline_outcomes()
    assert [o.cvv2 for o in declines] == ["101", "116", "119", "209", GENERIC_DECLINE.cvv2]
    assert declines[-1] is GENERIC_DECLINE


@pytest.mark.parametrize("cvv2", ["000", "124", "12", "99999", "", "abc"])
def test_any_other_cvv2_declines(cvv2):
    assert outcome_for_cvv(cvv2) is GENERIC_DECLINE


def test_the_generic_decline_and_the_failed_challenge():
    assert card_outcome("declined") is GENERIC_DECLINE
    assert outcome_for_cvv(GENERIC_DECLINE.cvv2) is GENERIC_DECLINE  # its CVV2 really is "any other"
    assert (CHALLENGE_FAILED.cvv2, CHALLENGE_FAILED.status) == ("321", Status.DECLINED)
    assert outcomes.CHALLENGE_PASSWORD == "hint"


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(KeyError, match="known: approved, approved-4-digit-cvv, 3ds-challenge"):
        card_outcome("approve")


def test_unknown_is_not_final_and_the_rest_of_the_statuses_are():
    assert not card_outcome("unknown").status.is_final
    assert all(o.status.is_final for o in CARD_OUTCOMES if o.name != "unknown")


# --- card-less operations: the amount's minor units decide --------------------------------------


@pytest.mark.parametrize(
    ("amount", "currency", "status"),
    [
        ("10.13", "EUR", Status.DECLINED),
        ("0.13", "EUR", Status.DECLINED),
        ("10.17", "EUR", Status.UNKNOWN),
        ("999.17", "USD", Status.UNKNOWN),
        ("10.42", "EUR", Status.APPROVED),
        ("10.31", "EUR", Status.APPROVED),
        ("10.1", "EUR", Status.APPROVED),
        ("13", "EUR", Status.APPROVED),  # 1300 minor units: ends in 00
        ("113", "JPY", Status.DECLINED),  # no minor units: 113 yen
        ("117", "JPY", Status.UNKNOWN),
        ("1.013", "KWD", Status.DECLINED),  # three decimals: 1013
        ("1.13", "KWD", Status.APPROVED),  # 1130
        (Decimal("25.13"), "GBP", Status.DECLINED),
    ],
)
def test_amount_rules(amount, currency, status):
    assert outcome_for_amount(amount, currency).status is status


def test_amount_declines_name_insufficient_funds():
    declined = outcome_for_amount("10.13", "EUR")
    assert (declined.name, declined.error_code, declined.error_message) == (
        "insufficient-funds",
        "51",
        "Insufficient funds",
    )
    assert outcome_for_amount("10.17", "EUR").name == "unknown"


@pytest.mark.parametrize("name", ["approved", *(rule.name for rule in AMOUNT_RULES.values())])
def test_amount_for_gives_its_outcome(name):
    amount = amount_for(name)
    assert outcome_for_amount(amount, "EUR").name == name
    assert outcome_for_amount(amount_for(name, base=Decimal("250")), "EUR").name == name


@pytest.mark.parametrize("currency", ["EUR", "JPY", "KWD", "USD"])
@pytest.mark.parametrize("name", ["approved", "insufficient-funds", "unknown"])
def test_amount_for_currency_gives_its_outcome_in_any_currency(name, currency):
    amount = amount_for_currency(name, currency)
    assert outcome_for_amount(amount, currency).name == name
    assert to_minor_units(amount, currency) >= 1000


def test_amount_for_an_unknown_outcome_lists_the_known_ones():
    with pytest.raises(KeyError, match="known: approved, insufficient-funds, unknown"):
        amount_for("declined")


# --- 3-D Secure 1.0.2 and the example cards -----------------------------------------------------


@pytest.mark.parametrize("number", [*THREE_DS_V1_CARDS, *EXAMPLE_CARDS])
def test_the_public_test_cards_are_luhn_valid(number):
    assert luhn_ok(number)


def test_three_ds_v1_cards_are_recognised():
    assert all(is_three_ds_v1_card(f" {number} ") for number in THREE_DS_V1_CARDS)
    assert not any(is_three_ds_v1_card(number) for number in EXAMPLE_CARDS)


@pytest.mark.parametrize("amount", sorted(THREE_DS_V1_AMOUNTS))
def test_three_ds_v1_amounts_choose_the_result(amount):
    assert three_ds_v1_result(amount) is THREE_DS_V1_AMOUNTS[amount]
    assert three_ds_v1_result(Decimal(amount)) is THREE_DS_V1_AMOUNTS[amount]


def test_three_ds_v1_results():
    assert three_ds_v1_result(Decimal("1")) == THREE_DS_V1_AMOUNTS["1.00"]
    assert three_ds_v1_result("42.00") is outcomes.THREE_DS_V1_DEFAULT
    assert not three_ds_v1_result("1.02").authenticated
    assert len({result.description for result in THREE_DS_V1_AMOUNTS.values()}) == 4
