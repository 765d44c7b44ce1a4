"""Hosted pages and 3-D Secure driven by a real browser (headless Chromium), by the same element ids.

Chromium comes from Debian (``make`` installs it); set GATEKIT_BROWSER=off only on a machine
that cannot have it: the test is skipped then, and says so.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from decimal import Decimal

import pytest

from toolkit.callbacks import CallbackReceiver
from toolkit.client import GatewayClient
from toolkit.flows import Merchant
from toolkit.models import Status
from toolkit.payer import PayerError
from toolkit.payer.browser import BrowserPayer
from toolkit.simulator.server import SimulatorServer
from toolkit.simulator.settings import default_settings
from toolkit.testdata import card_for, three_ds_v1_card

pytestmark = pytest.mark.skipif(os.environ.get("GATEKIT_BROWSER") == "off", reason="GATEKIT_BROWSER=off")


@pytest.fixture(scope="module")
def merchant() -> Iterator[Merchant]:
    with SimulatorServer() as server, CallbackReceiver(server.client_config().control_key) as receiver:
        yield Merchant(GatewayClient(server.client_config()), receiver, callback_url=receiver.callback_url)


@pytest.fixture(scope="module")
def browser() -> Iterator[BrowserPayer]:
    with BrowserPayer() as payer:
        yield payer


def test_a_browser_pays_on_the_hosted_page_through_a_challenge(merchant: Merchant, browser: BrowserPayer):
    order = merchant.open_form("sale-form", Decimal("12.00"))
    browser.open(order.redirect_url)
    browser.fill_payment_page(card_for("3ds-challenge"))
    browser.answer_challenge()
    redirect = merchant.redirect_for(order)  # the page's own JavaScript posted the outcome back
    assert redirect.control_ok is True and redirect.status == "approved"
    assert merchant.final_status(order).status is Status.APPROVED


def test_a_browser_fills_the_transfer_page_with_both_cards(merchant: Merchant, browser: BrowserPayer):
    """Behaviour section 12: the transfer page asks for the card the money comes from and the one it goes to."""
    order = merchant.open_form("transfer-form", Decimal("15.00"))
    browser.open(order.redirect_url)
    browser.fill_payment_page(card_for("approved"), destination="4444555566661111")
    redirect = merchant.redirect_for(order)
    assert redirect.control_ok is True and redirect.status == "approved"
    status = merchant.final_status(order)
    assert (status.status, status.transaction_type, status.amount) == (Status.APPROVED, "transfer", Decimal("15.00"))


def test_a_browser_fills_the_alternate_transfer_page(browser: BrowserPayer):
    """The alternate page style names the cards ``pan`` and ``to_pan``, the expiry one ``MM / YY`` field."""
    settings = default_settings(page_style="alternate")
    with SimulatorServer(settings) as server, CallbackReceiver(server.client_config().control_key) as receiver:
        merchant = Merchant(GatewayClient(server.client_config()), receiver)
        order = merchant.open_form("transfer-form", Decimal("15.00"))
        browser.open(order.redirect_url)
        browser.fill_payment_page(card_for("approved"), destination="4444555566661111")
        assert merchant.redirect_for(order).control_ok is True
        status = merchant.final_status(order)
        assert (status.status, status.transaction_type) == (Status.APPROVED, "transfer")
        merchant.client.close()


def test_a_browser_sees_the_field_errors_of_the_page(merchant: Merchant, browser: BrowserPayer):
    order = merchant.open_form("preauth-form", Decimal("3.00"))
    browser.open(order.redirect_url)
    browser.fill_payment_page(card_for("approved"), expire_month="13")
    assert "expire_month" in browser.field_errors()
    browser.fill_payment_page(card_for("approved"))
    assert merchant.redirect_for(order).status == "approved"


def test_a_browser_passes_3ds_1_0_2_on_a_hosted_page(merchant: Merchant, browser: BrowserPayer):
    order = merchant.open_form("sale-form", Decimal("1.00"))
    browser.open(order.redirect_url)
    browser.fill_payment_page(three_ds_v1_card())
    browser.answer_challenge()
    assert merchant.redirect_for(order).status == "approved"


def test_the_browsers_visits_show_every_hop_to_the_acs_and_back_masked(merchant: Merchant):
    """What the diagrams and the report draw: the documents Chromium loaded (its performance log), the pages
    that submit themselves included, each sent to the party that served it, with no card data."""
    assert merchant.receiver is not None
    seen: list[object] = []
    with BrowserPayer(merchant_urls=[merchant.receiver.redirect_url], visit_observers=[seen.append]) as payer:
        order = merchant.open_form("sale-form", Decimal("13.00"))
        payer.open(order.redirect_url)
        payer.fill_payment_page(card_for("3ds-challenge"))
        payer.answer_challenge()
        merchant.redirect_for(order)
        payer.collect_visits()
        visits = list(payer.visits)

    hops = [(visit.step, visit.to) for visit in visits]
    assert hops[:2] == [("open the page", "gateway"), ("pay on the hosted page", "gateway")], hops
    assert ("answer the 3-D Secure challenge", "acs") in hops and hops[-1] == ("go back to the merchant", "merchant")
    assert [visit.method for visit in visits][1:] == ["POST"] * (len(visits) - 1)
    assert seen == visits and all(visit.status_code == 200 for visit in visits)
    assert any(visit.shows == "the 3-D Secure challenge" for visit in visits), [v.shows for v in visits]
    number = card_for("3ds-challenge").number
    flat = repr(visits)
    assert number not in flat and number[:6] + "******" + number[-4:] in flat  # the pay step's fields, masked
    assert card_for("3ds-challenge").cvv2 not in dict(visits[1].fields).values()


class _Asked:
    """An element whose page answers ``is_enabled`` with an error, as Chromium does while a page is replaced."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def is_enabled(self) -> bool:
        raise self.error


