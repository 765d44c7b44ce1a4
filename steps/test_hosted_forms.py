"""Hosted payment pages: the payer fills the gateway's page and comes back to the merchant."""

from pytest_bdd import parsers, scenarios, then, when

from toolkit.certify.expect import Words, fail
from toolkit.flows import Order
from toolkit.payer import Payer, reading
from toolkit.payer.browser import BrowserPayer
from toolkit.testdata.cards import card_for
from toolkit.testdata.outcomes import EXAMPLE_CARDS

scenarios("../features/hosted_forms")

RECEIVING_CARD = EXAMPLE_CARDS[1]  # a public example card (behaviour section 6): any Luhn-valid number receives


@when("the payer enters an approved card and the card that receives the money on the transfer page")
def enter_transfer(payer: Payer, order: Order) -> None:
    payer.return_to_merchant(payer.enter_card(order.redirect_url, card_for("approved"), RECEIVING_CARD))


@when("the payer enters an approved card and the card that receives the money on the transfer page in a real browser")
def enter_transfer_in_browser(browser_payer: BrowserPayer, order: Order) -> None:
    browser_payer.open(order.redirect_url)
    browser_payer.fill_payment_page(card_for("approved"), RECEIVING_CARD)


# What a payment page calls each field, for pages that say what is wrong in words rather than by field id.
FIELD_WORDS = {"credit_card_number": "card number", "cvv2": "cvv", "expire_month": "month", "expire_year": "year"}


@then(parsers.parse('the payment page shows an error for "{field}"'))
def page_error(payer: Payer, field: str) -> None:
    """An error by field id (``error-<field>``), or, on a page that has none, an error that names the field."""
    page = payer.history[-1]
    errors = page.field_errors()
    if errors:
        if field not in errors:
            fail("the fields in error", Words(f'"{field}" among them'), Words(", ".join(errors)))
        return
    texts = reading.error_texts(page)
    if not any(FIELD_WORDS.get(field, field) in text.lower() for text in texts):
        shown = "; ".join(f'"{text}"' for text in texts) or "none"
        fail("the page's errors", Words(f'one that names "{FIELD_WORDS.get(field, field)}"'), Words(shown))


@then("the payment page says it has expired")
def page_expired(payer: Payer, order: Order) -> None:
    page = payer.open(order.redirect_url)
    if page.status_code != 410 or "has expired" not in page.html:
        fail("the payment page", Words('HTTP 410 saying "has expired"'), Words(f"HTTP {page.status_code}"),
             about=page.html[:300])  # fmt: skip
