"""Response formats as the documentation gives them (behaviour sections 2 and 3, S10, the docs' response tables).

JSON with ``Accept: application/vnd.pay+json`` (every status, errors included); without it the legacy
form: ``text/html;charset=utf-8``, url-encoded ``key=value`` pairs each ended by a newline and joined
by ``&``, HTTP 200 for every answer that is not a transport failure.  Field names are hyphenated;
``get-card-info-response`` carries the card fields the public libraries require; status responses of
captures, returns and voids say what the transaction was and for how much.
"""

from __future__ import annotations

import re

import pytest

from tests.wire.build import minimal
from tests.wire.gateway import JSON_TYPE, Answer, Gateway
from tests.wire.orders import SAMPLE, Order, Orders
from tests.wire.table import CARD_INFO, CARD_REF, STATUS, wire

HYPHENATED = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MODES = (pytest.param(True, id="json"), pytest.param(False, id="legacy"))


def content_type(answer: Answer) -> str:
    return answer.content_type.replace(" ", "").lower()


def assert_form(answer: Answer, *, json_mode: bool) -> None:
    """The body's form follows the Accept header; every field name is hyphenated lower case."""
    if json_mode:
        assert content_type(answer).startswith(JSON_TYPE), answer.describe()
        assert answer.raw.lstrip().startswith("{"), answer.describe()
    else:
        assert content_type(answer) == "text/html;charset=utf-8", answer.describe()
        pieces = answer.raw.split("&")
        assert all("=" in p and p.endswith("\n") for p in pieces), f"not key=value\\n pairs: {answer.raw!r}"
    odd = [name for name in answer.fields if not HYPHENATED.match(name)]
    assert not odd, f"field names not hyphenated: {odd}"


@pytest.mark.parametrize("json_mode", MODES)
def test_an_async_response_in_either_form(gateway: Gateway, orders: Orders, json_mode: bool) -> None:
    op = wire("sale")
    fields = gateway.with_control(op, minimal(op, orders))
    answer = gateway.post(op, fields, json_mode=json_mode)
    assert_form(answer, json_mode=json_mode)
    assert answer.http_status == 200 and answer.type == "async-response", answer.describe()
    assert answer["merchant-order-id"] == fields["client_orderid"]
    assert answer["paynet-order-id"].isdigit() and answer["serial-number"], answer.describe()


@pytest.mark.parametrize("json_mode", MODES)
def test_a_refusal_in_either_form_says_why(gateway: Gateway, orders: Orders, json_mode: bool) -> None:
    op = wire("sale")
    fields = {k: v for k, v in gateway.with_control(op, minimal(op, orders)).items() if k != "amount"}
    answer = gateway.post(op, fields, json_mode=json_mode)
    assert_form(answer, json_mode=json_mode)
    assert answer.http_status == (400 if json_mode else 200), answer.describe()
    assert answer.type == "validation-error" and answer.message and answer.fields.get("error-code"), answer.describe()


@pytest.mark.parametrize("json_mode", MODES)
def test_an_oauth_refusal_is_http_200_only_in_the_legacy_form(gateway: Gateway, json_mode: bool) -> None:
    op = wire("payout")
    fields = {"client_orderid": "wire-unsigned", "amount": "10.00", "currency": "EUR", "credit_card_number": "1"}
    answer = gateway.post(op, fields, json_mode=json_mode, headers={"Authorization": 'OAuth oauth_version="1.0"'})
    assert answer.type == "validation-error", answer.describe()
    if json_mode:
        assert answer.http_status in (401, 403), answer.describe()
    else:
        assert answer.http_status == 200, answer.describe()  # S10: libraries take any other status as transport failure


@pytest.mark.parametrize("json_mode", MODES)
def test_get_card_info_response_carries_the_documented_card_fields(
    gateway: Gateway, orders: Orders, json_mode: bool
) -> None:
    op = wire("get-card-info")
    answer = gateway.post(op, gateway.with_control(op, minimal(op, orders)), json_mode=json_mode)
    assert_form(answer, json_mode=json_mode)
    assert answer.type == CARD_INFO[0], answer.describe()
    missing = [name for name in CARD_INFO[1] if not answer.fields.get(name)]
    assert not missing, f"get-card-info-response lacks {missing}: {answer.describe()}"
    pan = SAMPLE["credit_card_number"]
    assert answer["bin"] == pan[:6] and answer["last-four-digits"] == pan[-4:]
    assert answer["card-printed-name"] == SAMPLE["card_printed_name"]
    assert answer["expire-month"].lstrip("0") == SAMPLE["expire_month"].lstrip("0")
    assert answer["expire-year"][-2:] == SAMPLE["expire_year"][-2:]
    assert pan not in answer.raw


def test_create_card_ref_response_carries_the_card_ref_id(gateway: Gateway, orders: Orders) -> None:
    op = wire("create-card-ref")
    answer = gateway.post(op, gateway.with_control(op, minimal(op, orders)))
    assert answer.type == CARD_REF[0] and answer.fields.get("card-ref-id"), answer.describe()


def follow_up(gateway: Gateway, orders: Orders, name: str, order: Order, **extra: str) -> Answer:
    op = wire(name)
    fields = {"login": gateway.login, "client_orderid": order.client_orderid, "orderid": order.orderid, **extra}
    answer = gateway.post(op, gateway.with_control(op, fields))
    assert answer.http_status == 200 and answer.type == "async-response", answer.describe()
    return answer


@pytest.mark.parametrize(
    ("name", "start", "extra", "types", "amount"),
    [
        pytest.param("capture", "preauth", {"amount": "3.00", "currency": "EUR"}, ("capture",), "3.00", id="capture"),
        pytest.param(
            "return", "sale", {"amount": "4.00", "currency": "EUR"}, ("return", "reversal"), "4.00", id="return"
        ),
        # "For Preauth it makes Cancel transaction, for Capture and Sale - Reversal" (the family's return page)
        pytest.param("return", "preauth", {}, ("cancel",), "10.00", id="return-of-preauth"),
        pytest.param("void", "sale", {"comment": "wire test"}, ("void",), None, id="void"),
    ],
)
@pytest.mark.parametrize("json_mode", MODES)
def test_the_status_of_a_follow_up_says_what_it_was(
    gateway: Gateway,
    orders: Orders,
    name: str,
    start: str,
    extra: dict[str, str],
    types: tuple[str, ...],
    amount: str | None,
    json_mode: bool,
) -> None:
    original = orders.approved(start)
    done = follow_up(gateway, orders, name, original, **extra)
    assert done["merchant-order-id"] == original.client_orderid, done.describe()
    child = Order(original.client_orderid, done["paynet-order-id"], done)
    orders.wait(child, lambda s: s["status"] != "processing")
    answer = orders.status(child, json_mode=json_mode)
    assert_form(answer, json_mode=json_mode)
    missing = [field for field in STATUS[1] if not answer.fields.get(field)]
    assert not missing, f"status-response lacks {missing}: {answer.describe()}"
    assert answer["status"] == "approved" and answer["transaction-type"] in types, answer.describe()
    assert answer["paynet-order-id"] == child.orderid and answer["merchant-order-id"] == original.client_orderid
    if amount is not None:
        assert answer["amount"] == amount and answer["currency"] == "EUR", answer.describe()


@pytest.mark.parametrize("json_mode", MODES)
def test_a_status_response_never_carries_the_card_number(gateway: Gateway, orders: Orders, json_mode: bool) -> None:
    order = orders.approved()
    answer = orders.status(order, json_mode=json_mode)
    assert_form(answer, json_mode=json_mode)
    assert SAMPLE["credit_card_number"] not in answer.raw
