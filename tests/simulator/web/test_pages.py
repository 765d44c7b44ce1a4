"""The payer's pages over real loopback HTTP: hosted forms, 3-D Secure 2.x and 1.0.2, error pages.

The merchant is the real ``GatewayClient`` (``client`` of conftest.py); the payer is ``toolkit.payer.Payer``
(a ``requests.Session``, pages read by ``toolkit.payer.forms``), watched by ``WatchedPayer``: every page a
test saw is checked afterwards, no card number the payer typed and no filled card/CVV2 input.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from decimal import Decimal

import pytest

from toolkit import demo
from toolkit.client import GatewayClient
from toolkit.errors import ValidationError
from toolkit.models import AsyncResponse, FormResponse, Status, StatusResponse
from toolkit.payer import MERCHANT_REDIRECT_FORM, Payer
from toolkit.payer.forms import Form, Page
from toolkit.signing import verify_callback_control
from toolkit.simulator import SimulatorServer
from toolkit.simulator.web import urls
from toolkit.testdata import CHALLENGE_PASSWORD, Card, card_for, form_fields, sale_fields, three_ds_v1_card

REDIRECT_URL = "https://merchant.example/return"  # nothing listens: the tests read the redirect form
SECRET_INPUTS = ("credit_card_number", "cvv2", "destination-card-no")


# --- the payer's browser -----------------------------------------------------------------------


class WatchedPayer(Payer):
    """The payer of these tests: sends forms only by POST, remembers the card data it typed, checks every page."""

    def __init__(self) -> None:
        super().__init__()
        self.typed: set[str] = set()

    def submit(
        self, form: Form, values: Mapping[str, str] | None = None, step: str | None = None, *, by_itself: bool = False
    ) -> Page:
        assert form.method == "post", f"form#{form.id} is sent with {form.method}"
        data = {**form.fields, **(values or {})}
        self.typed.update(data[name] for name in SECRET_INPUTS if data.get(name))
        return super().submit(form, values, step, by_itself=by_itself)

    def post(self, url: str, data: Mapping[str, str]) -> Page:
        """A POST that no page offers (an unknown token, a CReq of another authentication)."""
        return self.submit(Form("", url, "post", dict(data)))

    def auto_post(self, status: StatusResponse, values: Mapping[str, str] | None = None) -> Page:
        """What the status ``html`` does in a browser: POST its ``threeds-redirect`` form (CReq, or PaReq and MD);
        ``values`` change what is posted (a merchant's own page with its own ``TermUrl``)."""
        shown = self.html_page(status)
        assert not shown.iframes, f"the status html loads {shown.iframes} instead of posting"
        return self.submit(shown.form("threeds-redirect"), values)

    def redirect_fields(self, page: Page) -> dict[str, str]:
        """The merchant redirect: posted to redirect_url, signed like a callback (behaviour section 5)."""
        assert page.status_code == 200, page.html
        form = page.form(MERCHANT_REDIRECT_FORM)
        assert form.action == REDIRECT_URL and form.method == "post"
        assert page.has("continue")
        fields = super().redirect_fields(page)
        assert verify_callback_control(fields, demo.CONTROL_KEY), fields
        return fields

    def check_no_card_data(self) -> None:
        for page in self.history:
            for number in (typed for typed in self.typed if len(typed) >= 12):
                assert number not in page.html, f"a card number entered by the payer is shown on {page.url}"
            for attrs in page.inputs:
                if attrs.get("name") in SECRET_INPUTS:
                    assert not attrs.get("value"), f"{attrs['name']} is filled in on {page.url}"
                assert attrs.get("name") != "cvv2" or attrs.get("type") != "hidden", f"hidden cvv2 on {page.url}"


@pytest.fixture
def payer() -> Iterator[WatchedPayer]:
    watched = WatchedPayer()
    yield watched
    watched.session.close()
    watched.check_no_card_data()


# --- the merchant's side -----------------------------------------------------------------------


def start_sale(client: GatewayClient, card: Card, amount: str = "10.42", **overrides: str | None) -> AsyncResponse:
    fields = sale_fields(card=card, amount=Decimal(amount), redirect_url=REDIRECT_URL)
    return client.sale({**fields, **overrides})


def ids(ack: AsyncResponse) -> dict[str, str]:
    return {"client_orderid": ack.client_orderid, "orderid": ack.orderid}


def pass_method_step(client: GatewayClient, payer: WatchedPayer, ack: AsyncResponse) -> StatusResponse:
    """The payer's browser loads the method URL; the merchant reports ``threeDSCompInd=Y``."""
    status = client.wait_for_payer_or_final(ack)
    assert status.needs_payer and status.get("three-ds-method-url"), status.raw
    assert payer.load_method_url(status).has("threeds-method-done")
    client.upload_method_url_result(ids(ack), threeDSCompInd="Y")
    return client.wait_for_payer_or_final(ack)


def challenge_page(client: GatewayClient, payer: WatchedPayer, ack: AsyncResponse, *, via: str) -> Page:
    """Through the method step to the ACS page, by the status ``html`` (auto-POST) or ``redirect-to``."""
    status = pass_method_step(client, payer, ack)
    assert status.needs_payer and "/3ds/v2/acs/" in status.redirect_to and "creq" in status.html
    page = payer.auto_post(status) if via == "html" else payer.open(status.redirect_to)
    assert page.has("challenge-form") and CHALLENGE_PASSWORD in page.text("challenge-hint")
    return page


# --- 3-D Secure 2.x, API flow --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("password", "via", "expected"),
    [(CHALLENGE_PASSWORD, "html", Status.APPROVED), ("wrong", "redirect-to", Status.DECLINED)],
    ids=["hint-approves", "wrong-password-declines"],
)
def test_challenge_gives_a_cres_that_the_merchant_uploads(
    client: GatewayClient, payer: WatchedPayer, password: str, via: str, expected: Status
) -> None:
    ack = start_sale(client, card_for("3ds-challenge"))
    page = challenge_page(client, payer, ack, via=via)

    back = payer.redirect_fields(payer.answer_challenge(page, password))

    assert back["status"] == "processing" and back["orderid"] == ack.orderid and back["cres"]
    client.upload_cres_result(ids(ack), cres=back["cres"])
    final = client.wait_for_final_status(ack)
    assert final.status is expected
    if expected is Status.DECLINED:
        assert final.error_message == "3-D Secure authentication failed"