def test_an_element_asked_about_mid_navigation_is_asked_again():
    """Chromium's "aborted by navigation" (seen once in 6 runs of the real-browser challenge) is not an answer:
    the wait polls again; a node that left the document is gone; any other error stays an error."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    from toolkit.payer.browser import _gone

    mid = WebDriverException("aborted by navigation: Inspected target navigated or closed")
    assert _gone(_Asked(mid)) is False
    assert _gone(_Asked(StaleElementReferenceException("stale"))) is True
    assert _gone(_Asked(WebDriverException("unhandled inspector error: Node does not belong to the document"))) is True
    with pytest.raises(WebDriverException, match="chrome not reachable"):
        _gone(_Asked(WebDriverException("chrome not reachable")))


@pytest.mark.parametrize(("password", "final"), [("hint", "approved"), ("not-the-password", "declined")])
def test_a_browser_shown_the_status_html_goes_the_gateway_run_road(merchant: Merchant, password: str, final: str):
    """Behaviour 12: the status html, shown as a shop plugin shows it, loads the method URL in its frame and goes on
    to the gateway by itself; the ACS returns the payer to the gateway, which sends it back with the final status.
    Nothing is uploaded."""
    assert merchant.receiver is not None
    with BrowserPayer(merchant_urls=[merchant.receiver.redirect_url]) as payer:
        order = merchant.pay("sale", card_for("3ds-challenge"), Decimal("14.00"))
        payer.show_html(merchant.payer_step(order).html)
        payer.answer_challenge(password)
        redirect = merchant.redirect_for(order)
        payer.collect_visits()
        hops = [(visit.step, visit.to) for visit in payer.visits]

    assert redirect.control_ok is True and redirect.status == final and "cres" not in redirect.params
    status = merchant.client.status(client_orderid=order.client_orderid, orderid=order.orderid)
    assert status.status.value == final and status.get("three-ds-comp-ind") == "Y"  # the frame loaded the method URL
    assert hops[:2] == [("show the page of the status html", "merchant"), ("load the 3-D Secure method URL", "acs")]
    gateway = [index for index, (_, to) in enumerate(hops) if to == "gateway"]
    challenge = hops.index(("answer the 3-D Secure challenge", "acs"))
    assert gateway and gateway[0] < challenge < gateway[-1], hops  # on to the gateway, and back through it
    assert hops[-1] == ("go back to the merchant", "merchant"), hops


def test_a_browser_follows_a_hosted_fields_statuss_redirect_to_through_the_challenge(merchant: Merchant):
    """A Hosted Fields order (the card tokenized as the SDK does, charged with a v4 sale) whose page does not send the
    payer on by itself: ``follow`` goes to redirect-to, the challenge is answered, the ACS's way back ends at the
    merchant's redirect_url with the four fields of the Hosted Fields return, their control good."""
    from toolkit.hosted_fields import HostedFieldsGateway
    from toolkit.payer import Payer

    assert merchant.receiver is not None
    client, receiver = merchant.client, merchant.receiver
    gateway = HostedFieldsGateway(client.config.base_url.removesuffix("/paynet"), client.config.base_url, "1001",
                                  "", "", b"")  # fmt: skip
    ticket = client.create_ephemeral_ticket().ephemeral_ticket
    http = Payer()
    token = http.tokenize_hosted_fields(ticket, card_for("3ds-challenge"), sdk_url=gateway.sdk_url,
                                        origin="http://127.0.0.1:9")  # fmt: skip
    http.session.close()
    order = client.sale_v4(
        client_orderid="hf-browser-follow", order_desc="Hosted Fields order", amount="3.00", currency="USD",
        hosted_fields_token=token.token, address1="100 Main st", city="Seattle", zip_code="98102", country="US",
        state="WA", phone="+12063582043", email="anna@example.com", ipaddress="203.0.113.7",
        redirect_url=receiver.redirect_url, customer_browser_info="true", customer_browser_javascript_enabled="true",
        customer_browser_java_enabled="false", customer_browser_accept_language="en-US",
        customer_browser_color_depth="24", customer_browser_screen_width="1280", customer_browser_screen_height="800",
        customer_browser_time_zone="0", customer_browser_accept_header="text/html",
        customer_browser_user_agent="Mozilla/5.0 (X11; Linux x86_64)",
    )  # fmt: skip
    status = client.wait_for_payer_or_final_v4(order)
    with BrowserPayer(merchant_urls=[receiver.redirect_url]) as payer:
        with pytest.raises(PayerError, match="asks nothing of the payer"):
            payer.follow(dataclasses.replace(status, redirect_to=""))
        payer.follow(status)
        payer.answer_challenge()
        redirect = receiver.wait_for_redirect(orderid=order.orderid)
        payer.collect_visits()
        hops = [(visit.step, visit.to) for visit in payer.visits]
    assert set(redirect.params) == {"status", "orderid", "merchant_order", "control"} and redirect.control_ok is True
    assert client.wait_for_status_v4(order).status is Status.APPROVED
    assert hops[0] == ("follow redirect-to", "acs") and hops[-1] == ("go back to the merchant", "merchant"), hops
