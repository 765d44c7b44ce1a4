"""Rich display (toolkit.display): responses, statuses, orders, exchanges and pages shown as masked HTML.

The objects do not import their display: ``toolkit.display.formatters`` registers the views with IPython
(``html_of`` is the same view anywhere).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from decimal import Decimal

import pytest

from tests.test_notebooks import leaks
from toolkit import notebook
from toolkit.display import PageView, Screenshot, html_of, safe_html
from toolkit.display.html import table
from toolkit.explorer import GatewaySession
from toolkit.models import StatusResponse
from toolkit.payer.forms import Page
from toolkit.testdata.cards import card_for

PAN = "4538977399606732"
GREEN, RED, AMBER = "#1b7f3b", "#b00020", "#946200"


@pytest.fixture(scope="module")
def sim() -> Iterator[GatewaySession]:
    with GatewaySession.embedded() as session:
        yield session


def badge_colour(html: str) -> str:
    found = re.search(r"border-radius:9px;border:1px solid (#[0-9a-f]{6})", html)
    assert found, "a status shows its outcome as a coloured badge"
    return found.group(1)


def test_a_status_shows_its_outcome_in_colour(sim: GatewaySession):
    approved = sim.merchant.final_status(sim.merchant.pay("sale", card_for("approved", number=PAN), Decimal("2.00")))
    declined = sim.merchant.final_status(sim.merchant.pay("sale", card_for("insufficient-funds"), Decimal("2.00")))
    assert badge_colour(html_of(approved)) == GREEN and badge_colour(html_of(declined)) == RED
    assert "Insufficient funds" in html_of(declined) and RED in html_of(declined)
    for shown in (html_of(approved), html_of(declined)):
        assert PAN not in shown and leaks(shown) == [] and "453897" in shown


def test_a_status_that_waits_for_the_payer_says_where_to_send_it(sim: GatewaySession):
    order = sim.merchant.pay("sale", card_for("3ds-challenge"), Decimal("2.00"))
    status = sim.merchant.payer_step(order)
    shown = html_of(status)
    assert badge_colour(shown) == AMBER and "the payer must act" in shown
    assert "html (what the payer&#x27;s browser is given)" in shown or "html (what the payer's browser" in shown
    assert len(repr(status)) < 900 and "<iframe" not in repr(status), "the html stays out of the plain repr"


def test_orders_exchanges_and_responses_show_themselves_masked(sim: GatewaySession):
    order = sim.merchant.pay("sale", card_for("approved", number=PAN), Decimal("4.00"))
    exchange = next(e for e in reversed(sim.exchanges) if e.operation == "sale")
    for shown in (html_of(order), html_of(exchange), html_of(order.ack)):
        assert PAN not in shown and leaks(shown) == [] and order.orderid in shown
    assert "453897******6732" in html_of(exchange) and "***" in html_of(exchange)
    assert "sale: HTTP 200 async-response" in html_of(exchange)


def test_tables_are_left_aligned_inline_and_labels_never_break():
    """JupyterLab right-aligns output cells with a rule more specific than a class: inline styles win."""
    html = table([("Authorization", "OAuth oauth_consumer_key=..."), ("callback", "x")], ("field", "value"))
    cells = re.findall(r'<t[dh] style="([^"]*)"', html)
    assert len(cells) == 6 and all("text-align:left" in style for style in cells)
    labels = re.findall(r'<td style="([^"]*)">(?:Authorization|callback)<', html)
    assert labels and all("white-space:nowrap" in style for style in labels)
    assert "break-all" not in html
    timeline = table([("10:00:00.000", "⇠ callback", "callback: status approved (control verified)")])
    styles = re.findall(r'<td style="([^"]*)"', timeline)
    assert ["white-space:nowrap" in style for style in styles] == [True, True, False], "only the last column wraps"


HOSTED = (
    "<html><head><title>pay</title></head><body><form id='payment-form' action='/pay' method='post'>"
    f"<input name='credit_card_number' value='{PAN}'><input name=\"cvv2\" value=\"123\">"
    "<input name='card_printed_name' value='ANN'></form><p>card 4538 9773 9960 6732</p>"
    "<script>document.forms[0].submit()</script></body></html>"
)


def test_a_page_is_drawn_in_a_sandbox_without_card_data_or_scripts():
    page = Page.parse("http://gw.example/paynet/form/t", 200, HOSTED)
    safe = safe_html(page.html)
    assert PAN not in safe and "123" not in safe and "<script" not in safe
    assert 'value="453897******6732"' in safe and 'value="***"' in safe and "ANN" in safe
    assert 'http-equiv="Content-Security-Policy"' in safe and "default-src 'none'" in safe
    shown = html_of(page)
    assert '<iframe sandbox=""' in shown and PAN not in shown and "cvv2=123" not in shown
    assert "the hosted payment page" in shown and isinstance(notebook.show(page), PageView)


@pytest.mark.skipif(os.environ.get("GATEKIT_BROWSER") == "off", reason="GATEKIT_BROWSER=off")
def test_a_screenshot_of_the_challenge_page_is_a_png(sim: GatewaySession):
    order = sim.merchant.pay("sale", card_for("3ds-challenge"), Decimal("2.00"))
    sim.payer.load_method_url(sim.merchant.payer_step(order))
    sim.merchant.report_method(order, "completed")
    status = sim.merchant.payer_step(order)
    assert isinstance(status, StatusResponse)
    shot = notebook.screenshot(sim.payer.follow(status), width=640, height=480)
    assert isinstance(shot, Screenshot) and shot._repr_png_().startswith(b"\x89PNG\r\n\x1a\n")
    assert int.from_bytes(shot.png[16:20], "big") == 640 and int.from_bytes(shot.png[20:24], "big") == 480


def test_ipython_shows_the_toolkits_objects_through_the_registered_views(sim: GatewaySession):
    """An IPython shell formats a status, an order, an exchange and a page with the views, by type or by name."""
    from IPython.core.interactiveshell import InteractiveShell

    from toolkit import _ipython
    from toolkit.display import formatters

    order = sim.merchant.pay("sale", card_for("approved", number=PAN), Decimal("3.00"))
    exchange = next(e for e in reversed(sim.exchanges) if e.operation == "sale")
    page = Page.parse("http://gw.example/paynet/form/t", 200, HOSTED)
    shown = (order, order.ack, exchange, page, sim.merchant.final_status(order))
    for register in (formatters.register, lambda shell: _ipython.register_by_name()):
        InteractiveShell.clear_instance()
        shell = InteractiveShell.instance()
        try:
            assert register(shell)
            for obj in shown:
                data, _ = shell.display_formatter.format(obj)
                assert data["text/html"] == html_of(obj) and PAN not in data["text/html"], type(obj)
        finally:
            InteractiveShell.clear_instance()
    assert not hasattr(order.ack, "_repr_html_") and not hasattr(page, "_repr_html_")
