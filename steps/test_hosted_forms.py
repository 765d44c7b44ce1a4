"""Hosted payment pages: the payer fills the gateway's page and comes back to the merchant."""

from pytest_bdd import parsers, scenarios, then

from toolkit.flows import Order
from toolkit.payer import Payer, reading

scenarios("../features/hosted_forms")


# What a payment page calls each field, for pages that say what is wrong in words rather than by field id.
FIELD_WORDS = {"credit_card_number": "card number", "cvv2": "cvv", "expire_month": "month", "expire_year": "year"}


@then(parsers.parse('the payment page shows an error for "{field}"'))
def page_error(payer: Payer, field: str) -> None:
    """An error by field id (``error-<field>``), or, on a page that has none, an error that names the field."""
    page = payer.history[-1]
    errors = page.field_errors()
    if errors:
        assert field in errors, f"errors shown: {errors}"
        return
    texts = reading.error_texts(page)
    assert any(FIELD_WORDS.get(field, field) in text.lower() for text in texts), f"errors shown: {texts}"


@then("the payment page says it has expired")
def page_expired(payer: Payer, order: Order) -> None:
    page = payer.open(order.redirect_url)
    assert page.status_code == 410 and "has expired" in page.html, f"HTTP {page.status_code}: {page.html[:300]}"
