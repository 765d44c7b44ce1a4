"""A merchant's payment data as the PHP/Ruby libraries hold it, and the steps their users take with it."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import requests

from tests.interop.php_library import PhpLibrary
from tests.wire.gateway import CONTROL_KEY, ENDPOINT_ID, LOGIN
from tests.wire.orders import CHALLENGE_PASSWORD, FINAL, SAMPLE, form_inputs

QUERY_CONFIG = {
    "login": LOGIN,
    "end_point": ENDPOINT_ID,
    "signing_key": CONTROL_KEY,
    "redirect_url": SAMPLE["redirect_url"],
}


def client_id() -> str:
    """The libraries' Validator::ID allows 1-20 characters.  A letter in the middle: no run of 13 digits, which
    could read as a card number (the simulator keeps and echoes a card number in client_orderid masked)."""
    digest = uuid.uuid4().hex
    return f"lib-{digest[:8]}g{digest[8:15]}"


def payment(**overrides: str) -> dict[str, str]:
    """PaymentTransaction -> Payment (+ BillingAddress, Customer, CreditCard), keyed by property path."""
    data = {
        "payment.clientId": client_id(),
        "payment.description": "Library test order",
        "payment.amount": "10.00",
        "payment.currency": "EUR",
        "payment.comment": "library test",
        "billingAddress.firstLine": SAMPLE["address1"],
        "billingAddress.city": SAMPLE["city"],
        "billingAddress.zipCode": SAMPLE["zip_code"],
        "billingAddress.country": SAMPLE["country"],
        "billingAddress.phone": SAMPLE["phone"],
        "customer.ipAddress": SAMPLE["ipaddress"],
        "customer.email": SAMPLE["email"],
        "creditCard.cardPrintedName": SAMPLE["card_printed_name"],
        "creditCard.creditCardNumber": SAMPLE["credit_card_number"],
        "creditCard.expireMonth": "12",
        "creditCard.expireYear": "99",  # Validator::YEAR is ^[0-9]{1,2}$: 2099 is written 99
        "creditCard.cvv2": "123",
    }
    data.update(overrides)
    return data


def wait_status(
    library: PhpLibrary,
    data: dict[str, str],
    done: Callable[[dict[str, str]], bool] | None = None,
    timeout: float = 10.0,
) -> dict[str, str]:
    """StatusQuery every 20 ms until ``done`` (default: a final status); fails at the deadline."""
    check = done or (lambda answer: answer.get("status") in FINAL)
    deadline = time.monotonic() + timeout
    while True:
        answer = library.run(library.queries["status"], data)
        if check(answer):
            return answer
        assert time.monotonic() < deadline, f"no such status within {timeout} s: {answer}"
        time.sleep(0.02)


def acs_answer(session: requests.Session, acs_url: str, name: str) -> str:
    """The payer answers the ACS page with the approving password; the CRes/PaRes handed to the merchant."""
    page = session.post(acs_url + "/answer", data={"password": CHALLENGE_PASSWORD}, timeout=30)
    assert page.status_code == 200, page.text[:400]
    inputs = {key.lower(): value for key, value in form_inputs(page.text).items()}
    assert name.lower() in inputs, f"no {name} in the ACS answer page: {sorted(inputs)}"
    return inputs[name.lower()]
