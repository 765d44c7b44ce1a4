"""Hosted payment pages: the payer fills the gateway's page and comes back to the merchant."""

from pytest_bdd import parsers, scenarios, then

from toolkit.payer import Payer

scenarios("../features/hosted_forms")


@then(parsers.parse('the payment page shows an error for "{field}"'))
def page_error(payer: Payer, field: str) -> None:
    errors = payer.history[-1].field_errors()
    assert field in errors, f"errors shown: {errors}"
