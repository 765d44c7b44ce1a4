"""The curl command attached to each HTTP exchange in Allure wraps: one option a line, joined by shell line
continuations, and still the same request as the one-line command."""

from __future__ import annotations

import itertools
import shlex
from typing import Any

import allure_commons
import pytest

from toolkit.certify import reporting
from toolkit.client import GatewayClient
from toolkit.exchange import Exchange

SALE = {"client_orderid": "inv-1", "order_desc": "A long description " * 6, "amount": "10.42", "currency": "EUR",
        "address1": "1 Long Street", "city": "Paris", "zip_code": "75001", "country": "FR", "phone": "+33100000000",
        "email": "payer@example.com", "ipaddress": "192.0.2.1", "first_name": "Jo", "last_name": "Doe",
        "credit_card_number": "4444555566661111", "card_printed_name": "JO DOE", "expire_month": "12",
        "expire_year": "2031", "cvv2": "123", "redirect_url": "https://shop.example/back"}  # fmt: skip


class Attached:
    """An allure-commons plugin that keeps what is attached (Allure's own hook, as allure-pytest gets it)."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    @allure_commons.hookimpl
    def attach_data(self, body: Any, name: str, attachment_type: Any, extension: Any) -> None:
        self.texts[name] = body


@pytest.fixture
def exchange(server, config) -> Exchange:
    exchanges: list[Exchange] = []
    server.reply({"type": "async-response", "paynet-order-id": "1"})
    with GatewayClient(config, observers=[exchanges.append]) as gateway:
        gateway.sale(SALE)
    return exchanges[0]


@pytest.fixture
def attached() -> Any:
    plugin = Attached()
    allure_commons.plugin_manager.register(plugin)
    yield plugin
    allure_commons.plugin_manager.unregister(plugin)


def test_the_attached_curl_wraps_one_option_a_line(exchange, attached):
    reporting.attach_exchange(exchange)

    [curl] = [text for name, text in attached.texts.items() if name.startswith("curl")]
    lines = curl.splitlines()
    assert len(lines) > 10 and all(line.endswith(" \\") for line in lines[:-1]), curl
    assert all("&" not in line for line in lines), curl  # one field a line: only a field's own value is long
    assert lines[0].startswith("curl -sS -X POST ") and all(line.startswith("  -") for line in lines[1:])


def test_the_wrapped_curl_sends_what_the_one_line_curl_sends(exchange):
    one_line = shlex.split(exchange.as_curl())
    wrapped = shlex.split(exchange.as_curl(wrap=True).replace("\\\n", ""))

    def body(args: list[str]) -> str:  # curl joins the --data-raw parts with "&"
        return "&".join(value for option, value in itertools.pairwise(args) if option == "--data-raw")

    def rest(args: list[str]) -> list[str]:
        return [arg for i, arg in enumerate(args) if arg != "--data-raw" and (i == 0 or args[i - 1] != "--data-raw")]

    assert body(wrapped) == body(one_line) and "credit_card_number=$CARD_NUMBER" in body(wrapped)
    assert rest(wrapped) == rest(one_line)
