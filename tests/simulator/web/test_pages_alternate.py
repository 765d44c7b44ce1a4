"""``[simulator] page_style = "alternate"``: the payer's pages with other ids, names and layout.

None of the standard pages' ids or field names is there (``payment-form``, ``credit_card_number``,
``challenge-form``, ``password``, ``merchant-redirect``...); the entries under the alternate names (``pan``, one
``MM / YY`` expiry, ``csc``, ``holder``, an ``otp`` code, ``pwd``) are read as the standard ones.  The status
``html`` posts the method data into a hidden frame and the CReq with ``threeDSSessionData`` by a script.  The
payer, which reads pages as a person does, completes them all.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal

import pytest

from toolkit import demo
from toolkit.callbacks import CallbackReceiver
from toolkit.client import GatewayClient
from toolkit.models import Status
from toolkit.payer import Payer
from toolkit.simulator import SimulatorServer
from toolkit.simulator.settings import SettingsError, default_settings, load_settings
from toolkit.testdata import card_for, form_fields, sale_fields, three_ds_v1_card

STANDARD_MARKS = ('id="payment-form"', 'name="credit_card_number"', 'id="challenge-form"', 'name="password"',
                  'id="merchant-redirect"', 'id="acs-form"', 'id="threeds-method-done"', 'id="pay"')  # fmt: skip


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatorServer]:
    with SimulatorServer(default_settings(page_style="alternate")) as running:
        yield running


@pytest.fixture(scope="module")
def client(server: SimulatorServer) -> Iterator[GatewayClient]:
    with GatewayClient(server.client_config()) as gateway:
        yield gateway


@pytest.fixture(scope="module")
def receiver() -> Iterator[CallbackReceiver]:
    with CallbackReceiver(demo.CONTROL_KEY) as running:
        yield running


@pytest.fixture
def payer(receiver: CallbackReceiver) -> Iterator[Payer]:
    browser = Payer(merchant_urls=[receiver.redirect_url])
    yield browser
    browser.session.close()


def no_standard_marks(html: str) -> None:
    found = [mark for mark in STANDARD_MARKS if mark in html]
    assert not found, f"standard ids or names on an alternate page: {found}"


def test_a_hosted_page_is_paid_with_a_combined_expiry(
    client: GatewayClient, receiver: CallbackReceiver, payer: Payer
) -> None:
    form = client.sale_form(form_fields(redirect_url=receiver.redirect_url))
    page = payer.open(form.redirect_url)
    no_standard_marks(page.html)
    assert 'name="exp"' in page.html and 'placeholder="MM / YY"' in page.html
    delivered = payer.return_to_merchant(payer.enter_card(form.redirect_url, card_for("approved")))
    assert delivered.fields["status"] in ("approved", "processing")
    for seen in payer.history:
        no_standard_marks(seen.html)
    assert receiver.wait_for_redirect(orderid=form.orderid).control_ok is True
    assert client.wait_for_final_status(form).status is Status.APPROVED


def test_a_transfer_page_takes_the_card_to_send_to_under_its_own_name(
    client: GatewayClient, receiver: CallbackReceiver, payer: Payer
) -> None:
    form = client.transfer_form(form_fields("transfer_form", redirect_url=receiver.redirect_url))
    page = payer.open(form.redirect_url)
    no_standard_marks(page.html)
    assert 'name="to_pan"' in page.html and 'name="destination-card-no"' not in page.html
    refused = payer.fill_payment_page(page, card_for("approved"), destination="4444555566661112")
    assert re.search(r'class="err" role="alert">Card number to receive the money fails the Luhn check<', refused.html)
    delivered = payer.return_to_merchant(
        payer.fill_payment_page(refused, card_for("approved"), destination="4444555566661111")
    )
    assert delivered.fields["status"] in ("approved", "processing")
    status = client.wait_for_final_status(form)
    assert (status.status, status.transaction_type) == (Status.APPROVED, "transfer")


def test_a_form_without_redirect_url_ends_on_the_result_page(client: GatewayClient, payer: Payer) -> None:
    form = client.sale_form(form_fields(redirect_url=None))
    result = payer.enter_card(form.redirect_url, card_for("approved"))
    no_standard_marks(result.html)
    assert not result.forms and "has no <code>redirect_url</code>" in result.html and form.orderid in result.html
    assert client.wait_for_final_status(form).status is Status.APPROVED


def test_field_errors_are_said_in_words_and_the_entries_kept(client: GatewayClient, payer: Payer) -> None:
    form = client.sale_form(form_fields())
    card = card_for("approved")
    refused = payer.fill_payment_page(payer.open(form.redirect_url), card, credit_card_number="4538977399606733")
    assert re.search(r'class="err" role="alert">Card number fails the Luhn check<', refused.html)
    assert f'value="{card.expire_month} / {card.expire_year[2:]}"' in refused.html  # (the expiry typed is kept)
    assert card.number[:6] not in refused.html


def test_a_3ds_hosted_page_posts_the_creq_itself_and_takes_an_otp(
    client: GatewayClient, receiver: CallbackReceiver, payer: Payer
) -> None:
    form = client.sale_form(form_fields(redirect_url=receiver.redirect_url))
    page = payer.enter_card(form.redirect_url, card_for("3ds-challenge"))  # the self-submitting CReq is followed
    assert payer.shows_challenge(page) and 'autocomplete="one-time-code"' in page.html and 'name="otp"' in page.html
    assert any('name="creq"' in seen.html for seen in payer.history)
    payer.return_to_merchant(payer.answer_challenge(page))
    assert client.wait_for_final_status(form).status is Status.APPROVED


def test_the_api_flow_method_post_challenge_script_and_1_0_2(
    client: GatewayClient, receiver: CallbackReceiver, payer: Payer
) -> None:
    ack = client.sale(sale_fields(card=card_for("3ds-challenge"), redirect_url=receiver.redirect_url))
    method = client.wait_for_payer_or_final(ack)
    assert 'name="threeDSMethodData"' in method.html and 'target="threeDSMethodIframe"' in method.html
    payer.load_method_url(method)
    client.upload_method_url_result(client_orderid=ack.client_orderid, orderid=ack.orderid, threeDSCompInd="Y")
    challenge = client.wait_for_payer_or_final(ack)
    assert 'name="threeDSSessionData"' in challenge.html and "onload = function" in challenge.html
    back = payer.answer_challenge(payer.follow(challenge))
    client.upload_cres_result(client_orderid=ack.client_orderid, orderid=ack.orderid,
                              cres=payer.redirect_fields(back)["cres"])  # fmt: skip
    assert client.wait_for_final_status(ack).status is Status.APPROVED
    v1 = client.sale(sale_fields(card=three_ds_v1_card(), amount=Decimal("1.00"), redirect_url=receiver.redirect_url))
    acs = payer.follow(client.wait_for_payer_or_final(v1))
    no_standard_marks(acs.html)
    assert 'name="pwd"' in acs.html and 'name="TermUrl"' in client.wait_for_payer_or_final(v1).html
    fields = payer.redirect_fields(payer.answer_challenge(acs))  # gateway-run: the gateway applied the PaRes
    assert fields["status"] == "approved" and "pares" not in fields
    assert client.status(client_orderid=v1.client_orderid, orderid=v1.orderid).status is Status.APPROVED


def test_the_gateway_runs_the_alternate_method_post_and_challenge_itself(
    client: GatewayClient, receiver: CallbackReceiver, payer: Payer
) -> None:
    """Behaviour 12 with the alternate html: the method form posted into the frame, then on to the gateway."""
    ack = client.sale(sale_fields(card=card_for("3ds-challenge"), redirect_url=receiver.redirect_url))
    acs = payer.follow(client.wait_for_payer_or_final(ack))
    no_standard_marks(acs.html)
    assert payer.shows_challenge(acs) and 'name="otp"' in acs.html
    assert [visit.step for visit in payer.visits][:2] == [
        "load the 3-D Secure method URL",
        "submit the form of the status html",
    ]
    delivered = payer.return_to_merchant(payer.answer_challenge(acs))
    assert delivered.fields["status"] == "approved" and "cres" not in delivered.fields
    assert client.status(client_orderid=ack.client_orderid, orderid=ack.orderid).get("three-ds-comp-ind") == "Y"


def test_page_style_is_checked(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "sim.toml"
    path.write_text('[simulator]\npage_style = "fancy"\n')
    with pytest.raises(SettingsError, match="page_style must be one of standard, alternate, got 'fancy'"):
        load_settings(path)