def test_challenge_without_redirect_url_shows_the_cres(client: GatewayClient, payer: WatchedPayer) -> None:
    ack = start_sale(client, card_for("3ds-challenge"), redirect_url=None)
    page = challenge_page(client, payer, ack, via="redirect-to")

    shown = payer.answer_challenge(page, CHALLENGE_PASSWORD)

    assert shown.status_code == 200 and not shown.has("merchant-redirect")
    client.upload_cres_result(ids(ack), cres=shown.text("cres"))
    assert client.wait_for_final_status(ack).status is Status.APPROVED


def test_a_challenge_is_answered_once(client: GatewayClient, payer: WatchedPayer) -> None:
    ack = start_sale(client, card_for("3ds-challenge"))
    page = challenge_page(client, payer, ack, via="redirect-to")
    payer.answer_challenge(page, CHALLENGE_PASSWORD)

    again = payer.answer_challenge(page, CHALLENGE_PASSWORD)
    reopened = payer.open(page.url)

    for refused in (again, reopened):
        assert refused.status_code == 409 and "upload-cres-result" in refused.text("page-error")


def test_challenge_page_waits_for_the_method_step(
    server: SimulatorServer, client: GatewayClient, payer: WatchedPayer
) -> None:
    ack = start_sale(client, card_for("3ds-challenge"))
    status = client.wait_for_payer_or_final(ack)
    token = status.get("three-ds-method-url").rsplit("/", 1)[1]

    page = payer.open(urls.challenge_url(server.base_url, token))

    assert page.status_code == 409 and "upload-method-url-result" in page.text("page-error")


def test_challenge_refuses_the_creq_of_another_authentication(client: GatewayClient, payer: WatchedPayer) -> None:
    ack = start_sale(client, card_for("3ds-challenge"))
    status = pass_method_step(client, payer, ack)

    page = payer.post(status.redirect_to, {"creq": "not-this-one"})

    assert page.status_code == 400 and "another 3-D Secure authentication" in page.text("page-error")


