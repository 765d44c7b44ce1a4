"""Request checks shared by the client and the simulator: every problem names its field."""

from __future__ import annotations

import pytest

from tests.sample_requests import SALE
from toolkit.operations import OPERATIONS, get_operation
from toolkit.validation import Problem, request_problems


def fields_of(problems: list[Problem]) -> list[str]:
    return [problem.field for problem in problems]


def test_a_complete_sale_has_no_problems():
    assert request_problems(get_operation("sale"), SALE) == []


@pytest.mark.parametrize("missing", get_operation("sale").required, ids=get_operation("sale").required)
def test_each_missing_required_field_is_named(missing):
    fields = {name: value for name, value in SALE.items() if name != missing}
    problems = request_problems(get_operation("sale"), fields)
    assert fields_of(problems) == [missing]
    assert str(problems[0]) == f"{missing}: is required by sale"


def test_blank_values_count_as_missing():
    assert fields_of(request_problems(get_operation("sale"), {**SALE, "email": "   "})) == ["email"]


@pytest.mark.parametrize(
    ("change", "field", "rule"),
    [
        ({"amount": "10.005"}, "amount", "more decimals than EUR allows"),
        ({"amount": "10.5", "currency": "JPY"}, "amount", "more decimals than JPY allows"),
        ({"amount": "-1"}, "amount", "positive"),
        ({"amount": "1,00"}, "amount", "not major units with a dot"),
        ({"currency": "EURO"}, "currency", "unknown currency code"),
        ({"expire_month": "13"}, "expire_month", "01 to 12"),
        ({"expire_month": "0"}, "expire_month", "1 to 12"),
        ({"expire_year": "209"}, "expire_year", "four digits (or two: 99)"),
        ({"credit_card_number": "4444555566661112"}, "credit_card_number", "Luhn"),
        ({"credit_card_number": "4444-5555"}, "credit_card_number", "12 to 19 digits"),
        ({"cvv2": "12"}, "cvv2", "3 or 4 digits"),
        ({"email": "john.example.com"}, "email", "not an e-mail address"),
        ({"ipaddress": "300.1.1.1"}, "ipaddress", "not an IP address"),
        ({"redirect_url": "ftp://x"}, "redirect_url", "http(s) URL"),
        ({"order_desc": "x" * 65537}, "order_desc", "longer than 65536"),
        ({"country": "USA"}, "country", "longer than 2"),
        ({"country": "US", "state": ""}, "state", "required when country is US, CA, AU"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_bad_values_are_named_with_their_rule(change, field, rule):
    problems = request_problems(get_operation("sale"), {**SALE, **change})
    assert fields_of(problems) == [field]
    assert rule in problems[0].rule


def test_unknown_currency_does_not_also_blame_the_amount():
    problems = request_problems(get_operation("sale"), {**SALE, "currency": "XXX", "amount": "10.005"})
    assert fields_of(problems) == ["currency"]


def test_payout_needs_one_destination():
    payout = get_operation("payout")
    problems = request_problems(payout, {"client_orderid": "p-1", "amount": "5.00", "currency": "EUR"})
    assert fields_of(problems) == ["credit_card_number"]
    assert "needs one of" in problems[0].rule and "account_number" in problems[0].rule
    assert (
        request_problems(payout, {"client_orderid": "p-1", "amount": "5.00", "currency": "EUR", "ewallet_id": "w"})
        == []
    )


@pytest.mark.parametrize("name", ["capture", "return"], ids=["capture", "return"])
def test_partial_amount_and_currency_go_together(name):
    op = get_operation(name)
    base = {"login": "acme", "client_orderid": "inv-1", "orderid": "8056020"}
    assert request_problems(op, base) == []
    assert fields_of(request_problems(op, {**base, "amount": "2.50"})) == ["currency"]
    assert fields_of(request_problems(op, {**base, "currency": "EUR"})) == ["amount"]


def test_lenient_mode_still_checks_money_and_expiry_but_not_formats():
    sale = get_operation("sale")
    bad_format = {**SALE, "email": "not-an-email", "credit_card_number": "4444555566661112"}
    assert request_problems(sale, bad_format, strict=False) == []
    assert fields_of(request_problems(sale, {**SALE, "amount": "10.005"}, strict=False)) == ["amount"]
    assert fields_of(request_problems(sale, {**SALE, "expire_month": "00"}, strict=False)) == ["expire_month"]
    too_long = {**SALE, "client_orderid": "x" * 129}  # an identifier the gateway could not store
    assert [str(p) for p in request_problems(sale, too_long, strict=False)] == [
        "client_orderid: longer than 128 characters"
    ]


def test_every_operation_reports_all_its_missing_required_fields():
    for op in OPERATIONS.values():
        assert fields_of(request_problems(op, {}))[: len(op.required)] == list(op.required), op.name
