"""The payer's pages over real loopback HTTP: hosted forms, 3-D Secure 2.x and 1.0.2, error pages.

The merchant is the real ``GatewayClient`` (``client`` of conftest.py); the payer's browser is a
``requests.Session`` whose pages are read with ``html.parser`` (``Page``).  Every page a test saw
is checked afterwards: no full card number, no CVV2 in any input.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from html.parser import HTMLParser
from urllib.parse import urljoin

import pytest
import requests

from toolkit import demo
from toolkit.client import GatewayClient
from toolkit.errors import ValidationError
from toolkit.models import AsyncResponse, FormResponse, Status, StatusResponse
from toolkit.signing import verify_callback_control
from toolkit.simulator import SimulatorServer, urls
from toolkit.testdata import CHALLENGE_PASSWORD, Card, card_for, form_fields, sale_fields, three_ds_v1_card

REDIRECT_URL = "https://merchant.example/return"  # nothing listens: the tests read the redirect form
VOID_TAGS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"})
SECRET_INPUTS = ("credit_card_number", "cvv2")


# --- the payer's browser -----------------------------------------------------------------------


@dataclass
class Form:
    id: str
    action: str
    method: str
    fields: dict[str, str] = field(default_factory=dict)


class _PageParser(HTMLParser):
    """Forms with their inputs, the text of every element that has an id, iframe sources, links."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: dict[str, Form] = {}
        self.texts: dict[str, str] = {}
        self.inputs: list[dict[str, str]] = []
        self.iframes: list[str] = []
        self.links: dict[str, str] = {}
        self._open: list[tuple[str, str]] = []
        self._form: Form | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {name: value or "" for name, value in attrs}
        if tag == "form":
            self._form = self.forms[a.get("id", "")] = Form(
                a.get("id", ""), a.get("action", ""), a.get("method", "get")
            )
        elif tag == "input":
            self.inputs.append(a)
            if self._form is not None and a.get("name"):
                self._form.fields[a["name"]] = a.get("value", "")
        elif tag == "iframe":
            self.iframes.append(a.get("src", ""))
        elif tag == "a" and a.get("id"):
            self.links[a["id"]] = a.get("href", "")
        if a.get("id"):
            self.texts.setdefault(a["id"], "")
        if tag not in VOID_TAGS:
            self._open.append((tag, a.get("id", "")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None
        while self._open and self._open.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        for _, ident in self._open:
            if ident:
                self.texts[ident] += data


@dataclass
class Page:
    status_code: int
    url: str
    body: str
    parsed: _PageParser
    redirects: tuple[int, ...] = ()

    @classmethod
    def parse(cls, body: str, url: str, status_code: int = 200, redirects: tuple[int, ...] = ()) -> Page:
        parser = _PageParser()
        parser.feed(body)
        parser.close()
        return cls(status_code, url, body, parser, redirects)

    def has(self, ident: str) -> bool:
        return ident in self.parsed.texts

    def text(self, ident: str) -> str:
        assert self.has(ident), f"no element #{ident} on {self.url} (HTTP {self.status_code})"
        return " ".join(self.parsed.texts[ident].split())

    def form(self, ident: str) -> Form:
        assert ident in self.parsed.forms, f"no form#{ident} on {self.url}: {sorted(self.parsed.forms)}"
        return self.parsed.forms[ident]

    def field_errors(self) -> dict[str, str]:
        return {ident[6:]: self.text(ident) for ident in self.parsed.texts if ident.startswith("error-")}


class Browser:
    """The payer's browser: follows redirects, submits forms, remembers every page and card entry."""

    def __init__(self) -> None:
        self.session = requests.Session()
        self.pages: list[Page] = []
        self.entered: set[str] = set()

    def _load(self, response: requests.Response) -> Page:
        redirects = tuple(r.status_code for r in response.history)
        page = Page.parse(response.text, response.url, response.status_code, redirects)
        self.pages.append(page)
        return page

    def get(self, url: str) -> Page:
        return self._load(self.session.get(url, timeout=10))

    def post(self, url: str, data: dict[str, str]) -> Page:
        self.entered.update(data[name] for name in SECRET_INPUTS if data.get(name))
        return self._load(self.session.post(url, data=data, timeout=10))

    def submit(self, page: Page, form_id: str, **values: str) -> Page:
        form = page.form(form_id)
        assert form.method.lower() == "post", f"form#{form_id} is sent with {form.method}"
        return self.post(urljoin(page.url, form.action), {**form.fields, **values})

    def follow(self, status: StatusResponse) -> Page:
        """Do what the status ``html`` asks: load the method frame, or submit the auto-posting form."""
        shown = Page.parse(status.html, status.redirect_to or "about:blank")
        if shown.parsed.iframes:
            return self.get(shown.parsed.iframes[0])
        return self.submit(shown, "threeds-redirect")

    def check_no_card_data(self) -> None:
        for page in self.pages:
            for number in (e for e in self.entered if len(e) >= 12):
                assert number not in page.body, f"a card number entered by the payer is shown on {page.url}"
            for attrs in page.parsed.inputs:
                if attrs.get("name") in SECRET_INPUTS:
                    assert not attrs.get("value"), f"{attrs['name']} is filled in on {page.url}"
                assert attrs.get("name") != "cvv2" or attrs.get("type") != "hidden", f"hidden cvv2 on {page.url}"


@pytest.fixture
def browser() -> Iterator[Browser]:
    payer = Browser()
    yield payer
    payer.session.close()
    payer.check_no_card_data()


# --- the merchant's side -----------------------------------------------------------------------


def start_sale(client: GatewayClient, card: Card, amount: str = "10.42", **overrides: str | None) -> AsyncResponse:
    fields = sale_fields(card=card, amount=Decimal(amount), redirect_url=REDIRECT_URL)
    return client.sale({**fields, **overrides})


def ids(ack: AsyncResponse) -> dict[str, str]:
    return {"client_orderid": ack.client_orderid, "orderid": ack.orderid}


def pass_method_step(client: GatewayClient, browser: Browser, ack: AsyncResponse) -> StatusResponse:
    """The payer's browser loads the method URL; the merchant reports ``threeDSCompInd=Y``."""
    status = client.wait_for_payer_or_final(ack)
    assert status.needs_payer and status.get("three-ds-method-url"), status.raw
    assert browser.follow(status).has("threeds-method-done")
    client.upload_method_url_result(ids(ack), threeDSCompInd="Y")
    return client.wait_for_payer_or_final(ack)


def redirect_fields(page: Page) -> dict[str, str]:
    """The merchant redirect: posted to redirect_url, signed like a callback (behaviour section 5)."""
    assert page.status_code == 200, page.body
    form = page.form("merchant-redirect")
    assert form.action == REDIRECT_URL and form.method == "post"
    assert page.has("continue")
    assert verify_callback_control(form.fields, demo.CONTROL_KEY), form.fields
    return form.fields


def challenge_page(client: GatewayClient, browser: Browser, ack: AsyncResponse, *, via: str) -> Page:
    """Through the method step to the ACS page, by the status ``html`` (auto-POST) or ``redirect-to``."""
    status = pass_method_step(client, browser, ack)
    assert status.needs_payer and "/3ds/v2/acs/" in status.redirect_to and "creq" in status.html
    page = browser.follow(status) if via == "html" else browser.get(status.redirect_to)
    assert page.has("challenge-form") and CHALLENGE_PASSWORD in page.text("challenge-hint")
    return page


# --- 3-D Secure 2.x, API flow --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("password", "via", "expected"),
    [(CHALLENGE_PASSWORD, "html", Status.APPROVED), ("wrong", "redirect-to", Status.DECLINED)],
    ids=["hint-approves", "wrong-password-declines"],
)
def test_challenge_gives_a_cres_that_the_merchant_uploads(
    client: GatewayClient, browser: Browser, password: str, via: str, expected: Status
) -> None:
    ack = start_sale(client, card_for("3ds-challenge"))
    page = challenge_page(client, browser, ack, via=via)

    back = redirect_fields(browser.submit(page, "challenge-form", password=password))

    assert back["status"] == "processing" and back["orderid"] == ack.orderid and back["cres"]
    client.upload_cres_result(ids(ack), cres=back["cres"])
    final = client.wait_for_final_status(ack)
    assert final.status is expected
    if expected is Status.DECLINED:
        assert final.error_message == "3-D Secure authentication failed"


def test_challenge_without_redirect_url_shows_the_cres(client: GatewayClient, browser: Browser) -> None:
    ack = start_sale(client, card_for("3ds-challenge"), redirect_url=None)
    page = challenge_page(client, browser, ack, via="redirect-to")

    shown = browser.submit(page, "challenge-form", password=CHALLENGE_PASSWORD)

    assert shown.status_code == 200 and not shown.has("merchant-redirect")
    client.upload_cres_result(ids(ack), cres=shown.text("cres"))
    assert client.wait_for_final_status(ack).status is Status.APPROVED


def test_a_challenge_is_answered_once(client: GatewayClient, browser: Browser) -> None:
    ack = start_sale(client, card_for("3ds-challenge"))
    page = challenge_page(client, browser, ack, via="redirect-to")
    browser.submit(page, "challenge-form", password=CHALLENGE_PASSWORD)

    again = browser.submit(page, "challenge-form", password=CHALLENGE_PASSWORD)
    reopened = browser.get(page.url)

    for refused in (again, reopened):
        assert refused.status_code == 409 and "upload-cres-result" in refused.text("page-error")


def test_challenge_page_waits_for_the_method_step(
    server: SimulatorServer, client: GatewayClient, browser: Browser
) -> None:
    ack = start_sale(client, card_for("3ds-challenge"))
    status = client.wait_for_payer_or_final(ack)
    token = status.get("three-ds-method-url").rsplit("/", 1)[1]

    page = browser.get(urls.challenge_url(server.base_url, token))

    assert page.status_code == 409 and "upload-method-url-result" in page.text("page-error")


def test_challenge_refuses_the_creq_of_another_authentication(client: GatewayClient, browser: Browser) -> None:
    ack = start_sale(client, card_for("3ds-challenge"))
    status = pass_method_step(client, browser, ack)

    page = browser.post(status.redirect_to, {"creq": "not-this-one"})

    assert page.status_code == 400 and "another 3-D Secure authentication" in page.text("page-error")


@pytest.mark.parametrize("indicator", ["Y", "N", "U"], ids=["completed", "timed-out", "no-method-url"])
def test_frictionless_after_the_method_step(
    server: SimulatorServer, client: GatewayClient, browser: Browser, indicator: str
) -> None:
    ack = start_sale(client, card_for("frictionless"))
    status = client.wait_for_payer_or_final(ack)
    assert status.needs_payer and status.get("three-ds-method-url")

    if indicator == "Y":
        assert browser.follow(status).has("threeds-method-done")
        client.upload_method_url_result(ids(ack), threeDSCompInd="Y")
    elif indicator == "N":
        server.app.state.clock.advance(11)  # spec section 8: not completed within 10 seconds
    else:
        client.upload_method_url_result(ids(ack), threeDSCompInd="U")
    final = client.status(ids(ack))

    assert final.status is Status.APPROVED and final.get("three-ds-comp-ind") == indicator


def test_challenge_after_the_method_step_timed_out(
    server: SimulatorServer, client: GatewayClient, browser: Browser
) -> None:
    ack = start_sale(client, card_for("3ds-challenge"))
    client.wait_for_payer_or_final(ack)
    server.app.state.clock.advance(11)

    status = client.status(ids(ack))
    page = browser.get(status.redirect_to)

    assert status.needs_payer and status.get("three-ds-comp-ind") == "N"
    back = redirect_fields(browser.submit(page, "challenge-form", password=CHALLENGE_PASSWORD))
    client.upload_cres_result(ids(ack), cres=back["cres"])
    assert client.wait_for_final_status(ack).status is Status.APPROVED


def _reseal(cres: str, **changes: object) -> str:
    """The CRes with its payload changed and the ACS signature kept (a forgery)."""
    body, _, mac = cres.partition(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    forged = base64.urlsafe_b64encode(json.dumps({**payload, **changes}).encode()).decode().rstrip("=")
    return f"{forged}.{mac}"


def test_a_forged_cres_is_refused(client: GatewayClient, browser: Browser) -> None:
    ack = start_sale(client, card_for("3ds-challenge"))
    page = challenge_page(client, browser, ack, via="html")
    cres = redirect_fields(browser.submit(page, "challenge-form", password="wrong"))["cres"]

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
    client: GatewayClient, browser: Browser, amount: str, password: str, expected: Status, eci: str
) -> None:
    ack = start_sale(client, three_ds_v1_card(), amount)
    status = client.wait_for_payer_or_final(ack)
    assert status.needs_payer and status.get("three-ds-version") == "1.0.2"
    page = browser.follow(status)  # auto-POSTs PaReq and MD
    assert page.has("acs-form") and page.text("amount") == amount

    back = redirect_fields(browser.submit(page, "acs-form", password=password))

    assert back["status"] == "processing" and back["md"] == ack.orderid
    client.upload_pares_result(ids(ack), pares=back["pares"], md=back["md"])
    final = client.wait_for_final_status(ack)
    assert final.status is expected
    if eci:
        assert final.get("eci") == eci


def test_three_ds_v1_without_redirect_url_shows_the_pares(client: GatewayClient, browser: Browser) -> None:
    ack = start_sale(client, three_ds_v1_card(1), "1.01", redirect_url=None)
    page = browser.get(client.wait_for_payer_or_final(ack).redirect_to)

    shown = browser.submit(page, "acs-form", password=CHALLENGE_PASSWORD)

    assert shown.text("md") == ack.orderid
    client.upload_pares_result(ids(ack), pares=shown.text("pares"))
    assert client.wait_for_final_status(ack).status is Status.APPROVED
    assert browser.get(page.url).status_code == 409


# --- hosted forms --------------------------------------------------------------------------------

FORM_KINDS = {
    "sale_form": "sale",
    "preauth_form": "preauth",
    "payment_form": "sale",
    "account_verification_form": "account-verification",
    "payout_form": "payout",
}
BAD_ENTRIES = {
    "credit_card_number": "4538977399606733",  # fails the Luhn check
    "card_printed_name": "",
    "expire_month": "13",
    "expire_year": "2099",
    "cvv2": "12",
}


def open_form(client: GatewayClient, browser: Browser, operation: str) -> tuple[FormResponse, Page]:
    form = client.call(operation, form_fields(operation, redirect_url=REDIRECT_URL))
    assert isinstance(form, FormResponse)
    page = browser.get(form.redirect_url)
    assert page.status_code == 200 and page.form("payment-form").action == page.url
    return form, page


def card_entries(card: Card, *, payout: bool = False) -> dict[str, str]:
    entries = card.fields()
    return {name: value for name, value in entries.items() if not (payout and name == "cvv2")}


@pytest.mark.parametrize("operation", list(FORM_KINDS))
def test_hosted_form_shows_field_errors_then_pays(client: GatewayClient, browser: Browser, operation: str) -> None:
    payout = operation == "payout_form"
    ack, page = open_form(client, browser, operation)
    assert page.text("descriptor").startswith("GATEKIT*")
    if operation == "account_verification_form":
        assert page.has("no-charge") and not page.has("amount")
    else:
        assert (page.text("amount"), page.text("currency")) == ("10.42", "EUR")
    assert ("cvv2" in page.form("payment-form").fields) is not payout

    bad = {name: value for name, value in BAD_ENTRIES.items() if not (payout and name == "cvv2")}
    errors = browser.submit(page, "payment-form", **bad)

    assert errors.status_code == 200 and errors.has("form-errors")
    expected = {"credit_card_number", "card_printed_name", "expire_month"} | (set() if payout else {"cvv2"})
    assert set(errors.field_errors()) == expected
    assert "Luhn" in errors.field_errors()["credit_card_number"]
    kept = errors.form("payment-form").fields
    assert (kept["expire_month"], kept["expire_year"], kept["credit_card_number"]) == ("13", "2099", "")

    done = browser.submit(errors, "payment-form", **card_entries(card_for("approved"), payout=payout))

    back = redirect_fields(done)
    assert (back["status"], back["orderid"], back["type"]) == ("approved", ack.orderid, FORM_KINDS[operation])
    assert client.status(ids(ack)).status is Status.APPROVED
    used = browser.get(page.url)
    assert used.status_code == 409 and "already been used" in used.text("page-error")


@pytest.mark.parametrize(
    ("password", "expected"), [(CHALLENGE_PASSWORD, "approved"), ("wrong", "declined")], ids=["hint", "wrong"]
)
def test_hosted_form_with_a_challenge_card(
    client: GatewayClient, browser: Browser, password: str, expected: str
) -> None:
    ack, page = open_form(client, browser, "sale_form")

    acs = browser.submit(page, "payment-form", **card_entries(card_for("3ds-challenge")))

    assert acs.redirects == (303,) and acs.has("challenge-form")
    pending = browser.get(page.url)
    assert pending.status_code == 409 and pending.parsed.links["page-error-link"] == acs.url
    back = redirect_fields(browser.submit(acs, "challenge-form", password=password))
    assert back["status"] == expected and "cres" not in back
    assert client.status(ids(ack)).status.value == expected


def test_hosted_form_with_a_three_ds_v1_card(client: GatewayClient, browser: Browser) -> None:
    form = client.sale_form(form_fields("sale_form", amount=Decimal("1.00"), redirect_url=REDIRECT_URL))
    page = browser.get(form.redirect_url)

    acs = browser.submit(page, "payment-form", **card_entries(three_ds_v1_card()))

    assert acs.redirects == (303,) and acs.has("acs-form")
    back = redirect_fields(browser.submit(acs, "acs-form", password=CHALLENGE_PASSWORD))
    assert back["status"] == "approved" and "pares" not in back
    assert client.status(ids(form)).get("eci") == "05"


def test_redirect_control_does_not_verify_a_changed_status(client: GatewayClient, browser: Browser) -> None:
    _, page = open_form(client, browser, "sale_form")
    back = redirect_fields(browser.submit(page, "payment-form", **card_entries(card_for("insufficient-funds"))))

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
def test_unknown_pages_answer_404(server: SimulatorServer, browser: Browser, method: str, path: str) -> None:
    url = server.base_url + path
    page = browser.get(url) if method == "GET" else browser.post(url, {"password": CHALLENGE_PASSWORD})

    assert page.status_code == 404 and "does not exist" in page.text("page-error")


def test_a_v1_authentication_has_no_v2_challenge_page(client: GatewayClient, browser: Browser) -> None:
    ack = start_sale(client, three_ds_v1_card())
    v1_url = client.wait_for_payer_or_final(ack).redirect_to

    page = browser.get(v1_url.replace("/3ds/v1/", "/3ds/v2/"))

    assert page.status_code == 404 and page.has("page-error")
