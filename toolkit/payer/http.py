"""The payer's side over plain HTTP: what a cardholder's browser does in the gateway's flows.

Follow ``redirect-url`` / ``redirect-to`` / ``html``, fill hosted payment pages, load the
3-D Secure method URL, answer the challenge, and deliver the CRes / PaRes and the signed
outcome to where the merchant receives them (its ``redirect_url``).  Pages are read with
``toolkit.payer.forms``; JavaScript auto-submits are done by hand, as a browser would do them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import requests

from toolkit.masking import mask_fields, mask_html, mask_text
from toolkit.models import StatusResponse
from toolkit.payer.forms import Form, Page
from toolkit.payer.visits import SUBMITS, Party, Visit, page_orderid, party_of, shows
from toolkit.testdata.cards import Card
from toolkit.testdata.outcomes import CHALLENGE_PASSWORD

MERCHANT_REDIRECT_FORM = "merchant-redirect"
CHALLENGE_FORMS = ("challenge-form", "acs-form")  # the ACS page: 3-D Secure 2.x challenge, 1.0.2
WRONG_PASSWORD = "not-the-password"
PASSWORDS = {"right": CHALLENGE_PASSWORD, "wrong": WRONG_PASSWORD}  # what the payer types on the ACS page


class PayerError(RuntimeError):
    """The page did not offer what the payer expected; the message says what it showed."""


@dataclass(frozen=True)
class Delivered:
    """What the payer's browser POSTed to the merchant: the fields and the merchant's answer."""

    url: str
    fields: dict[str, str]
    status_code: int


PageObserver = Callable[[Visit], None]


class Payer:
    """A cardholder's browser without JavaScript; one cookie jar per payer.

    ``history`` holds the pages it was shown; ``visits`` every request it made (``toolkit.payer.visits``),
    masked; ``observers`` see each visit as it is made (the pytest plugin attaches them to the report).
    """

    def __init__(
        self, *, session: requests.Session | None = None, timeout: float = 10.0, observers: Sequence[PageObserver] = ()
    ) -> None:
        self.session = session or requests.Session()
        self.session.headers["User-Agent"] = "gatekit-payer (a test browser without JavaScript)"
        self.timeout = timeout
        self.history: list[Page] = []
        self.visits: list[Visit] = []
        self.observers = list(observers)

    @staticmethod
    def _timed(
        method: str, url: str, step: str, send: Callable[[], requests.Response], fields: Mapping[str, str] | None = None
    ) -> tuple[requests.Response, Visit]:
        """Send; the answer and the visit (to the merchant until ``_page`` reads what the answer shows)."""
        started = time.monotonic()
        response = send()
        elapsed = time.monotonic() - started
        at = datetime.now(UTC) - timedelta(seconds=elapsed)
        visit = Visit(
            at,
            method.upper(),
            mask_text(url),
            response.status_code,
            elapsed,
            step,
            "merchant",
            fields=tuple(mask_fields(dict(fields or {})).items()),
            final_url=mask_text(response.url),
            redirects=tuple(hop.status_code for hop in response.history),
            body=mask_html(response.text),
        )
        return response, visit

    def _record(self, visit: Visit) -> None:
        self.visits.append(visit)
        for observer in self.observers:
            observer(visit)

    def _page(self, sent: tuple[requests.Response, Visit], to: Party | None = None) -> Page:
        response, visit = sent
        page = Page.parse(response.url, response.status_code, response.text, redirects=visit.redirects)
        self.history.append(page)
        self._record(replace(visit, to=to or party_of(page), shows=shows(page), orderid=page_orderid(page)))
        return page

    def open(self, url: str, step: str = "open the page", to: Party | None = None) -> Page:
        """GET a page (redirects followed); ``step`` and ``to`` describe the visit (``to``: read from the page)."""
        return self._page(self._timed("GET", url, step, lambda: self.session.get(url, timeout=self.timeout)), to)

    def submit(self, form: Form, values: Mapping[str, str] | None = None) -> Page:
        """Submit a form with its current values overridden by ``values``."""
        data = {**form.fields, **(values or {})}
        step, to = SUBMITS.get(form.id, (f"submit {form.id or 'the form'}", None))
        if form.method == "post":
            send = lambda: self.session.post(form.action, data=data, timeout=self.timeout)  # noqa: E731
        else:
            send = lambda: self.session.get(form.action, params=data, timeout=self.timeout)  # noqa: E731
        return self._page(self._timed(form.method, form.action, step, send, data), to)

    # --- the steps of the flows ------------------------------------------------------------------

    def follow(self, status: StatusResponse) -> Page:
        """Do what a processing status asks: go to ``redirect-to``, or render ``html`` (auto-submit it)."""
        if status.redirect_to:
            return self.open(status.redirect_to, "follow redirect-to")
        if status.html:
            page = self.html_page(status)
            if page.iframes:
                return self.open(page.iframes[0], "load the frame of the status html")
            return self.submit(page.form())
        raise PayerError(f"status {status.status} of order {status.orderid} asks nothing of the payer")

    def html_page(self, status: StatusResponse) -> Page:
        """The status ``html`` as the browser renders it (not loaded: its frame and form are the next steps)."""
        return Page.parse(status.redirect_to or "about:blank", 200, status.html)

    def load_method_url(self, status: StatusResponse) -> Page:
        """The browser loads the 3-D Secure method URL in its hidden frame (fingerprinting)."""
        page = self.html_page(status)
        if not page.iframes:
            raise PayerError(f"status of order {status.orderid} carries no 3-D Secure method frame")
        loaded = self.open(page.iframes[0], "load the 3-D Secure method URL", "acs")
        if loaded.status_code >= 400:
            raise PayerError(f"the 3-D Secure method URL {loaded.url} answered HTTP {loaded.status_code}")
        return loaded

    def fill_payment_page(self, page: Page, card: Card, **overrides: str) -> Page:
        """Enter a card on a hosted payment page and press pay."""
        form = page.form("payment-form")
        entries = {name: value for name, value in card.fields().items() if name in form.fields}
        return self.submit(form, {**entries, **overrides})

    def enter_card(self, url: str, card: Card) -> Page:
        """Open the hosted payment page, enter the card and press pay; PayerError if the page refuses it."""
        page = self.fill_payment_page(self.open(url, "open the hosted payment page", "gateway"), card)
        if page.field_errors():
            raise PayerError(f"the payment page refused the card: {page.field_errors()}")
        return page

    @staticmethod
    def shows_challenge(page: Page) -> bool:
        """Whether the page is the issuer's 3-D Secure page (2.x challenge or 1.0.2) awaiting a password."""
        return any(form.id in CHALLENGE_FORMS for form in page.forms)

    def answer_challenge(self, page: Page, password: str = CHALLENGE_PASSWORD) -> Page:
        """Type the password on the ACS page (3-D Secure 2.x challenge or 1.0.2) and submit."""
        for form_id in CHALLENGE_FORMS:
            if any(form.id == form_id for form in page.forms):
                return self.submit(page.form(form_id), {"password": password})
        raise PayerError(f"{page.url} shows no 3-D Secure challenge (HTTP {page.status_code})")

    def redirect_fields(self, page: Page) -> dict[str, str]:
        """The fields the page would POST back to the merchant (``merchant-redirect`` form)."""
        return dict(page.form(MERCHANT_REDIRECT_FORM).fields)

    def return_to_merchant(self, page: Page) -> Delivered:
        """Do the page's auto-submit: POST the signed outcome (and CRes/PaRes) to the merchant."""
        form = page.form(MERCHANT_REDIRECT_FORM)
        send = lambda: self.session.post(form.action, data=form.fields, timeout=self.timeout)  # noqa: E731
        fields = form.fields
        response, visit = self._timed("POST", form.action, "go back to the merchant", send, fields)
        self._record(replace(visit, shows=fields.get("status", ""), orderid=fields.get("orderid", "")))
        return Delivered(form.action, dict(form.fields), response.status_code)

    def pay_on_hosted_page(self, url: str, card: Card, password: str = CHALLENGE_PASSWORD) -> Delivered:
        """The whole hosted-page journey: fill the card, pass 3-D Secure if asked, return to the merchant."""
        page = self.enter_card(url, card)
        if self.shows_challenge(page):
            page = self.answer_challenge(page, password)
        return self.return_to_merchant(page)