def test_a_card_that_is_not_enrolled_is_approved_at_once(client: GatewayClient) -> None:
    """CVV2 111: no 3-D Secure step at all, no method URL, no payer action (behaviour section 10)."""
    ack = start_sale(client, card_for("not-enrolled"))
    status = client.wait_for_payer_or_final(ack)
    assert status.status is Status.APPROVED and not status.needs_payer
    assert not any(status.get(name) for name in ("three-ds-method-url", "three-ds-version", "html", "redirect-to"))


@pytest.mark.parametrize("indicator", ["Y", "N", "U"], ids=["completed", "timed-out", "no-method-url"])
def test_the_challenge_follows_the_method_step(
    server: SimulatorServer, client: GatewayClient, payer: WatchedPayer, indicator: str
) -> None:
    ack = start_sale(client, card_for("3ds-challenge"))
    status = client.wait_for_payer_or_final(ack)
    assert status.needs_payer and status.get("three-ds-method-url")

    if indicator == "Y":
        assert payer.load_method_url(status).has("threeds-method-done")
        client.upload_method_url_result(ids(ack), threeDSCompInd="Y")
    elif indicator == "N":
        payer.load_method_url(status)  # the method step starts: its window runs (behaviour 12)
        server.app.state.clock.advance(11)  # spec section 8: not completed within 10 seconds
    else:
        client.upload_method_url_result(ids(ack), threeDSCompInd="U")
    after = client.status(ids(ack))

    assert after.needs_payer and after.redirect_to and after.get("three-ds-comp-ind") == indicator


def test_challenge_after_the_method_step_timed_out_is_applied_by_the_gateway(
    server: SimulatorServer, client: GatewayClient, payer: WatchedPayer
) -> None:
    """Nobody uploaded anything: the order is gateway-run (behaviour 12), the ACS returns the payer to the gateway,
    which applies the CRes and sends the payer back with the final status."""
    ack = start_sale(client, card_for("3ds-challenge"))
    payer.load_method_url(client.wait_for_payer_or_final(ack))
    server.app.state.clock.advance(11)

    status = client.status(ids(ack))
    page = payer.open(status.redirect_to)

    assert status.needs_payer and status.get("three-ds-comp-ind") == "N" and page.has("challenge-form")
    back = payer.redirect_fields(payer.answer_challenge(page, CHALLENGE_PASSWORD))
    assert back["status"] == "approved" and "cres" not in back
    assert client.status(ids(ack)).status is Status.APPROVED


def _reseal(cres: str, **changes: object) -> str:
    """The CRes with its payload changed and the ACS signature kept (a forgery)."""
    body, _, mac = cres.partition(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    forged = base64.urlsafe_b64encode(json.dumps({**payload, **changes}).encode()).decode().rstrip("=")
    return f"{forged}.{mac}"


def test_a_forged_cres_is_refused(client: GatewayClient, payer: WatchedPayer) -> None:
    ack = start_sale(client, card_for("3ds-challenge"))
    page = challenge_page(client, payer, ack, via="html")
    cres = payer.redirect_fields(payer.answer_challenge(page, "wrong"))["cres"]

    with pytest.raises(ValidationError) as refused:
        client.upload_cres_result(ids(ack), cres=_reseal(cres, transStatus="Y"))

    assert "not one issued by the simulator's ACS" in str(refused.value)
    assert client.status(ids(ack)).status is Status.PROCESSING
    client.upload_cres_result(ids(ack), cres=cres)
    assert client.wait_for_final_status(ack).status is Status.DECLINED


# --- 3-D Secure 1.0.2, API flow ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "password", "expected", "eci"),
    [
        ("1.00", CHALLENGE_PASSWORD, Status.APPROVED, "05"),
        ("1.02", CHALLENGE_PASSWORD, Status.DECLINED, ""),
        ("1.00", "wrong", Status.DECLINED, ""),
    ],
    ids=["1.00-authenticated", "1.02-failed", "wrong-password"],
)
def test_three_ds_v1_pares_is_uploaded_by_the_merchant(
    client: GatewayClient, payer: WatchedPayer, amount: str, password: str, expected: Status, eci: str
) -> None:
    ack = start_sale(client, three_ds_v1_card(), amount)
    status = client.wait_for_payer_or_final(ack)
    assert status.needs_payer and status.get("three-ds-version") == "1.0.2"
    page = payer.auto_post(status, {"TermUrl": REDIRECT_URL})  # PaReq and MD, the merchant's own TermUrl
    assert page.has("acs-form") and page.text("amount") == amount

    back = payer.redirect_fields(payer.answer_challenge(page, password))

    assert back["status"] == "processing" and back["md"] == ack.orderid
    client.upload_pares_result(ids(ack), pares=back["pares"], md=back["md"])
    final = client.wait_for_final_status(ack)
    assert final.status is expected
    if eci:
        assert final.get("eci") == eci


