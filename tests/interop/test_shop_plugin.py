"""The shop plugins' direct sale with a 3-D Secure card (issue 36), strict and ``--lenient``, HTTP payer and Chromium.

The shop (``tests/interop/shop_plugin.py``, the WooCommerce plugin reproduced) sends the sale with the card, shows
the status answer's ``html`` in the payer's browser, asks the status every few seconds (here every
``POLL_INTERVAL``), and uploads nothing.  Behaviour section 12: "the order becomes final (approved or declined)
with no upload call, and the payer's browser is POSTed to redirect_url with the final status and control (section
5).  Callbacks go out as for any sale."
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import requests

from tests import independent
from tests.interop.shop_plugin import (
    ChromiumBrowser,
    HttpBrowser,
    PluginError,
    PluginSettings,
    ShopOrder,
    ShopPlugin,
    ShownBrowser,
    php_float,
)
from tests.wire.gateway import CONTROL_KEY, ENDPOINT_ID, LOGIN
from tests.wire.orders import CHALLENGE_PASSWORD, SAMPLE
from toolkit.callbacks import CallbackReceiver
from toolkit.payer.browser import BrowserPayer, BrowserUnavailable
from toolkit.payer.http import Payer
from toolkit.simulator import SimulatorServer
from toolkit.simulator.settings import default_settings

POLL_INTERVAL = 0.25  # seconds between the shop's status requests here (the plugin's ticker: ~3.6 s)
DEADLINE = 30.0  # seconds the shop keeps asking before it gives up
ARRIVAL = 10.0  # seconds for the payer's redirect and the callback to reach the shop
WRONG_PASSWORD = "not-the-password"
CHALLENGE_CARD = {  # CVV2 321: the simulator's 3-D Secure 2 card that asks for a challenge (tests/wire/orders.py)
    "credit_card_number": SAMPLE["credit_card_number"],
    "card_printed_name": SAMPLE["card_printed_name"],
    "expire_month": SAMPLE["expire_month"],
    "expire_year": SAMPLE["expire_year"],
    "cvv2": "321",
}
CUSTOMER = {
    **{name: SAMPLE[name] for name in ("currency", "address1", "city", "zip_code", "country", "phone", "email")},
    "ipaddress": SAMPLE["ipaddress"],
    "first_name": "John",
    "last_name": "Smith",
}


@pytest.fixture(scope="module", params=[pytest.param(False, id="strict"), pytest.param(True, id="lenient")])
def shop_gateway(request: pytest.FixtureRequest) -> Iterator[SimulatorServer]:
    with SimulatorServer(default_settings(lenient=bool(request.param))) as running:
        yield running


@pytest.fixture(scope="module")
def shop() -> Iterator[CallbackReceiver]:
    """The shop's web server: its return handler (``redirect_url``) and its webhook (``server_callback_url``)."""
    with CallbackReceiver(CONTROL_KEY) as running:
        yield running


@pytest.fixture
def plugin(shop_gateway: SimulatorServer, shop: CallbackReceiver) -> Iterator[ShopPlugin]:
    settings = PluginSettings(f"{shop_gateway.root_url}/", LOGIN, CONTROL_KEY, ENDPOINT_ID)
    with requests.Session() as session:
        yield ShopPlugin(
            settings,
            return_url=shop.redirect_url,
            webhook_url=shop.callback_url,
            session=session,
            interval=POLL_INTERVAL,
            deadline=DEADLINE,
        )


@pytest.fixture(scope="module")
def chromium(shop: CallbackReceiver) -> Iterator[BrowserPayer]:
    if os.environ.get("GATEKIT_BROWSER") == "off":
        pytest.skip("GATEKIT_BROWSER=off")
    pytest.importorskip("selenium")
    try:
        payer = BrowserPayer(merchant_urls=[shop.redirect_url])
    except BrowserUnavailable as exc:
        pytest.skip(str(exc))
    with payer:
        yield payer


