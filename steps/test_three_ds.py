"""3-D Secure sale: method step, challenge, 1.0.2, and the uploads of their results."""

from pytest_bdd import parsers, scenarios, then, when

from toolkit.certify.choices import one_of
from toolkit.flows import METHOD_INDICATORS, Merchant, Order
from toolkit.payer import Payer

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
    page = payer.follow(merchant.payer_step(order))
    payer.return_to_merchant(payer.answer_challenge(page))


@when("the merchant uploads the challenge result the payer brought back")
def upload_cres(merchant: Merchant, order: Order) -> None:
    merchant.upload_challenge_result(order, merchant.redirect_for(order))


@when("the merchant uploads the authentication result the payer brought back")
def upload_pares(merchant: Merchant, order: Order) -> None:
    merchant.upload_authentication_result(order, merchant.redirect_for(order))


@then("the payer is sent to the 3-D Secure challenge")
def sent_to_challenge(merchant: Merchant, order: Order, scene: Scene) -> None:
    scene.status = merchant.payer_step(order)
    assert scene.status.needs_payer and scene.status.redirect_to, scene.status.raw


@then("the payer was never asked to act")
def no_payer_step(merchant: Merchant, order: Order) -> None:
    status = merchant.final_status(order)
    assert not (status.html or status.redirect_to or status.get("three-ds-method-url")), status.raw
    assert not status.get("three-ds-version"), status.raw


@then(parsers.parse('the status shows the method step indicator "{indicator}"'))
def method_indicator(scene: Scene, indicator: str) -> None:
    assert scene.status is not None
    assert scene.status.get("three-ds-comp-ind") == indicator, scene.status.raw