def test_three_ds_v1_without_redirect_url_ends_on_the_gateway_s_result_page(
    client: GatewayClient, payer: WatchedPayer
) -> None:
    """Gateway-run (nothing uploaded, no TermUrl of the merchant's): the gateway applies the PaRes itself."""
    ack = start_sale(client, three_ds_v1_card(1), "1.01", redirect_url=None)
    page = payer.open(client.wait_for_payer_or_final(ack).redirect_to)
    assert page.has("acs-form")

    shown = payer.answer_challenge(page, CHALLENGE_PASSWORD)

    assert shown.text("outcome-status") == "approved" and not shown.has("pares")
    assert client.status(ids(ack)).status is Status.APPROVED
    assert payer.open(page.url).status_code == 409


# --- hosted forms --------------------------------------------------------------------------------

FORM_KINDS = {
    "sale_form": "sale",
    "preauth_form": "preauth",
    "payment_form": "sale",
    "account_verification_form": "account-verification",
    "payout_form": "payout",
    "transfer_form": "transfer",  # the source card as on sale-form, and the card that receives (behaviour 12)
}
BAD_ENTRIES = {
    "credit_card_number": "4538977399606733",  # fails the Luhn check
    "card_printed_name": "",
    "expire_month": "13",
    "expire_year": "2099",
    "cvv2": "12",
}


def open_form(client: GatewayClient, payer: WatchedPayer, operation: str) -> tuple[FormResponse, Page]:
    form = client.call(operation, form_fields(operation, redirect_url=REDIRECT_URL))
    assert isinstance(form, FormResponse)
    page = payer.open(form.redirect_url)
    assert page.status_code == 200 and page.form("payment-form").action == page.url
    return form, page


@pytest.mark.parametrize("operation", list(FORM_KINDS))
def test_hosted_form_shows_field_errors_then_pays(client: GatewayClient, payer: WatchedPayer, operation: str) -> None:
    payout = operation == "payout_form"
    ack, page = open_form(client, payer, operation)
    assert page.text("descriptor").startswith("GATEKIT*")
    if operation == "account_verification_form":
        assert page.has("no-charge") and not page.has("amount")
    else:
        assert (page.text("amount"), page.text("currency")) == ("10.42", "EUR")
    assert ("cvv2" in page.form("payment-form").fields) is not payout

    bad = {name: value for name, value in BAD_ENTRIES.items() if not (payout and name == "cvv2")}
    errors = payer.submit(page.form("payment-form"), bad)

    assert errors.status_code == 200 and errors.has("form-errors")
    expected = {"credit_card_number", "card_printed_name", "expire_month"} | (set() if payout else {"cvv2"})
    if operation == "transfer_form":
        expected.add("destination-card-no")
        assert errors.field_errors()["destination-card-no"] == "Card number to receive the money is required"
    assert set(errors.field_errors()) == expected
    assert "Luhn" in errors.field_errors()["credit_card_number"]
    kept = errors.form("payment-form").fields
    assert (kept["expire_month"], kept["expire_year"], kept["credit_card_number"]) == ("13", "2099", "")

    done = payer.fill_payment_page(errors, card_for("approved"))

    back = payer.redirect_fields(done)
    assert (back["status"], back["orderid"], back["type"]) == ("approved", ack.orderid, FORM_KINDS[operation])
    assert client.status(ids(ack)).status is Status.APPROVED
    used = payer.open(page.url)
    assert used.status_code == 409 and "already been used" in used.text("page-error")


