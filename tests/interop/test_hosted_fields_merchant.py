"""The Hosted Fields examples' flow against gatekit's simulator, as their READMEs run it: a merchant that follows
hosted-fields.md (``hosted_fields_merchant``: its server calls signed by hand, its checkout page under the
examples' Content-Security-Policy, the SDK loaded async from the simulator's origin) paid by a payer.

In headless Chromium (the plugin's ``hosted_fields_simulator`` and ``hosted_fields_payer`` fixtures): approved,
declined, the 3-D Secure challenge passed and failed.  Each checks the final status the merchant's page shows, the
return POST's control (recomputed here), the sale answer's types, no CSP violation, and no card data in the
simulator's journal (``GET /_sim/journal``).  Over plain HTTP (``Payer``, acting as the page's scripts would):
approved and the challenge passed.  Without Chromium or Selenium (or with GATEKIT_BROWSER=off) the Chromium tests
are skipped, saying why.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
import requests

from tests.independent import sha1_hex
from tests.interop.hosted_fields_merchant import HostedFieldsMerchant
from toolkit.config import PollSchedule
from toolkit.hosted_fields import HostedFieldsGateway
from toolkit.models import HostedStatusResponse, Status
from toolkit.payer import Payer, TokenizeRefused
from toolkit.testdata import Card, card_for
from toolkit.waiting import wait_for_status

CARD = "4444444444444448"  # the examples' sandbox test card (README: any future expiry, CVV 123)
WAIT = 20.0  # seconds the page may take to show a final status (it polls every 0.2 s here, 4 s in the examples)
PAGE_POLL = PollSchedule((0.05, 0.1, 0.2), deadline=WAIT)  # how the HTTP variant polls the merchant's /status
# What the checkout page's script sends to /pay beside the token (browserInfo() and the merchant's own inputs).
BROWSER_INFO = {"customer_browser_info": "true", "customer_browser_javascript_enabled": "true",
                "customer_browser_java_enabled": "false", "customer_browser_accept_language": "en-US",
                "customer_browser_color_depth": "24", "customer_browser_screen_width": "1280",
                "customer_browser_screen_height": "800", "customer_browser_time_zone": "-60"}  # fmt: skip
CUSTOMER = {"firstName": "Anna", "lastName": "Weber", "email": "anna@example.com", "cardPrintedName": "ANNA WEBER"}
OUTCOMES = {
    "approved": ("approved", None, "approved"),
    "declined": ("declined", None, "declined"),
    "challenge-passed": ("3ds-challenge", "hint", "approved"),
    "challenge-failed": ("3ds-challenge", "not-the-password", "declined"),
}


@pytest.fixture
def merchant(hosted_fields_simulator: HostedFieldsGateway) -> Iterator[HostedFieldsMerchant]:
    """The merchant's app, configured with the simulator's SDK_URL and API_URL as the examples' .env says."""
    with HostedFieldsMerchant(hosted_fields_simulator.environment(), poll_ms=200) as running:
        yield running


@pytest.fixture
def chromium(request: pytest.FixtureRequest, merchant: HostedFieldsMerchant) -> Any:
    """``hosted_fields_payer`` (headless Chromium), or the test skipped with the reason."""
    if os.environ.get("GATEKIT_BROWSER") == "off":
        pytest.skip("GATEKIT_BROWSER=off")
    pytest.importorskip("selenium", reason="the browser payer needs Selenium: pip install 'gatekit[browser]'")
    from toolkit.payer.browser import BrowserUnavailable, find_browser

    try:
        find_browser()
    except BrowserUnavailable as exc:
        pytest.skip(str(exc))
    payer = request.getfixturevalue("hosted_fields_payer")
    payer.merchant_urls.append(merchant.redirect_url)
    return payer


def the_card(outcome: str) -> Card:
    return card_for(outcome, number=CARD)


def journal_holds_no_card(gateway: HostedFieldsGateway, card: Card) -> None:
    """The simulator's journal, read as anyone reads it: no card number, grouped or not, and no CVV but masked."""
    answer = requests.get(gateway.root_url + "/_sim/journal", timeout=10)
    assert answer.status_code == 200
    text = answer.text
    assert "tokenize_hosted_fields" in text and "sale_v4" in text and "create_ephemeral_ticket" in text
    digits = re.sub(r"[\s-]", "", text)
    assert digits.count(card.number) == 0 and text.count(card.number[:6] + "******" + card.number[-4:]) >= 1
    cvvs = [value for entry in answer.json()["entries"] for name, value in entry["fields"].items() if "cvv" in name]
    assert cvvs and set(cvvs) == {"***"}


