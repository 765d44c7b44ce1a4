"""toolkit.payer: the cardholder's browser over plain HTTP, against the real simulator on a loopback port.

The merchant is the demo merchant's ``GatewayClient``; its ``redirect_url`` is a ``CallbackReceiver``,
so that ``return_to_merchant`` delivers somewhere real and the signed outcome is verified there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from decimal import Decimal

import pytest

from toolkit import demo
from toolkit.callbacks import CallbackReceiver
from toolkit.client import GatewayClient
from toolkit.models import AsyncResponse, FormResponse, Status, StatusResponse
from toolkit.payer import PASSWORDS, Delivered, Payer, PayerError
from toolkit.payer.forms import Form, Page
from toolkit.payer.visits import Visit as PageVisit
from toolkit.recording import Recorder
from toolkit.signing import verify_callback_control
from toolkit.simulator import SimulatorServer
from toolkit.testdata import CHALLENGE_PASSWORD, Card, card_for, form_fields, sale_fields, three_ds_v1_card


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatorServer]:
    with SimulatorServer() as running:
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
def payer() -> Iterator[Payer]:
    browser = Payer()
    yield browser
    browser.session.close()


def hosted_page(client: GatewayClient, receiver: CallbackReceiver, operation: str = "sale_form") -> FormResponse:
    form = client.call(operation, form_fields(operation, redirect_url=receiver.redirect_url))
    assert isinstance(form, FormResponse)
    return form


def start_sale(client: GatewayClient, receiver: CallbackReceiver, card: Card) -> tuple[AsyncResponse, StatusResponse]:
    """A sale of 1.00 EUR and the first status that asks something of the payer."""
    ack = client.sale(sale_fields(card=card, amount=Decimal("1.00"), redirect_url=receiver.redirect_url))
    status = client.wait_for_payer_or_final(ack)
    assert status.needs_payer, status.raw
    return ack, status


def ids(ack: AsyncResponse) -> dict[str, str]:
    return {"client_orderid": ack.client_orderid, "orderid": ack.orderid}


# --- pages ------------------------------------------------------------------------------------------


def test_open_reads_the_page_and_keeps_it_in_the_history(
    client: GatewayClient, receiver: CallbackReceiver, payer: Payer
) -> None:
    form = hosted_page(client, receiver)

    page = payer.open(form.redirect_url)

    assert (page.url, page.status_code, page.redirects) == (form.redirect_url, 200, ())
    assert page.form("payment-form").action == form.redirect_url and page.text("amount") == "10.42"
    assert payer.history == [page]


def test_submit_sends_a_get_form_as_a_query(server: SimulatorServer, payer: Payer) -> None:
    page = payer.submit(Form("search", f"{server.base_url}/form/unknown-token", "get", {"a": "1"}), {"b": "2"})

    assert page.url == f"{server.base_url}/form/unknown-token?a=1&b=2" and page.status_code == 404


def test_redirects_that_led_to_a_page_are_kept(client: GatewayClient, receiver: CallbackReceiver, payer: Payer) -> None:
    page = payer.open(hosted_page(client, receiver).redirect_url)

    acs = payer.fill_payment_page(page, card_for("3ds-challenge"))

    assert acs.redirects == (303,) and acs.has("challenge-form") and "/3ds/v2/acs/" in acs.url


# --- hosted payment pages ---------------------------------------------------------------------------


def test_fill_payment_page_enters_only_the_fields_the_page_has(
    client: GatewayClient, receiver: CallbackReceiver, payer: Payer
) -> None:
    sent: list[str] = []
    payer.session.hooks["response"].append(lambda response, **_: sent.append(response.request.body or ""))
    form = hosted_page(client, receiver, "payout_form")

    done = payer.fill_payment_page(payer.open(form.redirect_url), card_for("approved"))

    assert len(sent) == 2 and "credit_card_number=" in sent[1] and "cvv2" not in sent[1]  # a payout asks no CVV2
    assert payer.redirect_fields(done)["status"] == "approved"


def test_fill_payment_page_overrides_show_the_field_errors(
    client: GatewayClient, receiver: CallbackReceiver, payer: Payer
) -> None:
    page = payer.open(hosted_page(client, receiver).redirect_url)

    refused = payer.fill_payment_page(page, card_for("approved"), credit_card_number="4538977399606733")

    assert refused.status_code == 200 and list(refused.field_errors()) == ["credit_card_number"]
    assert "Luhn" in refused.field_errors()["credit_card_number"]


def test_pay_on_hosted_page_passes_the_challenge_and_returns_to_the_merchant(
    client: GatewayClient, receiver: CallbackReceiver, payer: Payer
) -> None:
    form = hosted_page(client, receiver)

    delivered = payer.pay_on_hosted_page(form.redirect_url, card_for("3ds-challenge"))

    assert delivered.url == receiver.redirect_url and delivered.status_code == 200
    assert delivered.fields["status"] == "approved" and delivered.fields["orderid"] == form.orderid
    assert receiver.wait_for_redirect(orderid=form.orderid).control_ok is True
    assert client.status(ids(form)).status is Status.APPROVED


def test_the_payer_sends_money_to_another_card_on_the_transfer_page(
    client: GatewayClient, receiver: CallbackReceiver, payer: Payer
) -> None:
    """Behaviour section 12: the transfer page asks for the card the money comes from and the one it goes to."""
    form = hosted_page(client, receiver, "transfer_form")

    delivered = payer.pay_on_hosted_page(form.redirect_url, card_for("approved"), destination="4444555566661111")

    assert delivered.fields["status"] == "approved" and delivered.fields["orderid"] == form.orderid
    assert receiver.wait_for_redirect(orderid=form.orderid).control_ok is True
    status = client.wait_for_final_status(form)
    assert (status.status, status.transaction_type, status.last_four_digits) == (
        Status.APPROVED,
        "transfer",
        card_for("approved").number[-4:],
    )
    paid = next(visit for visit in payer.visits if (visit.action or {}).get("action") == "pay")
    assert dict(paid.fields)["destination-card-no"].count("*") == 6 and "4444555566661111" not in repr(payer.visits)
    assert (paid.action or {})["destination"] == "444455******1111"


def test_pay_on_hosted_page_stops_at_a_refused_card(
    client: GatewayClient, receiver: CallbackReceiver, payer: Payer
) -> None:
    expired = dataclasses.replace(card_for("approved"), expire_month="13")

    with pytest.raises(PayerError, match=r"the payment page refused the card: .*expire_month"):
        payer.pay_on_hosted_page(hosted_page(client, receiver).redirect_url, expired)


# --- 3-D Secure, API flow -----------------------------------------------------------------------------


def test_three_ds_v2_method_step_challenge_and_return(
    client: GatewayClient, receiver: CallbackReceiver, payer: Payer
) -> None:
    ack, status = start_sale(client, receiver, card_for("3ds-challenge"))
    assert payer.html_page(status).iframes == [status.get("three-ds-method-url")]
    assert payer.load_method_url(status).has("threeds-method-done")
    client.upload_method_url_result(ids(ack), threeDSCompInd="Y")

    page = payer.follow(client.wait_for_payer_or_final(ack))  # redirect-to: the ACS page
    back = payer.answer_challenge(page)
    delivered = payer.return_to_merchant(back)

    assert page.has("challenge-form") and payer.redirect_fields(back) == delivered.fields
    assert delivered == Delivered(receiver.redirect_url, delivered.fields, 200)
    assert verify_callback_control(delivered.fields, demo.CONTROL_KEY)
    client.upload_cres_result(ids(ack), cres=delivered.fields["cres"])
    assert client.wait_for_final_status(ack).status is Status.APPROVED


def test_follow_takes_the_gateway_run_road_when_the_merchant_uploads_nothing(
    client: GatewayClient, receiver: CallbackReceiver
) -> None:
    """Behaviour 12: the status html loads the method URL in its frame and goes on to the gateway by itself; the
    ACS returns the payer to the gateway, which sends it back to the merchant with the final status."""
    ack, status = start_sale(client, receiver, card_for("3ds-challenge"))
    assert not status.redirect_to
    payer = Payer(merchant_urls=[receiver.redirect_url])
    with payer.session:
        acs = payer.follow(status)
        back = payer.answer_challenge(acs)
        delivered = payer.return_to_merchant(back)

    assert acs.has("challenge-form") and delivered.fields["status"] == "approved" and "cres" not in delivered.fields
    assert verify_callback_control(delivered.fields, demo.CONTROL_KEY)
    assert client.status(ids(ack)).status is Status.APPROVED  # nothing uploaded
    hops = [(visit.step, visit.to) for visit in payer.visits]
    assert hops == [
        ("load the 3-D Secure method URL", "acs"),
        ("submit the form of the status html", "gateway"),  # on to the gateway, which posts the CReq on
        ("the page submits itself", "acs"),
        ("answer the 3-D Secure challenge", "acs"),
        ("the page submits itself", "gateway"),  # the ACS returns the payer to the gateway with the CRes
        ("go back to the merchant", "merchant"),
    ]


@pytest.mark.parametrize(
    ("password", "expected"),
    [(CHALLENGE_PASSWORD, Status.APPROVED), ("wrong", Status.DECLINED)],
    ids=["right", "wrong"],
)
def test_follow_auto_submits_the_html_form_without_redirect_to(
    client: GatewayClient, receiver: CallbackReceiver, payer: Payer, password: str, expected: Status
) -> None:
    ack, status = start_sale(client, receiver, three_ds_v1_card())
    html_only = dataclasses.replace(status, redirect_to="")

    acs = payer.follow(html_only)  # POSTs PaReq, MD and the gateway's TermUrl, as the page's onload does
    fields = payer.redirect_fields(payer.answer_challenge(acs, password))

    assert acs.has("acs-form") and acs.url == status.redirect_to
    assert fields["status"] == expected.value and "pares" not in fields  # the gateway applied the PaRes itself
    assert client.status(ids(ack)).status is expected


def test_what_the_payer_cannot_do_is_a_payer_error(
    client: GatewayClient, receiver: CallbackReceiver, payer: Payer
) -> None:
    _, v1_status = start_sale(client, receiver, three_ds_v1_card())
    approved = client.wait_for_final_status(client.sale(sale_fields(card=card_for("approved"))))

    with pytest.raises(PayerError, match="carries no 3-D Secure method frame"):
        payer.load_method_url(v1_status)
    with pytest.raises(PayerError, match="asks nothing of the payer"):
        payer.follow(approved)
    with pytest.raises(PayerError, match=r"no 3-D Secure challenge: looked for .* \(HTTP 200\) has no form"):
        payer.answer_challenge(Page.parse("https://merchant.example/", 200, "<p>thanks</p>"))


def test_a_method_url_that_fails_is_a_payer_error(server: SimulatorServer, payer: Payer) -> None:
    missing = f"{server.root_url}/no-such-method-page"
    status = StatusResponse.from_mapping(
        {"type": "status-response", "status": "processing", "paynet-order-id": "8056020",
         "html": f"<iframe src='{missing}'></iframe>"}
    )  # fmt: skip

    with pytest.raises(PayerError, match=rf"method URL {missing} answered HTTP 404"):
        payer.load_method_url(status)


def test_enter_card_returns_the_next_page_or_says_why_the_page_refused(
    client: GatewayClient, receiver: CallbackReceiver, payer: Payer
) -> None:
    challenge = payer.enter_card(hosted_page(client, receiver).redirect_url, card_for("3ds-challenge"))
    approved = payer.enter_card(hosted_page(client, receiver).redirect_url, card_for("approved"))
    expired = dataclasses.replace(card_for("approved"), expire_month="13")

    assert payer.shows_challenge(challenge) and not payer.shows_challenge(approved)
    assert payer.redirect_fields(approved)["status"] == "approved"
    with pytest.raises(PayerError, match=r"the payment page refused the card: .*expire_month"):
        payer.enter_card(hosted_page(client, receiver).redirect_url, expired)


def test_the_wrong_password_fails_the_challenge(
    client: GatewayClient, receiver: CallbackReceiver, payer: Payer
) -> None:
    ack, status = start_sale(client, receiver, three_ds_v1_card())

    payer.return_to_merchant(payer.answer_challenge(payer.follow(status), PASSWORDS["wrong"]))
    redirect = receiver.wait_for_redirect(orderid=ack.orderid)

    assert PASSWORDS["right"] == CHALLENGE_PASSWORD != PASSWORDS["wrong"]
    assert redirect.params["status"] == "declined" and redirect.control_ok
    assert client.status(ids(ack)).status is Status.DECLINED


# --- what observers see: every request, masked ------------------------------------------------------


def test_observers_see_every_request_of_the_payer_masked(client: GatewayClient, receiver: CallbackReceiver) -> None:
    visits: list[PageVisit] = []
    card = card_for("3ds-challenge")
    mistyped = card.number[:-1] + str((int(card.number[-1]) + 1) % 10)  # fails Luhn: not masked as a card by value
    as_payer = Payer(observers=[visits.append])
    with as_payer.session:
        form = hosted_page(client, receiver)
        refused = as_payer.fill_payment_page(as_payer.open(form.redirect_url), card, credit_card_number=mistyped)
        assert refused.field_errors()
        as_payer.pay_on_hosted_page(form.redirect_url, card)

    assert [visit.step for visit in visits] == [
        "open the page",
        "pay on the hosted page",
        "open the hosted payment page",
        "pay on the hosted page",
        "answer the 3-D Secure challenge",
        "the page submits itself",  # the ACS returns the payer to the gateway (behaviour 12)
        "go back to the merchant",
    ]
    assert visits == as_payer.visits  # the observers see what the payer keeps
    assert [visit.method for visit in visits] == ["GET", "POST", "GET", "POST", "POST", "POST", "POST"]
    assert visits[-1].url == receiver.redirect_url and visits[-1].status_code == 200
    assert dict(visits[1].fields)["cvv2"] == "***" and dict(visits[3].fields)["credit_card_number"].count("*") == 6
    everything = repr(visits)
    assert card.number not in everything and mistyped not in everything and f"cvv2={card.cvv2}" not in everything
    assert f'value="{card.cvv2}"' not in everything


def test_each_visit_says_what_the_payer_did_and_a_recorder_is_one_of_the_observers(
    client: GatewayClient, receiver: CallbackReceiver
) -> None:
    recorder = Recorder()
    as_payer = Payer(recorder=recorder, merchant_urls=[receiver.redirect_url])
    assert as_payer.observers == [recorder]
    with as_payer.session:
        as_payer.pay_on_hosted_page(hosted_page(client, receiver).redirect_url, card_for("3ds-challenge"))
    assert recorder.records == as_payer.visits
    actions = [(visit.action or {}).get("action") for visit in as_payer.visits]
    assert actions[:2] == ["open", "pay"] and "challenge" in actions and actions[-1] == "return"
    paid = as_payer.visits[actions.index("pay")]
    assert dict(paid.fields)["cvv2"] == "***" and paid.outcome_values == {"cvv2": card_for("3ds-challenge").cvv2}
    with pytest.deprecated_call(match="a recorder is an observer of the payer's visits like any other"):
        as_payer.recorder = None
    assert as_payer.observers == []
