"""toolkit.certify.tidy, categories and reporting: results tidied on their way to allure-results, the categories
a failure falls in, and the scenario trace handed to the sequence-diagram hook."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from allure_commons import model2 as allure_model
from allure_commons.model2 import Label, Parameter, StatusDetails

from toolkit.callbacks import Received
from toolkit.callbacks.inbox import CallbackTimeout
from toolkit.certify import reporting
from toolkit.certify.categories import CATEGORIES, category_of
from toolkit.certify.tidy import ResultTidier, exception_class, is_gateway_failure
from toolkit.errors import TransportError, ValidationError, WaitTimeout
from toolkit.exchange import Exchange
from toolkit.flows import FlowError
from toolkit.payer import PayerError
from toolkit.payer.visits import Visit as PageVisit


@pytest.mark.parametrize(
    ("message", "cls"),
    [
        ("toolkit.flows.FlowError: Order(...) is declined", FlowError),
        ("AssertionError: assert 1 == 2", AssertionError),
        ("toolkit.errors.ValidationError: sale: Invalid control", ValidationError),
        ("not an exception at all", None),
        ("os.path: a module, not a class", None),
        (None, None),
    ],
)
def test_the_exception_class_is_read_from_the_message(message, cls):
    assert exception_class(message) is cls


GATEWAY_SAYS_NO = [FlowError, PayerError, ValidationError, WaitTimeout, CallbackTimeout]
NOT_THE_GATEWAY = [TransportError, KeyError, AssertionError]


@pytest.mark.parametrize("cls", GATEWAY_SAYS_NO + NOT_THE_GATEWAY)
def test_what_counts_as_the_gateway_answering_otherwise(cls):
    assert is_gateway_failure(f"{cls.__module__}.{cls.__qualname__}: something") is (cls in GATEWAY_SAYS_NO)


def _wrap(hook: Any, item: Any) -> None:
    wrapper = hook(item)
    next(wrapper)  # the part before the file logger writes
    with pytest.raises(StopIteration):
        next(wrapper)


def test_a_result_gets_its_example_columns_and_failed_for_a_gateway_failure():
    broken = StatusDetails(message="toolkit.flows.FlowError: Order(sale) is declined, not approved")
    result = allure_model.TestResult(
        name="test_a_card_that_is_outcome_is_declined[expired]",
        status="broken",
        statusDetails=broken,
        labels=[Label("epic", "Cards"), Label("story", "A card that is expired is declined")],
        parameters=[Parameter("_pytest_bdd_example", "{'outcome': 'expired', 'message': 'Expired card'}")],
        steps=[allure_model.TestStepResult(name="Given an approved sale", status="broken", statusDetails=broken)],
    )
    _wrap(ResultTidier().report_result, result)

    assert result.name == "test_a_card_that_is_outcome_is_declined[expired]"  # the plugin names it, not the tidier
    assert (result.status, result.steps[0].status) == ("failed", "failed")
    assert [(p.name, p.value) for p in result.parameters] == [("outcome", "expired"), ("message", "Expired card")]


def test_a_test_defect_stays_broken():
    result = allure_model.TestResult(name="t", status="broken", statusDetails=StatusDetails(message="KeyError: 'x'"))
    _wrap(ResultTidier().report_result, result)
    assert (result.name, result.status) == ("t", "broken")


def test_containers_keep_only_fixtures_that_failed_or_say_something():
    before, after = allure_model.TestBeforeResult, allure_model.TestAfterResult
    container = allure_model.TestResultContainer(
        befores=[before(name="merchant", status="passed"), before(name="gateway_target", status="broken"),
                 before(name="card", status="passed", attachments=["log"])],
        afters=[after(name="card::<lambda>"), after(name="payer::close", status="failed")],
    )  # fmt: skip
    _wrap(ResultTidier().report_container, container)
    assert [f.name for f in (*container.befores, *container.afters)] == ["gateway_target", "card", "payer::close"]


ASSERTION = "Assertion: the gateway answered otherwise"


@pytest.mark.parametrize(
    ("status", "message", "category"),
    [
        ("failed", "toolkit.errors.ValidationError: sale: the card was declined twice", "Refused by the gateway"),
        ("failed", "AssertionError: Order(sale): declined Do not honor", "Declined"),
        ("failed", "toolkit.flows.FlowError: Order(sale) is filtered, not approved", "Declined"),
        ("broken", "toolkit.errors.TransportError: status: no answer", "Transport: no answer"),
        ("failed", "toolkit.errors.ProtocolError: HTTP 502 text/html: not JSON", "Transport: no answer"),
        ("failed", "toolkit.callbacks.inbox.CallbackTimeout: no callback", "No outcome in time"),
        ("failed", "toolkit.payer.PayerError: the page shows no challenge", "The payer lost its way"),
        ("broken", "toolkit.payer.http.PayerError: no form on the page", "The payer lost its way"),
        ("failed", "AssertionError: processing, expected approved", "Assertion: the gateway answered otherwise"),
        ("broken", "TypeError: unhashable", "Test defects"),
        ("passed", None, None),
    ],
)
def test_failures_fall_in_the_first_category_that_fits(status, message, category):
    assert category_of(status, message) == category


def test_category_patterns_run_in_javascript_and_java_alike():
    """Allure 3 compiles them as JavaScript RegExp: no inline flags such as (?s)."""
    assert all("(?" not in category.get("messageRegex", "") for category in CATEGORIES)


def test_the_trace_of_a_scenario_goes_to_the_diagram_hook(monkeypatch):
    drawn: list[tuple[Any, ...]] = []
    monkeypatch.setattr(reporting, "attach_diagram", lambda *args, **kw: drawn.append((*args, kw["payer"])))
    exchange = Exchange(operation="sale", method="POST", url="http://gw/sale", request_headers={},
                        request_fields=(("amount", "1.00"),), status_code=200)  # fmt: skip
    visit = PageVisit(
        datetime.now(UTC),
        "GET",
        "http://gw/page",
        200,
        0.01,
        "open the page",
        "gateway",
        final_url="http://gw/page",
        body="<html>",
    )
    arrival = Received("redirect", "POST", "/redirect", {"orderid": "1"}, True, 0.0, datetime.now(UTC))

    reporting.begin_scenario()
    reporting.attach_exchange(exchange)
    reporting.attach_page_visit(visit)
    reporting.record_arrival(arrival)
    trace = reporting.end_scenario()
    reporting.attach_exchange(exchange)  # after the scenario: recorded nowhere

    assert drawn == [([exchange], [arrival], [visit])]
    assert trace is not None and trace.exchanges == [exchange]
