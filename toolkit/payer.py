"""The payer's side over plain HTTP: what a cardholder's browser does in the gateway's flows.

Follow ``redirect-url`` / ``redirect-to`` / ``html``, fill hosted payment pages, load the
3-D Secure method URL, answer the challenge, and deliver the CRes / PaRes and the signed
outcome to where the merchant receives them (its ``redirect_url``).  Pages are read with
``toolkit.htmlforms``; JavaScript auto-submits are done by hand, as a browser would do them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

import requests

from toolkit.htmlforms import Form, Page
from toolkit.masking import mask_fields, mask_html, mask_text
from toolkit.models import StatusResponse
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


@dataclass(frozen=True)
class PageVisit:
    """One request of the payer's browser and its answer, masked at birth (for reports and diagrams).

    ``step`` says what the payer did ("answers the 3-D Secure challenge"); ``url`` is the address
    asked for, ``final_url`` where the redirects (``redirects``: their statuses) ended.
    """

    step: str
    method: str
    url: str
    fields: tuple[tuple[str, str], ...]
    status_code: int
    final_url: str
    redirects: tuple[int, ...]
    body: str
    elapsed: float

    @classmethod
    def capture(cls, step: str, response: requests.Response, fields: Mapping[str, str]) -> PageVisit:
        first = response.history[0] if response.history else response
        hops = [*response.history, response]
        return cls(
            step=step,
            method=str(first.request.method),
            url=mask_text(str(first.request.url)),
            fields=tuple(mask_fields(fields).items()),
            status_code=response.status_code,
            final_url=mask_text(response.url),
            redirects=tuple(hop.status_code for hop in response.history),
            body=mask_html(response.text),
            elapsed=sum((hop.elapsed for hop in hops), timedelta()).total_seconds(),
        )


PageObserver = Callable[[PageVisit], None]


class Payer:
    """A cardholder's browser without JavaScript; one cookie jar per payer.

    ``observers`` see every request the payer makes, as a masked ``PageVisit`` (the pytest
    plugin attaches them to the Allure report).
    """

    def __init__(
        self, *, session: requests.Session | None = None, timeout: float = 10.0, observers: Sequence[PageObserver] = ()
    ) -> None:
        self.session = session or requests.Session()
        self.session.headers["User-Agent"] = "gatekit-payer (a test browser without JavaScript)"
        self.timeout = timeout
        self.history: list[Page] = []
        self.observers = list(observers)
        self._step: str | None = None  # what the payer is doing, for the observers (``_doing``)

    @contextmanager
    def _doing(self, step: str) -> Iterator[None]:
        """Name what the requests made inside are for ("answers the 3-D Secure challenge...")."""
        outer, self._step = self._step, step
        try:
            yield
        finally:
            self._step = outer

    def _page(self, response: requests.Response, step: str, fields: Mapping[str, str] | None = None) -> Page:
        redirects = tuple(hop.status_code for hop in response.history)
        page = Page.parse(response.url, response.status_code, response.text, redirects=redirects)
        self.history.append(page)
        self._observe(step, response, fields or {})
        return page

    def _observe(self, step: str, response: requests.Response, fields: Mapping[str, str]) -> None:
        if self.observers:
            visit = PageVisit.capture(self._step or step, response, fields)
            for observer in self.observers:
                observer(visit)

    def open(self, url: str) -> Page:
        """GET a page (redirects followed)."""
        return self._page(self.session.get(url, timeout=self.timeout), "opens a page")

    def submit(self, form: Form, values: Mapping[str, str] | None = None) -> Page:
        """Submit a form with its current values overridden by ``values``."""
        data = {**form.fields, **(values or {})}
        if form.method == "post":
            response = self.session.post(form.action, data=data, timeout=self.timeout)
        else:
            response = self.session.get(form.action, params=data, timeout=self.timeout)
        return self._page(response, f"submits the form {form.id or form.action}", data)

    # --- the steps of the flows ------------------------------------------------------------------

    def follow(self, status: StatusResponse) -> Page:
        """Do what a processing status asks: go to ``redirect-to``, or render ``html`` (auto-submit it)."""
        if status.redirect_to:
            with self._doing("opens the issuer's 3-D Secure page (status redirect-to)"):
                return self.open(status.redirect_to)
        if status.html:
            page = self.html_page(status)
            if page.iframes:
                with self._doing("loads the frame of the status html"):
                    return self.open(page.iframes[0])
            with self._doing("auto-submits the form of the status html"):
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
        with self._doing("loads the 3-D Secure method URL (hidden frame)"):
            loaded = self.open(page.iframes[0])
        if loaded.status_code >= 400:
            raise PayerError(f"the 3-D Secure method URL {loaded.url} answered HTTP {loaded.status_code}")
        return loaded

    def fill_payment_page(self, page: Page, card: Card, **overrides: str) -> Page:
        """Enter a card on a hosted payment page and press pay."""
        form = page.form("payment-form")
        entries = {name: value for name, value in card.fields().items() if name in form.fields}
        with self._doing("pays on the hosted payment page"):
            return self.submit(form, {**entries, **overrides})

    def enter_card(self, url: str, card: Card) -> Page:
        """Open the hosted payment page, enter the card and press pay; PayerError if the page refuses it."""
        with self._doing("opens the hosted payment page"):
            opened = self.open(url)
        page = self.fill_payment_page(opened, card)
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
                with self._doing("answers the 3-D Secure challenge on the ACS page"):
                    return self.submit(page.form(form_id), {"password": password})
        raise PayerError(f"{page.url} shows no 3-D Secure challenge (HTTP {page.status_code})")

    def redirect_fields(self, page: Page) -> dict[str, str]:
        """The fields the page would POST back to the merchant (``merchant-redirect`` form)."""
        return dict(page.form(MERCHANT_REDIRECT_FORM).fields)

    def return_to_merchant(self, page: Page) -> Delivered:
        """Do the page's auto-submit: POST the signed outcome (and CRes/PaRes) to the merchant."""
        form = page.form(MERCHANT_REDIRECT_FORM)
        response = self.session.post(form.action, data=form.fields, timeout=self.timeout)
        self._observe("returns to the merchant with the signed outcome (redirect_url)", response, form.fields)
        return Delivered(form.action, dict(form.fields), response.status_code)

    def pay_on_hosted_page(self, url: str, card: Card, password: str = CHALLENGE_PASSWORD) -> Delivered:
        """The whole hosted-page journey: fill the card, pass 3-D Secure if asked, return to the merchant."""
        page = self.enter_card(url, card)
        if self.shows_challenge(page):
            page = self.answer_challenge(page, password)
        return self.return_to_merchant(page)