def control_verified(merchant: HostedFieldsMerchant, orderid: str, final: str) -> dict[str, str]:
    """The one return POST of the payer's browser: its four fields and its control, recomputed here."""
    ((fields, verified),) = merchant.returns
    assert verified is True and set(fields) == {"status", "orderid", "merchant_order", "control"}
    assert (fields["status"], fields["orderid"]) == (final, orderid)
    assert fields["control"] == sha1_hex(final + orderid + fields["merchant_order"] + merchant.control_key)
    return fields


def sale_answered(merchant: HostedFieldsMerchant) -> tuple[str, str]:
    """The gateway's sale answer as the merchant decoded it: paynet-order-id a JSON number; (orderid, our id)."""
    (sale,) = merchant.sales
    assert type(sale["paynet-order-id"]) is int and isinstance(sale["merchant-order-id"], str)
    return str(sale["paynet-order-id"]), sale["merchant-order-id"]


# --- in Chromium ------------------------------------------------------------------------------------------------


def page_shows(payer: Any, script: str, what: str) -> Any:
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(payer.driver, WAIT, poll_frequency=0.05).until(lambda d: d.execute_script(script))
    except TimeoutException:
        seen = payer.driver.execute_script("return JSON.stringify(window.SEEN || null)")
        pytest.fail(f"the merchant's page never showed {what} within {WAIT:g} s ({payer.driver.current_url}: {seen})")


def final_status_shown(payer: Any) -> str:
    """The final status on the merchant's page (the checkout, or the return page after 3-D Secure)."""
    script = "var p = document.getElementById('orderStatus'); return p && p.getAttribute('data-final') === 'true'"
    page_shows(payer, script + " && p.getAttribute('data-status');", "a final status")
    assert payer.driver.execute_script("return window.SEEN.violations;") == []  # (the page's CSP held)
    return str(
        payer.driver.execute_script("return document.getElementById('orderStatus').getAttribute('data-status');")
    )


@pytest.mark.parametrize("case", list(OUTCOMES), ids=list(OUTCOMES))
def test_the_examples_flow_in_chromium(
    case: str, merchant: HostedFieldsMerchant, chromium: Any, hosted_fields_simulator: HostedFieldsGateway
):
    outcome, password, final = OUTCOMES[case]
    card = the_card(outcome)
    chromium.open_checkout(merchant.url + "/")
    token = chromium.fill_hosted_fields(card)
    assert token.token.startswith("hf_")
    if password is not None:
        chromium.answer_challenge(password)
    assert final_status_shown(chromium) == final
    orderid, client_orderid = sale_answered(merchant)
    if password is not None:
        fields = control_verified(merchant, orderid, final)
        assert fields["merchant_order"] == client_orderid
        assert chromium.driver.current_url.startswith(merchant.url + "/result?status=" + final)
    else:
        assert merchant.returns == [] and chromium.driver.current_url == merchant.url + "/"
    journal_holds_no_card(hosted_fields_simulator, card)


def test_the_browser_payers_visits_draw_the_iframes_the_tokenize_call_and_the_challenge_masked(
    merchant: HostedFieldsMerchant, chromium: Any
):
    card = the_card("3ds-challenge")
    chromium.open_checkout(merchant.url + "/")
    chromium.fill_hosted_fields(card)
    chromium.answer_challenge()
    assert final_status_shown(chromium) == "approved"
    chromium.collect_visits()
    hops = [(visit.step, visit.to) for visit in chromium.visits]
    assert hops[0] == ("open the merchant's checkout page", "merchant"), hops
    assert chromium.visits[0].shows == "Payment · a merchant following the Hosted Fields examples"
    fields = sorted(step for step, to in hops if step.startswith("load the gateway's card field") and to == "gateway")
    assert fields == [f"load the gateway's card field ({kind})" for kind in ("cvv", "exp", "pan")], hops
    tokenize = hops.index(("tokenize the card (the SDK's call)", "gateway"))
    to_acs = hops.index(("go to the issuer's 3-D Secure page", "acs"))  # the page's location.href, once
    assert tokenize < to_acs < hops.index(("answer the 3-D Secure challenge", "acs"))
    assert sum(1 for visit in chromium.visits if "/acs/" in visit.url and visit.method == "GET") == 1
    assert ("go back to the merchant", "merchant") in hops[to_acs:]
    call = chromium.visits[tokenize]
    assert dict(call.fields)["cardNumber"] == "444444******4448" and dict(call.fields)["cvv"] == "***"
    assert call.status_code == 200 and call.shows == "a hosted fields token"
    shown = repr(chromium.visits) + json.dumps([visit.body for visit in chromium.visits])
    assert CARD not in shown and "4444 4444 4444 4448" not in shown


