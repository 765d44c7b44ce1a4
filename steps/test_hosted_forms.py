"""Hosted payment pages: the payer fills the gateway's page and comes back to the merchant."""

from pytest_bdd import parsers, scenarios, then

from toolkit.flows import Order
from toolkit.payer import Payer

scenarios("../features/hosted_forms")


@then(parsers.parse('the payment page shows an error for "{field}"'))
def page_error(payer: Payer, field: str) -> None:
    errors = payer.history[-1].field_errors()
    assert field in errors, f"errors shown: {errors}"


@then("the payment page says it has expired")
def page_expired(payer: Payer, order: Order) -> None:
    page = payer.open(order.redirect_url)
    assert page.status_code == 410 and "has expired" in page.html, f"HTTP {page.status_code}: {page.html[:300]}"