@pytest.mark.parametrize(("operation", "card"), [("sale_form", "approved"), ("transfer_form", "3ds-challenge")])
def test_a_hosted_form_without_redirect_url_ends_on_the_result_page(
    client: GatewayClient, payer: WatchedPayer, operation: str, card: str
) -> None:
    """Behaviour section 12: redirect_url is optional on the forms; without it the payer ends on the gateway's page."""
    form = client.call(operation, form_fields(operation, redirect_url=None))
    assert isinstance(form, FormResponse)
    page = payer.fill_payment_page(payer.open(form.redirect_url), card_for(card))
    if payer.shows_challenge(page):
        page = payer.answer_challenge(page, CHALLENGE_PASSWORD)
    assert page.status_code == 200 and not page.forms and page.title.startswith("Payment finished")
    assert page.text("orderid") == form.orderid and page.text("outcome-status") in ("approved", "processing")
    assert client.wait_for_final_status(form).status is Status.APPROVED


@pytest.mark.parametrize(
    ("password", "expected"), [(CHALLENGE_PASSWORD, "approved"), ("wrong", "declined")], ids=["hint", "wrong"]
)
def test_hosted_form_with_a_challenge_card(
    client: GatewayClient, payer: WatchedPayer, password: str, expected: str
) -> None:
    ack, page = open_form(client, payer, "sale_form")

    acs = payer.fill_payment_page(page, card_for("3ds-challenge"))

    assert acs.redirects == (303,) and acs.has("challenge-form")
    pending = payer.open(page.url)
    assert pending.status_code == 409 and pending.links["page-error-link"] == acs.url
    back = payer.redirect_fields(payer.answer_challenge(acs, password))
    assert back["status"] == expected and "cres" not in back
    assert client.status(ids(ack)).status.value == expected


def test_hosted_form_with_a_three_ds_v1_card(client: GatewayClient, payer: WatchedPayer) -> None:
    form = client.sale_form(form_fields("sale_form", amount=Decimal("1.00"), redirect_url=REDIRECT_URL))
    page = payer.open(form.redirect_url)

    acs = payer.fill_payment_page(page, three_ds_v1_card())

    assert acs.redirects == (303,) and acs.has("acs-form")
    back = payer.redirect_fields(payer.answer_challenge(acs, CHALLENGE_PASSWORD))
    assert back["status"] == "approved" and "pares" not in back
    assert client.status(ids(form)).get("eci") == "05"


def test_redirect_control_does_not_verify_a_changed_status(client: GatewayClient, payer: WatchedPayer) -> None:
    _, page = open_form(client, payer, "sale_form")
    back = payer.redirect_fields(payer.fill_payment_page(page, card_for("insufficient-funds")))

    assert back["status"] == "declined" and back["error_message"] == "Insufficient funds"
    assert not verify_callback_control({**back, "status": "approved"}, demo.CONTROL_KEY)
    assert not verify_callback_control(back, "not-the-control-key")


# --- refusals --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/form/unknown-token"),
        ("POST", "/form/unknown-token"),
        ("GET", "/3ds/v2/method/unknown-token"),
        ("GET", "/3ds/v2/acs/unknown-token"),
        ("POST", "/3ds/v2/acs/unknown-token/answer"),
        ("GET", "/3ds/v1/acs/unknown-token"),
        ("POST", "/3ds/v1/acs/unknown-token/answer"),
    ],
)
def test_unknown_pages_answer_404(server: SimulatorServer, payer: WatchedPayer, method: str, path: str) -> None:
    url = server.base_url + path
    page = payer.open(url) if method == "GET" else payer.post(url, {"password": CHALLENGE_PASSWORD})

    assert page.status_code == 404 and "does not exist" in page.text("page-error")


def test_a_v1_authentication_has_no_v2_challenge_page(client: GatewayClient, payer: WatchedPayer) -> None:
    ack = start_sale(client, three_ds_v1_card())
    v1_url = client.wait_for_payer_or_final(ack).redirect_to

    page = payer.open(v1_url.replace("/3ds/v1/", "/3ds/v2/"))

    assert page.status_code == 404 and page.has("page-error")
