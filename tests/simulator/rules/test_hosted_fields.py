"""Hosted Fields' rules (``toolkit.simulator.rules.hosted_fields``) through gatekit's client and the SDK's tokenize
call: what a token keeps, the CVV table's outcomes, 3-D Secure, lifetimes on the simulator's clock, racing
requests.  Run on the in-memory store and, in a ``make test`` run, on PostgreSQL too (``conftest.BOTH_STORES``).
The wire-level points of hosted-fields.md (JSON types, CORS, codes, signatures) are in
``tests/wire/test_hosted_fields_server.py``.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.wire.browser import Browser
from toolkit import demo
from toolkit.callbacks import CallbackReceiver
from toolkit.client import GatewayClient
from toolkit.errors import ValidationError
from toolkit.models import HostedSaleResponse, HostedStatusResponse, Status
from toolkit.simcontrol import SimulatorControl
from toolkit.simulator import SimulatorServer
from toolkit.simulator.rules import hosted_fields
from toolkit.simulator.settings import default_settings
from toolkit.simulator.storage import hosted_rows
from toolkit.testdata.outcomes import CARD_OUTCOMES, CHALLENGE_PASSWORD, SIMULATOR_OUTCOMES, THREE_DS_V1_CARDS

CARD = "4444444444444448"
BROWSER = {
    "customer_browser_info": "true",
    "customer_browser_javascript_enabled": "true",
    "customer_browser_java_enabled": "false",
    "customer_browser_accept_language": "de-DE",
    "customer_browser_color_depth": "24",
    "customer_browser_screen_width": "1280",
    "customer_browser_screen_height": "800",
    "customer_browser_time_zone": "-60",
    "customer_browser_accept_header": "text/html",
    "customer_browser_user_agent": "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15",
}


@pytest.fixture(autouse=True)
def control(server: SimulatorServer) -> Iterator[SimulatorControl]:
    """Every test starts from a reset simulator (some move its clock)."""
    with server.control() as running:
        running.reset()
        yield running


def tokenize(server: SimulatorServer, ticket: str, number: str = CARD, cvv: str = "123", expiry: str = "12/30") -> Any:
    body = {"ephemeralTicket": ticket, "cardNumber": number, "expiryDate": expiry, "cvv": cvv}
    answer = requests.post(server.root_url + "/api/v4/tokenize/hosted-fields", json=body, timeout=30)
    return answer.status_code, answer.json()


def token(server: SimulatorServer, client: GatewayClient, cvv: str = "123", number: str = CARD, **kw: str) -> str:
    status, body = tokenize(server, client.create_ephemeral_ticket().ephemeral_ticket, number, cvv, **kw)
    assert status == 200, body
    return str(body["hostedFieldsToken"])


def sale_fields(fresh_id: Any, hosted_token: str, redirect_url: str = "https://shop.example/back", **changed: str):
    return {
        **BROWSER,
        "client_orderid": fresh_id(),
        "order_desc": "Hosted Fields order",
        "amount": "10.42",
        "currency": "EUR",
        "hosted_fields_token": hosted_token,
        "card_printed_name": "ERIKA MUSTERMANN",
        "address1": "Hauptstrasse 1",
        "city": "Berlin",
        "zip_code": "10115",
        "country": "DE",
        "phone": "+4930123456",
        "email": "erika@example.com",
        "ipaddress": "203.0.113.7",
        "redirect_url": redirect_url,
        **changed,
    }


def status_of(client: GatewayClient, sale: HostedSaleResponse) -> HostedStatusResponse:
    return client.status_v4(client_orderid=sale.client_orderid, orderid=sale.orderid)


# --- what a token keeps ---------------------------------------------------------------------------------------------


def test_a_token_keeps_the_card_as_a_card_reference_does_and_the_outcome_never_the_cvv(
    server: SimulatorServer, client: GatewayClient
) -> None:
    number = "4539148803436467"
    minted = token(server, client, "116", number, expiry="7/31")
    row = hosted_rows.token(server.store, minted, demo.LOGIN)
    assert row is not None
    assert (row["bin"], row["last4"], row["card_type"], row["exp_month"], row["exp_year"]) == (
        "453914",
        "6467",
        "VISA",
        "07",
        "2031",
    )
    assert (row["outcome"], row["outcome_status"], row["outcome_code"]) == ("insufficient-funds", "declined", "51")
    assert not any("cvv" in name for name in row)
    assert not any(number in str(value) for value in row.values())
    assert hosted_rows.token(server.store, minted, "another-merchant") is None


def test_the_journal_of_the_ticket_and_the_sale_never_holds_the_card(
    server: SimulatorServer, client: GatewayClient, control: SimulatorControl, fresh_id: Any
) -> None:
    number = "5555555555554444"
    client.sale_v4(sale_fields(fresh_id, token(server, client, "321", number)))
    text = json.dumps(control.journal())
    assert "tokenize_hosted_fields" in text and "sale_v4" in text and "create_ephemeral_ticket" in text
    assert number not in text and '"321"' not in text


# --- outcomes: the CVV table of behaviour section 6 ---------------------------------------------------------------

FINAL_AT_ONCE = [o for o in (*CARD_OUTCOMES, *SIMULATOR_OUTCOMES) if o.three_ds != "challenge"]


@pytest.mark.parametrize("outcome", FINAL_AT_ONCE, ids=[o.name for o in FINAL_AT_ONCE])
def test_the_cvv_typed_in_the_iframe_chooses_the_outcome(
    server: SimulatorServer, client: GatewayClient, fresh_id: Any, outcome: Any
) -> None:
    sale = client.sale_v4(sale_fields(fresh_id, token(server, client, outcome.cvv2)))
    status = status_of(client, sale)
    assert status.status is outcome.status and not status.redirect_to and not status.html
    if outcome.status is Status.APPROVED:
        assert status.approval_code and status.processor_rrn and status.bank_message == "Approved"
    else:
        assert status.raw["error-code"] == str(int(outcome.error_code))  # (a JSON number: 05 is 5)
    assert (status.card_type, status.last_four_digits, status.cardholder_name) == ("VISA", "4448", "ERIKA MUSTERMANN")


def test_a_three_ds_1_test_card_goes_to_its_acs_and_back_with_four_fields(
    server: SimulatorServer, client: GatewayClient, fresh_id: Any
) -> None:
    back_to = "https://shop.example/result/callback"
    sale = client.sale_v4(sale_fields(fresh_id, token(server, client, "123", THREE_DS_V1_CARDS[0]), back_to,
                                      amount="1.00"))  # fmt: skip
    status = status_of(client, sale)
    assert status.needs_payer and "/3ds/v1/acs/" in status.redirect_to and not status.html
    browser = Browser(back_to)
    first = browser.session.get(status.redirect_to, timeout=30)
    shown = browser.answer(browser.show(first.text, first.url), CHALLENGE_PASSWORD)
    assert shown.to_merchant is not None
    assert set(shown.to_merchant.fields) == {"status", "orderid", "merchant_order", "control"}
    assert status_of(client, sale).status is Status.APPROVED


# --- 3-D Secure: redirect-to while the ACS page waits, and only then --------------------------------------------


def test_redirect_to_is_gone_as_soon_as_the_acs_page_is_answered(
    server: SimulatorServer, client: GatewayClient, fresh_id: Any
) -> None:
    """Before the payer's browser is back at the gateway (the ACS answered, the result not yet applied), the
    status no longer sends the payer to the ACS: a return page polling then cannot send the payer there again."""
    sale = client.sale_v4(sale_fields(fresh_id, token(server, client, "321")))
    acs = status_of(client, sale).redirect_to
    assert acs.startswith(server.base_url + "/3ds/v2/acs/")
    answered = requests.post(acs + "/answer", data={"password": CHALLENGE_PASSWORD}, timeout=30)
    assert answered.status_code == 200  # (a page that would take the payer back to the gateway; not followed)
    status = status_of(client, sale)
    assert status.status is Status.PROCESSING and not status.redirect_to and not status.html


def posted_form(page: str) -> tuple[str, dict[str, str]]:
    """The action and hidden fields of the (first) form a simulator page posts by itself."""
    action = re.search(r'<form[^>]*action="([^"]+)"', page)
    assert action is not None, page[:600]
    fields = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page)
    return html.unescape(action.group(1)), {name: html.unescape(value) for name, value in fields}


def test_a_slow_decision_after_the_challenge_keeps_the_status_processing_without_redirect_to(
    receiver: CallbackReceiver, fresh_id: Any
) -> None:
    """The gateway keeps the payer (a page that looks again) while it decides; the status says processing, with no
    redirect-to; the decision due, the payer goes back with the four fields, and the callback goes out."""
    settings = dataclasses.replace(default_settings(), latency=30)
    with (
        SimulatorServer(settings) as slow,
        GatewayClient(slow.client_config()) as client,
        slow.control() as control,
        requests.Session() as payer,
    ):
        fields = sale_fields(fresh_id, token(slow, client, "321"), receiver.redirect_url,
                             server_callback_url=receiver.callback_url)  # fmt: skip
        sale = client.sale_v4(fields)
        acs = status_of(client, sale).redirect_to
        assert payer.get(acs, timeout=30).status_code == 200
        action, result = posted_form(
            payer.post(acs + "/answer", data={"password": CHALLENGE_PASSWORD}, timeout=30).text
        )
        waiting = payer.post(action, data=result, timeout=30)
        assert waiting.status_code == 200 and receiver.redirect_url not in waiting.text
        status = status_of(client, sale)
        assert status.status is Status.PROCESSING and not status.redirect_to
        control.advance_clock(31)
        assert status_of(client, sale).status is Status.APPROVED
        back_to, sent = posted_form(payer.get(action, timeout=30).text)
        assert back_to == receiver.redirect_url and set(sent) == {"status", "orderid", "merchant_order", "control"}
        callback = receiver.wait_for_callback(orderid=sale.orderid, timeout=10)
        assert callback.params["status"] == "approved" and callback.control_ok


# --- lifetimes on the simulator's clock, single use, racing requests --------------------------------------------


def test_a_token_expires_after_its_lifetime(
    server: SimulatorServer, client: GatewayClient, control: SimulatorControl, fresh_id: Any
) -> None:
    minted = token(server, client)
    control.advance_clock(hosted_fields.TOKEN_LIFETIME + 1)
    with pytest.raises(ValidationError, match="hosted_fields_token expired") as caught:
        client.sale_v4(sale_fields(fresh_id, minted))
    assert caught.value.error_code == "3"


def test_a_declined_sale_spends_its_token(server: SimulatorServer, client: GatewayClient, fresh_id: Any) -> None:
    minted = token(server, client, "116")
    assert status_of(client, client.sale_v4(sale_fields(fresh_id, minted))).status is Status.DECLINED
    with pytest.raises(ValidationError, match="Unknown or already spent hosted_fields_token"):
        client.sale_v4(sale_fields(fresh_id, minted))


def test_a_sale_refused_before_any_order_leaves_the_token(
    server: SimulatorServer, client: GatewayClient, fresh_id: Any
) -> None:
    minted = token(server, client)
    with pytest.raises(ValidationError, match="currency"):
        client.sale_v4(sale_fields(fresh_id, minted, currency="XXX"), validate=False)
    assert isinstance(client.sale_v4(sale_fields(fresh_id, minted)), HostedSaleResponse)


def test_two_tokenize_calls_racing_for_one_ticket_make_one_token(
    server: SimulatorServer, client: GatewayClient
) -> None:
    ticket = client.create_ephemeral_ticket().ephemeral_ticket
    results: list[int] = []
    start = threading.Barrier(4)

    def race() -> None:
        start.wait()
        results.append(tokenize(server, ticket)[0])

    threads = [threading.Thread(target=race) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [200, 400, 400, 400]


def test_two_sales_racing_for_one_token_make_one_order(
    server: SimulatorServer, client: GatewayClient, fresh_id: Any
) -> None:
    minted = token(server, client)
    outcomes: list[str] = []
    start = threading.Barrier(3)

    def race() -> None:
        start.wait()
        try:
            outcomes.append(client.sale_v4(sale_fields(fresh_id, minted)).orderid)
        except ValidationError as refused:
            outcomes.append(refused.error_message)

    threads = [threading.Thread(target=race) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(o.isdigit() for o in outcomes) == [False, False, True], outcomes


def test_the_ticket_is_the_merchant_s_and_any_of_its_endpoints_may_charge_the_token(
    server: SimulatorServer, client: GatewayClient
) -> None:
    ticket = client.create_ephemeral_ticket().ephemeral_ticket
    row = hosted_rows.ticket(server.store, ticket)
    assert row is not None and (row["login"], row["endpoint_id"]) == (demo.LOGIN, demo.ENDPOINT_ID)
    assert row["expires_at"] - row["created_at"] == hosted_fields.TICKET_LIFETIME == 15 * 60
