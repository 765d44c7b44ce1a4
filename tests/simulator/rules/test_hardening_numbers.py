"""Numbers and clocks from outside (issue 9, items 1 and 6): bounded before use, never a 500.

OAuth timestamps of hundreds of digits, 5000-digit ids, limits and attempts on the control API,
deeply nested JSON, and a clock advanced towards the year 9999.
"""

from __future__ import annotations

import pytest
import requests

from toolkit import demo
from toolkit.client import GatewayClient
from toolkit.errors import ValidationError
from toolkit.operations import AnswerStyle, iter_operations
from toolkit.simcontrol import SimulatorControl
from toolkit.simulator import SimulatorServer
from toolkit.testdata import recurring_fields, sale_fields

DIGITS = "7" * 5000
OAUTH_OPERATIONS = [op for op in iter_operations() if op.auth.is_oauth]


def _authorization(method: str, timestamp: str) -> str:
    params = {
        "oauth_consumer_key": demo.LOGIN,
        "oauth_signature_method": method,
        "oauth_signature": "c2lnbmF0dXJl",
        "oauth_timestamp": timestamp,
        "oauth_nonce": "n-1",
        "oauth_version": "1.0",
    }
    return "OAuth " + ", ".join(f'{name}="{value}"' for name, value in params.items())


@pytest.mark.parametrize("digits", [401, 5000], ids=["401 digits", "5000 digits"])
@pytest.mark.parametrize("op", OAUTH_OPERATIONS, ids=[op.name for op in OAUTH_OPERATIONS])
def test_a_huge_oauth_timestamp_is_a_401_not_a_500(post, op, digits):
    path = op.path.replace("{endpointId}", demo.ENDPOINT_ID).removeprefix("/paynet")
    answer = post(path, {"amount": "1.00"}, headers={"Authorization": _authorization(op.auth.value, "9" * digits)})
    assert answer.status_code == 401
    hosted = op.answers is AnswerStyle.HOSTED_FIELDS  # hosted-fields.md 3.1: the reason in text/plain
    message = answer.text if hosted else answer.json()["error-message"]
    assert f"({digits} characters)' is not a number of seconds (at most 12 digits)" in message
    assert len(message) < 200  # the value is not repeated whole


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("GET", f"transactions/{DIGITS}", None, "orderid"),
        ("POST", f"transactions/{DIGITS}/status", {"status": "approved"}, "orderid"),
        ("GET", f"journal?limit={DIGITS}", None, "limit"),
        ("GET", f"callbacks?orderid={DIGITS}", None, "orderid"),
        ("GET", f"callbacks?orderid=1&attempts={DIGITS}", None, "attempts"),
        ("GET", f"callbacks?orderid=1&attempts=1&timeout={DIGITS}", None, "timeout"),
        ("POST", "settle", {"orderid": DIGITS}, "orderid"),
        ("POST", "settle", '{"orderid": ' + DIGITS + "}", "body"),
        ("POST", "faults", '{"target": "sale", "kind": "error", "count": ' + DIGITS + "}", "body"),
        ("POST", "faults", {"target": "sale", "kind": "error", "count": DIGITS}, "count"),
        ("POST", "clock/advance", '{"seconds": 1e400}', "seconds"),
        ("POST", "clock/advance", '{"seconds": NaN}', "body"),
        ("POST", "faults", "[" * 60_000, "body"),
        ("POST", "settle", '{"orderid": ' + "[" * 30_000 + "]" * 30_000 + "}", "body"),
    ],
    ids=[
        "transaction",
        "force status",
        "journal limit",
        "callbacks orderid",
        "callbacks attempts",
        "callbacks timeout",
        "settle string",
        "settle number",
        "fault count number",
        "fault count string",
        "clock 1e400",
        "clock NaN",
        "nested brackets",
        "nested value",
    ],
)
def test_the_control_api_refuses_huge_numbers_and_deep_json_with_400(control, method, path, body, field):
    kwargs = {"json": body} if isinstance(body, dict) else {"data": body}
    answer = requests.request(method, f"{control.root_url}/_sim/{path}", timeout=10, **kwargs)
    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == field
    # the huge value is cut where it is quoted (in ``error`` and in each of ``problems``), never echoed whole
    assert len(answer.text) < 700 and "7" * 60 not in answer.text and "[" * 60 not in answer.text, answer.text


def test_the_clock_stops_before_the_year_9999(
    server: SimulatorServer, control: SimulatorControl, client: GatewayClient
):
    ack = client.sale(sale_fields())
    client.wait_for_final_status(ack)
    cardrefid = client.create_card_ref(client_orderid=ack.client_orderid, orderid=ack.orderid).card_ref_id
    url = f"{server.root_url}/_sim/clock/advance"
    answers = [requests.post(url, json={"seconds": 10 * 366 * 86400}, timeout=10) for _ in range(800)]
    codes = {answer.status_code for answer in answers}
    assert codes == {200, 400}, codes
    refusal = next(answer.json() for answer in answers if answer.status_code == 400)
    assert refusal["field"] == "seconds" and "past 9000-01-01 (its limit)" in refusal["error"]
    assert control.clock()["iso"].startswith("89")
    assert client.create_recurring_payment(recurring_fields(cardrefid, period="month", interval=1)).recurring_payment_id
    with pytest.raises(ValidationError, match="beyond the year 9999"):
        client.create_recurring_payment(recurring_fields(cardrefid, period="year", interval=2000))
