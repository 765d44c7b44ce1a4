"""Both payers on pages they have never seen (``tests/payer_pages.py``): other field names, a combined expiry,
selects, a form in a frame, an OTP ACS, an approve-only ACS, 3-D Secure 1.0.2 and 2.x posts, script and
``onload`` auto-submits, a meta refresh, the method step posted into a hidden frame; and a page the payer
cannot read, which fails with what it looked for, the page's forms (masked) and the page for the report.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.payer_pages import OTP_CODE, WEIRD_DIGITS, PagesServer, serving
from toolkit.masking import mask_text
from toolkit.models import StatusResponse
from toolkit.payer import Payer, PayerError
from toolkit.payer.forms import Page
from toolkit.payer.reading import PayerSettings
from toolkit.testdata import Card, card_for

if TYPE_CHECKING:
    from toolkit.payer.browser import BrowserPayer

APPROVED, CHALLENGE = card_for("approved"), card_for("3ds-challenge")
OTP = PayerSettings(challenge_password=OTP_CODE)


@pytest.fixture(scope="module")
def pages() -> Iterator[PagesServer]:
    with serving() as running:
        yield running


@pytest.fixture
def lost() -> list[tuple[Page, str]]:
    return []


@pytest.fixture
def payer(pages: PagesServer, lost: list[tuple[Page, str]]) -> Iterator[Payer]:
    browser = Payer(merchant_urls=[pages.merchant_url], lost_observers=[lambda page, why: lost.append((page, why))])
    yield browser
    browser.session.close()


def status_with(html: str) -> StatusResponse:
    return StatusResponse.from_mapping({"type": "status-response", "status": "processing", "html": html})


def returned(pages: PagesServer, count: int, timeout: float = 10.0) -> dict[str, str]:
    """The ``count``-th thing the payer brought back to the merchant (a poll with a deadline: the browser's
    own scripts take it there)."""
    deadline = time.monotonic() + timeout
    while len(pages.recorded.returns) < count:
        assert time.monotonic() < deadline, f"nothing reached the merchant: {pages.recorded.returns}"
        time.sleep(0.02)
    return pages.recorded.returns[count - 1]


# --- the payer over HTTP ---------------------------------------------------------------------------------


@pytest.mark.parametrize("style", ["combined", "selects", "framed"])
def test_a_hosted_page_in_another_style_is_paid(pages: PagesServer, payer: Payer, style: str) -> None:
    before = len(pages.recorded.returns)
    delivered = payer.pay_on_hosted_page(pages.hosted(style), APPROVED)
    assert (delivered.url, delivered.fields["status"]) == (pages.merchant_url, "approved")
    assert returned(pages, before + 1)["status"] == "approved"


def test_the_expiry_is_typed_as_each_page_asks(pages: PagesServer, payer: Payer) -> None:
    sent: list[str] = []
    payer.session.hooks["response"].append(lambda response, **_: sent.append(response.request.body or ""))
    payer.pay_on_hosted_page(pages.hosted("combined"), APPROVED)
    payer.pay_on_hosted_page(pages.hosted("selects"), APPROVED)
    combined = next(body for body in sent if "pan=" in body)
    selects = next(body for body in sent if "card%5Bnumber%5D" in body)
    assert f"exp=12+%2F+{APPROVED.expire_year[2:]}" in combined and "cvc=123" in combined
    assert "card%5Bexp_month%5D=12" in selects and f"card%5Bexp_year%5D={APPROVED.expire_year[2:]}" in selects


@pytest.mark.parametrize(("acs", "settings"), [("otp", OTP), ("approve", PayerSettings())], ids=["otp", "approve"])
def test_a_hosted_page_then_an_acs_in_another_style(
    pages: PagesServer, lost: list[tuple[Page, str]], acs: str, settings: PayerSettings
) -> None:
    payer = Payer(merchant_urls=[pages.merchant_url], settings=settings)
    before = len(pages.recorded.returns)
    page = payer.enter_card(pages.hosted("combined", acs), CHALLENGE)
    assert payer.shows_challenge(page), page.url
    delivered = payer.return_to_merchant(payer.answer_challenge(page))
    assert delivered.fields["status"] == "approved" and returned(pages, before + 1)["status"] == "approved"


def test_a_refused_card_is_said_with_the_pages_own_words(pages: PagesServer, payer: Payer) -> None:
    mistyped = Card("4111111111111112", "12", "2030", "123", "ANN SMITH")  # fails the Luhn check
    with pytest.raises(PayerError, match=r"the payment page refused the card: .*The card number is not valid"):
        payer.enter_card(pages.hosted("combined"), mistyped)


@pytest.mark.parametrize(
    ("style", "result", "expected"),
    [("v1", "PaRes", "pares-approved"), ("v2", "cres", "cres-approved")],
)
def test_a_3ds_acs_reached_from_a_status_html_is_answered(
    pages: PagesServer, payer: Payer, style: str, result: str, expected: str
) -> None:
    before = len(pages.recorded.returns)
    page = payer.follow(status_with(pages.status_html(style)))  # the auto-submitted creq / PaReq
    assert payer.shows_challenge(page)
    back = payer.answer_challenge(page)
    assert payer.redirect_fields(back)[result] == expected
    payer.return_to_merchant(back)
    assert returned(pages, before + 1)[result] == expected


def test_the_wrong_password_fails_and_an_approve_only_acs_cannot_fail(pages: PagesServer, payer: Payer) -> None:
    back = payer.answer_challenge(payer.follow(status_with(pages.status_html("v2"))), "not-the-password")
    assert payer.redirect_fields(back)["cres"] == "cres-declined"
    with pytest.raises(PayerError, match="no password input and no decline button"):
        payer.answer_challenge(payer.follow(status_with(pages.status_html("approve"))), "not-the-password")


def test_the_method_step_posted_into_a_hidden_frame(pages: PagesServer, payer: Payer) -> None:
    before = len(pages.recorded.method_loads)
    payer.load_method_url(status_with(pages.status_html("method")))
    assert pages.recorded.method_loads[before] == {"threeDSMethodData": "eyJ0aHJlZURTU2VydmVyVHJhbnNJRCI6IjEifQ"}


def test_a_page_it_cannot_read_fails_saying_what_it_looked_for(
    pages: PagesServer, payer: Payer, lost: list[tuple[Page, str]]
) -> None:
    with pytest.raises(PayerError) as caught:
        payer.fill_payment_page(payer.open(f"{pages.base}/weird"), APPROVED)
    message = str(caught.value)
    assert "no payment form: looked for a form with a card-number input" in message
    assert "has form number 1 (GET http://127.0.0.1:" in message and "inputs q (text)" in message
    assert "buttons Search" in message and WEIRD_DIGITS not in message and mask_text(WEIRD_DIGITS) in message
    assert caught.value.page is not None and lost and lost[-1][0].url.endswith("/weird") and lost[-1][1] == message


# --- the payer in a real browser ---------------------------------------------------------------------------

browser = pytest.mark.skipif(os.environ.get("GATEKIT_BROWSER") == "off", reason="GATEKIT_BROWSER=off")


@pytest.fixture(scope="module")
def chromium(pages: PagesServer) -> Iterator[BrowserPayer]:
    pytest.importorskip("selenium")
    from toolkit.payer.browser import BrowserPayer, BrowserUnavailable

    try:
        with BrowserPayer(wait=8, merchant_urls=[pages.merchant_url], settings=OTP) as running:
            yield running
    except BrowserUnavailable as exc:
        pytest.skip(str(exc))


@browser
@pytest.mark.parametrize("style", ["combined", "selects", "framed"])
def test_the_browser_pays_on_a_hosted_page_in_another_style(
    pages: PagesServer, chromium: BrowserPayer, style: str
) -> None:
    before = len(pages.recorded.returns)
    chromium.open(pages.hosted(style))
    chromium.fill_payment_page(APPROVED)
    assert returned(pages, before + 1)["status"] == "approved"


@browser
@pytest.mark.parametrize("acs", ["otp", "approve"])
def test_the_browser_passes_an_acs_in_another_style_after_the_hosted_page(
    pages: PagesServer, chromium, acs: str
) -> None:  # type: ignore[no-untyped-def]
    before = len(pages.recorded.returns)
    chromium.open(pages.hosted("combined", acs))
    chromium.fill_payment_page(CHALLENGE)
    chromium.answer_challenge()  # the profile's code for the OTP page (OTP settings); the approve page asks none
    assert returned(pages, before + 1)["status"] == "approved"


@browser
@pytest.mark.parametrize(("style", "result"), [("v1", "PaRes"), ("v2", "cres")])
def test_the_browser_answers_a_3ds_acs_reached_from_a_status_html(
    pages: PagesServer, chromium, style: str, result: str
) -> None:  # type: ignore[no-untyped-def]
    before = len(pages.recorded.returns)
    chromium.settings = PayerSettings()  # these pages take the outcome table's password
    try:
        chromium.open(f"{pages.base}/status-html/{style}")  # its script posts the creq / PaReq to the ACS
        chromium.answer_challenge()
    finally:
        chromium.settings = OTP
    assert returned(pages, before + 1)[result].endswith("-approved")


@browser
def test_the_browser_fails_on_a_page_it_cannot_read_with_the_page_and_a_screenshot(pages: PagesServer) -> None:
    from toolkit.payer.browser import BrowserPayer

    lost: list[tuple[Page, str]] = []
    shots: list[tuple[str, bytes]] = []
    with BrowserPayer(wait=1, observers=[lambda what, png: shots.append((what, png))],
                      lost_observers=[lambda page, why: lost.append((page, why))]) as chromium:  # fmt: skip
        chromium.open(f"{pages.base}/weird")
        with pytest.raises(PayerError, match=r"no payment form: looked for .* \(waited 1 s for a payment form\)"):
            chromium.fill_payment_page(APPROVED)
    assert lost and "inputs q (text)" in lost[-1][1] and WEIRD_DIGITS not in lost[-1][1]
    assert (
        shots[-1][0].startswith("Screenshot after the payer could not find its way") and shots[-1][1][:4] == b"\x89PNG"
    )
