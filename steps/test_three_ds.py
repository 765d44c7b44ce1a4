"""3-D Secure sale: the gateway-run road (the status page shown, nothing uploaded), and the merchant-run one (method
step, challenge, 1.0.2, and the uploads of their results)."""

from pytest_bdd import parsers, scenarios, then, when

from toolkit.certify import reporting
from toolkit.certify.choices import one_of
from toolkit.certify.expect import Words, expect, expect_fields, fail
from toolkit.flows import METHOD_INDICATORS, Merchant, Order
from toolkit.payer import Payer
from toolkit.payer.browser import BrowserPayer

from .conftest import Scene

scenarios("../features/three_ds")


@when("the payer's browser completes the 3-D Secure method step")
def method_step(merchant: Merchant, payer: Payer, order: Order) -> None:
    payer.load_method_url(merchant.payer_step(order))  # PayerError when there is no method frame or it fails


@when(one_of("the merchant reports the method step as {how}", how=METHOD_INDICATORS, noun="method step outcome"))
def report_method(merchant: Merchant, order: Order, how: str) -> None:
    merchant.report_method(order, how)


@when("the payer authenticates on the issuer's 3-D Secure 1.0.2 page")
def authenticate_v1(merchant: Merchant, payer: Payer, order: Order) -> None:
    """Merchant-run: the merchant's own page sends the PaReq with its own TermUrl; the PaRes comes back to it."""
    page = payer.show_html(merchant.own_authentication_page(order, merchant.payer_step(order)))
    payer.return_to_merchant(payer.answer_challenge(page))


@when("the merchant shows the 3-D Secure page of the status to the payer's browser")
def show_status_page(merchant: Merchant, payer: Payer, order: Order) -> None:
    """Gateway-run, the shop plugins' way: the status html as it is; it goes on by itself to the challenge, or,
    without one, back to the merchant."""
    page = payer.show_html(merchant.payer_step(order).html)
    if not payer.shows_challenge(page):
        payer.return_to_merchant(page)


@when(
    parsers.re(
        r"the merchant shows the 3-D Secure page of the status in a real browser, where the payer answers the "
        r"challenge with the (?P<which>right|wrong) password"
    )
)
def show_status_page_in_browser(merchant: Merchant, browser_payer: BrowserPayer, order: Order, which: str) -> None:
    browser_payer.show_html(merchant.payer_step(order).html)
    browser_payer.answer_challenge(browser_payer.settings.password(which))


@when("the merchant uploads the challenge result the payer brought back")
def upload_cres(merchant: Merchant, order: Order) -> None:
    merchant.upload_challenge_result(order, merchant.redirect_for(order))


@when("the merchant uploads the authentication result the payer brought back")
def upload_pares(merchant: Merchant, order: Order) -> None:
    merchant.upload_authentication_result(order, merchant.redirect_for(order))


@then("the payer is sent to the 3-D Secure challenge")
def sent_to_challenge(merchant: Merchant, order: Order, scene: Scene) -> None:
    scene.status = merchant.payer_step(order)
    if not (scene.status.needs_payer and scene.status.redirect_to):
        said = Words(f"{scene.status.status.value} and no redirect-to")
        fail("the status", Words("a redirect-to the challenge"), said, about=order)


@then("the payer was never asked to act")
def no_payer_step(merchant: Merchant, order: Order) -> None:
    status = merchant.final_status(order)
    shown = {"html": status.html, "redirect-to": status.redirect_to, "three-ds-method-url":
             status.get("three-ds-method-url"), "three-ds-version": status.get("three-ds-version")}  # fmt: skip
    asked = [name for name, value in shown.items() if value]
    if asked:
        fail("the status", Words("nothing for the payer to do"), Words(", ".join(asked)), about=order)


@then(parsers.parse('the status shows the method step indicator "{indicator}"'))
def method_indicator(scene: Scene, indicator: str) -> None:
    expect("the method step indicator", indicator, scene.status.get("three-ds-comp-ind") if scene.status else None)


@then(parsers.parse('the payer comes back to the merchant with a signed "{status}"'))
def comes_back(merchant: Merchant, order: Order, status: str) -> None:
    """Gateway-run: the gateway sends the payer back with the final status, not a 3-D Secure result to upload."""
    redirect = merchant.redirect_for(order)
    reporting.record_arrival(redirect)
    expect_fields("the payer's redirect", redirect, about=redirect.summary(), control_ok=True, status=status)
    uploads = sorted({"cres", "pares"} & set(redirect.params))
    if uploads:
        fail("the payer's redirect", Words("the final status"), Words(f"a result to upload ({', '.join(uploads)})"))