@pytest.fixture(params=["http-payer", "chromium"])
def browser(request: pytest.FixtureRequest, shop: CallbackReceiver) -> ShownBrowser:
    if request.param == "chromium":
        return ChromiumBrowser(request.getfixturevalue("chromium"))
    return HttpBrowser(Payer(merchant_urls=[shop.redirect_url]))


def signed(fields: dict[str, str]) -> bool:
    """Behaviour 5: control = SHA-1(status + orderid + client_orderid + merchant_control_key)."""
    expected = independent.sha1_hex(fields["status"] + fields["orderid"] + fields["client_orderid"] + CONTROL_KEY)
    return fields.get("control") == expected


def operations(gateway: SimulatorServer, order: ShopOrder) -> list[str]:
    """The operations the simulator's journal holds for the order, oldest first."""
    answer = requests.get(gateway.root_url + "/_sim/journal", params={"login": LOGIN, "limit": "2000"}, timeout=30)
    assert answer.status_code == 200, answer.text
    return [entry["operation"] for entry in answer.json()["entries"] if str(entry.get("orderid")) == order.orderid]


@pytest.mark.parametrize(
    ("password", "final"),
    [(CHALLENGE_PASSWORD, "approved"), (WRONG_PASSWORD, "declined")],
    ids=["right-password", "wrong-password"],
)
def test_a_shop_plugin_s_3ds_sale_ends_by_polling_without_any_upload(
    shop_gateway: SimulatorServer,
    shop: CallbackReceiver,
    plugin: ShopPlugin,
    browser: ShownBrowser,
    password: str,
    final: str,
) -> None:
    order = plugin.checkout(CHALLENGE_CARD, CUSTOMER)
    shown = plugin.until_shown(order)
    assert shown.shows == "html", shown.answer
    with plugin.watch(order) as watch:
        browser.pay_through_challenge(shown.html, password)
        polled = watch.final()

    assert polled["status"] == final, polled
    assert {answer["status"] for answer in watch.answers} <= {"processing", final}, watch.answers
    # (by the shop's own order id: the strict and the lenient simulator both number their orders from 8056020, and
    # the shop's receiver serves both)
    redirect = shop.wait_for_redirect(orderid=order.orderid, client_orderid=order.client_orderid, timeout=ARRIVAL)
    assert (redirect.method, redirect.params["status"]) == ("POST", final), redirect.params
    assert signed(redirect.params) and redirect.control_ok, redirect.params
    back = plugin.return_page(order)  # the payer is back: the plugin shows the result, not the html again
    assert (back.shows, back.payment_status) == ("result", f"sale/{final}"), back.answer
    callback = shop.wait_for_callback(orderid=order.orderid, client_orderid=order.client_orderid, timeout=ARRIVAL)
    assert callback.params["status"] == final and signed(callback.params), callback.summary()
    assert plugin.webhook(callback.params).payment_status == f"sale/{final}"
    done = operations(shop_gateway, order)
    assert done[0] == "sale" and set(done[1:]) == {"status"}, done  # nothing uploaded
    assert {action for action, _ in plugin.sent} == {"sale", "status"}


def test_a_shop_whose_payer_never_shows_the_html_gives_up_at_its_deadline(plugin: ShopPlugin) -> None:
    """The emulation's own check: the polling ends at the deadline, not with a final status it did not get."""
    plugin.deadline = 4 * POLL_INTERVAL
    order = plugin.checkout(CHALLENGE_CARD, CUSTOMER)
    with plugin.watch(order) as watch, pytest.raises(PluginError, match="no final status"):
        watch.final()
    assert len(watch.answers) >= 2 and {answer["status"] for answer in watch.answers} == {"processing"}


@pytest.mark.parametrize(("amount", "cents"), [("10.00", "1000"), ("19.99", "1999"), ("0.29", "29")])
def test_the_plugin_signs_the_amount_as_php_prints_it(amount: str, cents: str) -> None:
    """``$data['amount'] * 100`` is a float; concatenated, PHP prints it with 14 significant digits."""
    assert php_float(float(amount) * 100) == cents