def png_pixels(png: bytes, last_row: int) -> tuple[int, list[bytes]]:
    """(bytes per pixel, rows of RGB(A) bytes down to ``last_row``) of an 8-bit, non-interlaced PNG, as Chromium
    writes its screenshots."""
    import struct
    import zlib

    width, height, depth, color = struct.unpack(">IIBB", png[16:26])
    assert depth == 8 and color in (2, 6), (depth, color)
    data, at = b"", 8
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        if png[at + 4 : at + 8] == b"IDAT":
            data += png[at + 8 : at + 8 + length]
        at += 12 + length
    raw, step = zlib.decompress(data), 4 if color == 6 else 3
    rows: list[bytes] = []
    previous = bytes(width * step)
    for y in range(min(height, last_row + 1)):
        kind, line = (
            raw[y * (width * step + 1)],
            bytearray(raw[y * (width * step + 1) + 1 : (y + 1) * (width * step + 1)]),
        )
        for x in range(len(line)):
            left = line[x - step] if x >= step else 0
            up, corner = previous[x], previous[x - step] if x >= step else 0
            guess = (
                (0, left, up, (left + up) // 2)[kind]
                if kind < 4
                else min((abs(up - corner), left), (abs(left - corner), up), (abs(left + up - 2 * corner), corner))[1]
            )
            line[x] = (line[x] + guess) & 0xFF
        rows.append(bytes(line))
        previous = bytes(line)
    return step, rows


def dark_pixels(png: bytes, box: dict[str, float]) -> int:
    """The dark pixels (the typed digits) inside ``box`` (a CSS rectangle, one device pixel each) of a screenshot."""
    step, rows = png_pixels(png, int(box["bottom"]))
    left, top = int(box["left"]) + 4, int(box["top"]) + 4
    right, bottom = int(box["right"]) - 4, int(box["bottom"]) - 4
    return sum(1 for y in range(top, min(bottom, len(rows))) for x in range(left, right)
               if sum(rows[y][x * step : x * step + 3]) < 300)  # fmt: skip


def test_no_screenshot_shows_the_card_typed_into_the_iframes(merchant: HostedFieldsMerchant, chromium: Any):
    """After typing, every screenshot of the checkout (a report's, a lost page's) is taken with the card iframes
    hidden, and the page is left as it was; the payer's own eyes (a plain Selenium screenshot) see the digits."""
    shots: list[bytes] = []
    chromium.observers.append(lambda what, png: shots.append(png))
    chromium.open_checkout(merchant.url + "/")
    box = chromium.driver.execute_script("return document.querySelector('#cardNumber iframe').getBoundingClientRect();")
    assert dark_pixels(shots[-1], box) == 0  # the empty fields, as opened
    chromium.fill_hosted_fields(the_card("approved"))
    final_status_shown(chromium)
    chromium.snapshot("paid")
    seen = chromium.driver.get_screenshot_as_png()
    assert dark_pixels(seen, box) > 20 and dark_pixels(shots[-1], box) == 0
    assert chromium.driver.execute_script("return document.querySelector('#cardNumber iframe').style.visibility;") == ""


@pytest.mark.parametrize("outcome", ["approved", "mistyped"])
def test_the_tokenize_answer_is_read_when_chromium_has_forgotten_it(
    merchant: HostedFieldsMerchant, chromium: Any, outcome: str
):
    """A checkout that goes on at once (its back end charges the token and the page leaves): Chromium drops the
    tokenize call's answer when the next document commits, before a busy payer reads it.  The payer reads it from
    the console, where the page wrote it as it arrived (``toolkit.payer.tokenize_hook``)."""
    from selenium.common.exceptions import WebDriverException

    real, forgotten = chromium.driver.execute_cdp_cmd, []

    def forgetful(command: str, arguments: dict[str, Any]) -> Any:
        answer = real(command, arguments)
        if command == "Network.getResponseBody" and re.search(r"hostedFieldsToken|\"code\"", answer.get("body", "")):
            forgotten.append(arguments["requestId"])
            raise WebDriverException("unknown error: No resource with given identifier found")
        return answer

    chromium.driver.execute_cdp_cmd = forgetful
    chromium.open_checkout(merchant.url + "/")
    if outcome == "approved":
        assert chromium.fill_hosted_fields(the_card("approved")).token.startswith("hf_")
    else:
        with pytest.raises(TokenizeRefused) as refused:
            chromium.fill_hosted_fields(the_card("approved"), credit_card_number="4444444444444449")
        assert refused.value.code == 4004
    assert forgotten, "the answer must have been taken from Chromium for this test to say anything"


def test_a_mistyped_card_number_is_refused_in_chromium_with_4004(merchant: HostedFieldsMerchant, chromium: Any):
    chromium.open_checkout(merchant.url + "/")
    with pytest.raises(TokenizeRefused) as refused:
        chromium.fill_hosted_fields(the_card("approved"), credit_card_number="4444444444444449")
    assert (refused.value.code, refused.value.field) == (4004, "cardNumber")
    kind = page_shows(chromium, "return document.getElementById('formError').getAttribute('data-kind');", "an error")
    assert kind == "rejected" and merchant.sales == []  # the page's copy for a mistyped card; no sale was sent


# --- over plain HTTP: the payer does what the page's scripts would --------------------------------------------


def page_config(payer: Payer, merchant: HostedFieldsMerchant) -> dict[str, Any]:
    """window.CONFIG as the checkout page loads it (a fresh ticket per load)."""
    script = payer.session.get(merchant.url + "/config.js", timeout=10)
    assert script.headers["Cache-Control"] == "no-store"
    config: dict[str, Any] = json.loads(script.text.removeprefix("window.CONFIG = ").rstrip().removesuffix(";"))
    return config


def page_polls(payer: Payer, merchant: HostedFieldsMerchant, sale: dict[str, Any], until: Callable) -> Any:
    """The page's /status polls (status.js), until ``until`` holds for what the merchant passed on."""

    def poll() -> HostedStatusResponse:
        query = {"orderId": sale["paynet-order-id"], "clientOrderId": sale["clientOrderId"]}
        answer = payer.session.get(merchant.url + "/status", params=query, timeout=10).json()
        return HostedStatusResponse.from_mapping({name: str(value) for name, value in answer.items()})

    return wait_for_status(poll, PAGE_POLL, until=until, describe="the merchant's /status")


@pytest.fixture
def http_payer(merchant: HostedFieldsMerchant) -> Iterator[Payer]:
    payer = Payer(merchant_urls=[merchant.redirect_url])
    yield payer
    payer.session.close()


@pytest.mark.parametrize("case", ["approved", "challenge-passed"])
def test_the_examples_flow_with_the_http_payer(
    case: str, merchant: HostedFieldsMerchant, http_payer: Payer, hosted_fields_simulator: HostedFieldsGateway
):
    outcome, password, final = OUTCOMES[case]
    card = the_card(outcome)
    page = http_payer.open(merchant.url + "/", "open the merchant's checkout page", "merchant")
    assert page.status_code == 200 and "frame-src " + hosted_fields_simulator.sdk_origin in merchant.policy
    config = page_config(http_payer, merchant)
    assert page_config(http_payer, merchant)["ephemeralTicket"] != config["ephemeralTicket"]  # one per page load
    token = http_payer.tokenize_hosted_fields(config["ephemeralTicket"], card, sdk_url=config["sdkUrl"],
                                              origin=merchant.url)  # fmt: skip
    payment = {"hostedFieldsToken": token.token, "browser": BROWSER_INFO, "customer": CUSTOMER}  # checkout.js's
    paid = http_payer.session.post(merchant.url + "/pay", json=payment, timeout=30).json()
    orderid, client_orderid = sale_answered(merchant)
    assert (str(paid["paynet-order-id"]), paid["clientOrderId"]) == (orderid, client_orderid)
    shown = page_polls(http_payer, merchant, paid, until=lambda status: status.is_final or bool(status.redirect_to))
    if password is not None:
        assert shown.status is Status.PROCESSING and shown.redirect_to
        delivered = http_payer.follow_challenge(shown.redirect_to, password)  # location.href, once
        assert delivered.url == merchant.redirect_url and delivered.status_code == 200  # (303 to /result, followed)
        assert http_payer.visits[-1].redirects == (303,)
        control_verified(merchant, orderid, final)
        shown = page_polls(http_payer, merchant, paid, until=lambda status: status.is_final)  # result.js
    assert shown.status is Status(final) and shown.amount == Decimal("1.00") and shown.last_four_digits == "4448"
    assert shown.cardholder_name == "ANNA WEBER"
    journal_holds_no_card(hosted_fields_simulator, card)


def test_a_forged_return_is_refused_by_the_merchant(merchant: HostedFieldsMerchant, http_payer: Payer):
    """The merchant's own check (what control_verified relies on) refuses a return signed with another key."""
    forged = {"status": "approved", "orderid": "8056020", "merchant_order": "hf-1"}
    forged["control"] = sha1_hex("approved8056020hf-1" + "another-key")
    answer = http_payer.session.post(merchant.redirect_url, data=forged, timeout=10, allow_redirects=False)
    assert answer.status_code == 403 and merchant.returns == [(forged, False)]
