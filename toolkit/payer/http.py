"""The payer's side over plain HTTP: what a cardholder's browser does in the gateway's flows.

Follow ``redirect-url`` / ``redirect-to`` / ``html``, fill hosted payment pages, load the 3-D Secure method
URL, answer the challenge, and deliver the CRes / PaRes and the signed outcome to where the merchant receives
them (its ``redirect_url``); on a merchant's Hosted Fields checkout (``open_checkout``), make the SDK's tokenize
call (``tokenize_hosted_fields``) and follow the status's ``redirect-to`` through 3-D Secure (``follow_challenge``).
Pages are read as a person reads them (``toolkit.payer.reading``): the payer needs no ids of the simulator's
own, so it finds its way on a sandbox's pages too.  What a page's scripts
would do by themselves (an ``onload`` or script ``submit()``, a meta refresh) is done as a browser does it,
except the last step back to the merchant, which ``return_to_merchant`` takes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import requests

from toolkit.hosted_fields import origin_of
from toolkit.masking import mask_html, mask_pan, mask_text
from toolkit.models import StatusResponse
from toolkit.observing import RecorderAlias
from toolkit.payer import hosted_fields, reading
from toolkit.payer.errors import PayerError
from toolkit.payer.forms import Form, Page
from toolkit.payer.hosted_fields import HostedFieldsToken
from toolkit.payer.reading import DEFAULT_SETTINGS, WRONG_PASSWORD, NotFound, PayerSettings
from toolkit.payer.visits import (
    Party,
    Visit,
    card_action,
    masked_fields,
    page_orderid,
    party_of,
    sent_values,
    shows,
    submit_step,
)
from toolkit.testdata.cards import Card
from toolkit.testdata.outcomes import CHALLENGE_PASSWORD

MERCHANT_REDIRECT_FORM = "merchant-redirect"  # the simulator's own id of it (the payer finds it without)
PASSWORDS = {"right": CHALLENGE_PASSWORD, "wrong": WRONG_PASSWORD}  # the outcome table's (a profile may say others)
# The fields of a card as the payer's calls name them (``credit_card_number=...`` overrides) -> Card's attributes.
CARD_FIELDS = {
    "credit_card_number": "number",
    "expire_month": "expire_month",
    "expire_year": "expire_year",
    "cvv2": "cvv2",
    "card_printed_name": "holder",
}
MAX_AUTOMATIC_STEPS = 8  # self-submitting pages and refreshes followed in a row before the payer gives up


@dataclass(frozen=True)
class Delivered:
    """What the payer's browser sent to the merchant: the fields and the merchant's answer."""

    url: str
    fields: dict[str, str]
    status_code: int


PageObserver = Callable[[Visit], None]
LostObserver = Callable[[Page, str], None]  # the page the payer could not read, and why


class Payer:
    """A cardholder's browser without JavaScript of its own; one cookie jar per payer.

    ``history`` holds the pages it was shown; ``visits`` every request it made (``toolkit.payer.visits``),
    masked, with what the payer did to make it; ``observers`` see each visit as it is made (the pytest plugin
    attaches them to the report; a ``toolkit.recording.Recorder`` records them), and ``lost_observers`` the
    page it could not find its way on.  ``recorder`` is one more observer (the plugin's spelling).
    ``settings`` are the profile's ``[profiles.NAME.payer]``; ``merchant_urls`` where the merchant receives
    the payer (its ``redirect_url``), which tells the way back from the other pages that submit themselves.
    """

    def __init__(
        self,
        *,
        session: requests.Session | None = None,
        timeout: float = 10.0,
        observers: Sequence[PageObserver] = (),
        settings: PayerSettings = DEFAULT_SETTINGS,
        merchant_urls: Sequence[str] = (),
        lost_observers: Sequence[LostObserver] = (),
        recorder: PageObserver | None = None,
    ) -> None:
        self.session = session or requests.Session()
        self.session.headers["User-Agent"] = "gatekit-payer (a test browser without JavaScript)"
        self.timeout = timeout
        self.history: list[Page] = []
        self.visits: list[Visit] = []
        self.observers = [*observers, *([recorder] if recorder is not None else [])]
        self.settings = settings
        self.merchant_urls = list(merchant_urls)
        self.lost_observers = list(lost_observers)
        self._action: dict[str, Any] | None = None  # what the payer does next: kept on its next request
        self._checkouts: set[str] = set()  # the Hosted Fields checkout pages opened (never a 3-D Secure page)
        self._recorder = recorder  # (the one the deprecated ``recorder`` attribute replaces)

    recorder = RecorderAlias["PageObserver"](
        "the payer's visits", "Payer(observers=[recorder]) or payer.observers.append(recorder)"
    )

    # --- requests -----------------------------------------------------------------------------------

    def _timed(
        self,
        method: str,
        url: str,
        step: str,
        send: Callable[[], requests.Response],
        fields: Mapping[str, str] | None = None,
    ) -> tuple[requests.Response, Visit]:
        """Send; the answer and the visit (to the merchant until ``_page`` reads what the answer shows)."""
        started = time.monotonic()
        response = send()
        elapsed = time.monotonic() - started
        at = datetime.now(UTC) - timedelta(seconds=elapsed)
        action, self._action = self._action, None
        visit = Visit(
            at,
            method.upper(),
            mask_text(url),
            response.status_code,
            elapsed,
            step,
            "merchant",
            fields=masked_fields(fields),
            final_url=mask_text(response.url),
            redirects=tuple(hop.status_code for hop in response.history),
            body=mask_html(response.text),
            action=action,
            outcome_values=sent_values(fields),
        )
        return response, visit

    def _note(self, action: str, **details: object) -> None:
        """What the payer does next, kept on its next request's visit (a replay does the same: ``gatekit drift``)."""
        self._action = {"action": action, **details}

    def _record(self, visit: Visit) -> None:
        self.visits.append(visit)
        for observer in self.observers:
            observer(visit)

    def _page(self, sent: tuple[requests.Response, Visit], to: Party | None = None) -> Page:
        response, visit = sent
        page = Page.parse(response.url, response.status_code, response.text, redirects=visit.redirects)
        self.history.append(page)
        shown = shows(page, self.settings, self.merchant_urls)
        self._record(replace(visit, to=to or party_of(page, self.settings), shows=shown, orderid=page_orderid(page)))
        return page

    def open(self, url: str, step: str = "open the page", to: Party | None = None) -> Page:
        """GET a page (redirects followed); ``step`` and ``to`` describe the visit (``to``: read from the page)."""
        return self._page(self._timed("GET", url, step, lambda: self.session.get(url, timeout=self.timeout)), to)

    def submit(
        self, form: Form, values: Mapping[str, str] | None = None, step: str | None = None, *, by_itself: bool = False
    ) -> Page:
        """Submit a form with its current values overridden by ``values``; ``by_itself``: the page submits it (where
        it went is read from the answer, unless it goes to the merchant)."""
        data = {**form.fields, **(values or {})}
        described, to = submit_step(form, self.settings, self.merchant_urls)
        to = to if to == "merchant" or not by_itself else None
        if form.method == "post":
            send = lambda: self.session.post(form.action, data=data, timeout=self.timeout)  # noqa: E731
        else:
            send = lambda: self.session.get(form.action, params=data, timeout=self.timeout)  # noqa: E731
        return self._page(self._timed(form.method, form.action, step or described, send, data), to)

    def lost(self, looked: NotFound | str, page: Page) -> PayerError:
        """The payer cannot find its way on ``page``: tell the observers (the report attaches the page) and
        return the PayerError to raise, which says what was looked for and what the page has."""
        message = str(looked) if isinstance(looked, NotFound) else f"{looked}; {reading.describe(page)}"
        for observer in self.lost_observers:
            observer(page, message)
        return PayerError(message, page)

    # --- pages that move on by themselves -------------------------------------------------------------

    def settle(self, page: Page) -> Page:
        """Do what the page does by itself, as a browser would, until it shows something to act on: submit a
        form its scripts submit, follow a meta refresh; never the way back to the merchant (the caller's step).
        """
        for _ in range(MAX_AUTOMATIC_STEPS):
            auto = reading.self_submitting(page)
            if auto is not None and not self._goes_back(page, auto) and not self._to_act_on(page):
                self._load_frames(page)
                page = self.submit(auto, step="the page submits itself", by_itself=True)
                continue
            refresh = reading.refreshes_to(page)
            if refresh is not None and auto is None and not self._to_act_on(page):
                time.sleep(page.refresh[0] if page.refresh else 0)  # (the page's own delay, as a browser waits it)
                page = self.open(refresh, "the page refreshes itself")
                continue
            return page
        raise self.lost(f"the page kept moving on by itself ({MAX_AUTOMATIC_STEPS} steps)", page)

    def _goes_back(self, page: Page, form: Form) -> bool:
        """The form takes the payer back to the merchant: it goes to a merchant address, or carries the outcome
        (the signed status, or the CRes / PaRes the merchant uploads); not an ACS's result handed on to the gateway
        (``reading.hands_result_on``: the gateway takes the payer back itself)."""
        if self.merchant_urls and reading.goes_to(form.action, self.merchant_urls):
            return True
        if reading.hands_result_on(form, page, self.merchant_urls):
            return False
        return reading.carries_outcome(form)

    def _load_frames(self, page: Page) -> list[Page]:
        """What a browser loads with a page that moves on by itself: its frames (the 3-D Secure method URL in a
        hidden frame), and the forms its scripts post into them (``threeDSMethodData``)."""
        loaded = [self.open(src, "load the 3-D Secure method URL", "acs") for src in page.iframes]
        for form in reading.frame_submissions(page):
            loaded.append(self._sent_into_frame(form))
        return loaded

    def _sent_into_frame(self, form: Form) -> Page:
        data = dict(form.fields)
        send = lambda: self.session.post(form.action, data=data, timeout=self.timeout)  # noqa: E731
        return self._page(self._timed(form.method, form.action, "load the 3-D Secure method URL", send, data), "acs")

    def _to_act_on(self, page: Page) -> bool:
        """A page that waits for the payer: a payment form or a challenge (its script only helps, if at all)."""
        return reading.is_payment_page(page, self.settings) or (
            reading.shows_challenge(page, self.settings) and reading.self_submitting(page) is None
        )

    def _frames(self, page: Page, wanted: Callable[[Page], bool]) -> Page:
        """``page``, or the first of its frames that shows what is ``wanted`` (a payment form in an iframe)."""
        if wanted(page):
            return page
        for src in page.iframes:
            inner = self.settle(self.open(src, "open the page's frame"))
            if wanted(inner):
                return inner
        return page

    # --- the steps of the flows ------------------------------------------------------------------

    def follow(self, status: StatusResponse) -> Page:
        """Do what a processing status asks: go to ``redirect-to``, or show ``html`` (``show_html``).  On the
        gateway-run road (behaviour 12) the method step's html goes on by itself: the payer ends at the challenge,
        or, without one, on the page that takes it back to the merchant."""
        self._note("follow")
        if status.redirect_to:
            return self.settle(self.open(status.redirect_to, "follow redirect-to"))
        if status.html:
            return self.show_html(status.html, status.redirect_to or "about:blank")
        raise PayerError(f"status {status.status} of order {status.orderid} asks nothing of the payer")

    def show_html(self, html: str, url: str = "about:blank") -> Page:
        """The browser shows ``html`` as a merchant's page shows it (a shop plugin echoes the status answer's): its
        frames load (the method URL), the form its script submits goes, and what follows moves on by itself until
        a page waits for the payer (the challenge) or would take it back to the merchant."""
        page = Page.parse(url, 200, html)
        frames = self._load_frames(page)
        framed = reading.frame_submissions(page)
        own = [form for form in page.forms if all(form is not other for other in framed)]
        auto = reading.self_submitting(page) or (own[0] if own else None)
        if auto is not None:
            return self.settle(self.submit(auto, step="submit the form of the status html", by_itself=True))
        if frames:
            return frames[-1]
        raise self.lost("the status html has neither a form nor a frame", page)

    def html_page(self, status: StatusResponse) -> Page:
        """The status ``html`` as the browser renders it (not loaded: its frame and form are the next steps)."""
        return Page.parse(status.redirect_to or "about:blank", 200, status.html)

    def load_method_url(self, status: StatusResponse) -> Page:
        """The browser loads the 3-D Secure method URL in its hidden frame (fingerprinting): the frame's ``src``,
        or the form the html posts into a frame (``threeDSMethodData``)."""
        page = self.html_page(status)
        self._note("method")
        into_frame = next((form for form in page.forms if form.target and form.target in page.frames), None)
        if into_frame is not None:
            loaded = self.submit(into_frame, step="load the 3-D Secure method URL")
        elif page.iframes:
            loaded = self.open(page.iframes[0], "load the 3-D Secure method URL", "acs")
        elif status.get("three-ds-method-url"):
            loaded = self.open(status.get("three-ds-method-url"), "load the 3-D Secure method URL", "acs")
        else:
            raise PayerError(f"status of order {status.orderid} carries no 3-D Secure method frame")
        if loaded.status_code >= 400:
            raise PayerError(f"the 3-D Secure method URL {loaded.url} answered HTTP {loaded.status_code}", loaded)
        return loaded

    def fill_payment_page(self, page: Page, card: Card, destination: str | None = None, **overrides: str) -> Page:
        """Enter a card on a hosted payment page (in a frame of it too) and press pay; the page that follows.

        ``destination``: the number of the card that receives the money, on a page that asks for one (a transfer
        page; default ``reading.DEFAULT_DESTINATION``).  ``overrides`` change what is typed, by the card's field
        names (``credit_card_number=...``)."""
        page = self._frames(page, lambda shown: reading.is_payment_page(shown, self.settings))
        try:
            form = reading.payment_form(page, self.settings)
            typed = replace(card, **{CARD_FIELDS[name]: value for name, value in overrides.items()})
            entries = reading.card_entries(form, typed, destination)
        except NotFound as exc:
            raise self.lost(exc, page) from None
        button = reading.submit_button(form)
        self._note("pay", card=card_action(typed), **({"destination": mask_pan(destination)} if destination else {}))
        return self.settle(self.submit(form, reading.submission(form, entries, button)))

    def enter_card(self, url: str, card: Card, destination: str | None = None) -> Page:
        """Open the hosted payment page, enter the card (and, on a transfer page, the ``destination`` card number)
        and press pay; PayerError if the page refuses it."""
        self._note("open")
        opened = self.settle(self.open(url, "open the hosted payment page", "gateway"))
        page = self.fill_payment_page(opened, card, destination)
        if reading.is_payment_page(page, self.settings):
            errors = page.field_errors() or reading.error_texts(page)
            raise PayerError(f"the payment page refused the card: {errors or page.visible_text()[:300]}", page)
        return page

    def shows_challenge(self, page: Page) -> bool:
        """Whether the page is the issuer's 3-D Secure page (2.x challenge or 1.0.2) awaiting the payer."""
        if page.url in self._checkouts:  # (its Pay button is no ACS's approve button)
            return False
        return not reading.returns_to_merchant(page, self.merchant_urls) and reading.shows_challenge(
            page, self.settings
        )

    def at_challenge(self) -> Page | None:
        """The page the payer is on, when it is the issuer's 3-D Secure page awaiting it (a status page shown by the
        merchant went on to it by itself); None otherwise."""
        shown = self.history[-1] if self.history else None
        return shown if shown is not None and self.shows_challenge(shown) else None

    def answer_challenge(self, page: Page, password: str | None = None) -> Page:
        """Answer the ACS page (3-D Secure 2.x challenge or 1.0.2): type the password or code (default: the
        profile's ``challenge_password``) and press its approve button; another password fails it (on a page
        without a password input, its decline button)."""
        password = self.settings.challenge_password if password is None else password
        try:
            form = reading.challenge_form(page, self.settings)
            failing = password != self.settings.challenge_password
            entries, button = reading.challenge_answer(form, password, failing=failing, settings=self.settings)
        except NotFound as exc:
            raise self.lost(exc, page) from None
        self._note("challenge", answer="wrong" if failing else "right")
        return self.settle(self.submit(form, reading.submission(form, entries, button)))

    def redirect_fields(self, page: Page) -> dict[str, str]:
        """The fields the page would send back to the merchant (the form that goes to the merchant)."""
        try:
            return dict(reading.merchant_form(page, self.merchant_urls).fields)
        except NotFound as exc:
            raise self.lost(exc, page) from None

    def return_to_merchant(self, page: Page) -> Delivered:
        """Do the page's last step: send the signed outcome (and the CRes / PaRes) to the merchant."""
        try:
            form = reading.merchant_form(page, self.merchant_urls)
        except NotFound as exc:
            raise self.lost(exc, page) from None
        fields = dict(form.fields)
        self._note("return")
        if form.method == "post":
            send = lambda: self.session.post(form.action, data=fields, timeout=self.timeout)  # noqa: E731
        else:
            send = lambda: self.session.get(form.action, params=fields, timeout=self.timeout)  # noqa: E731
        response, visit = self._timed(form.method, form.action, "go back to the merchant", send, fields)
        self._record(replace(visit, shows=fields.get("status", ""), orderid=fields.get("orderid", "")))
        return Delivered(form.action, fields, response.status_code)

    def pay_on_hosted_page(
        self, url: str, card: Card, password: str | None = None, destination: str | None = None
    ) -> Delivered:
        """The whole hosted-page journey: fill the card (and a transfer's ``destination``), pass 3-D Secure if
        asked, return to the merchant."""
        page = self.enter_card(url, card, destination)
        if self.shows_challenge(page):
            page = self.answer_challenge(page, password)
        return self.return_to_merchant(page)

    # --- Hosted Fields: the card typed into the gateway's iframes on the merchant's page ----------------------

    def open_checkout(self, url: str) -> Page:
        """GET a merchant's checkout page that embeds a gateway's Hosted Fields, as the payer's browser loads it: shown
        by its title (its card fields are the SDK's iframes, put there by script: ``tokenize_hosted_fields`` does
        what they do), never taken for a 3-D Secure page."""
        response, visit = self._timed(
            "GET", url, hosted_fields.CHECKOUT, lambda: self.session.get(url, timeout=self.timeout)
        )
        page = Page.parse(response.url, response.status_code, response.text, redirects=visit.redirects)
        self.history.append(page)
        self._checkouts.add(page.url)
        self._record(replace(visit, to="merchant", shows=mask_text(page.title)))
        return page

    def tokenize_hosted_fields(self, ticket: str, card: Card, *, sdk_url: str, origin: str) -> HostedFieldsToken:
        """What the gateway's SDK does on the merchant's checkout page when the payer presses Pay: the CORS
        preflight, then the card (as typed into the iframes) and the page's ``ticket`` posted to the SDK's origin
        (``sdk_url``: the ``SDK_URL`` the page loads), from the page's ``origin`` (its URL will do).

        The token, or ``TokenizeRefused`` naming the code (4001-4004) and the field; a ``PayerError`` when a
        browser would refuse the call or its answer (no CORS for the page's origin) or the answer is no answer.
        Both requests are visits to the gateway, the card as BIN and last four, the CVV never."""
        url, origin = hosted_fields.tokenize_url(sdk_url), origin_of(origin)
        asked = {
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type",
        }
        send: Callable[[], requests.Response] = lambda: self.session.options(url, headers=asked, timeout=self.timeout)  # noqa: E731
        preflight, visit = self._timed("OPTIONS", url, "the CORS preflight of the tokenize call", send)
        allowed = preflight.headers.get("Access-Control-Allow-Origin", "")
        self._record(replace(visit, to="gateway", shows=f"HTTP {preflight.status_code}, allows {allowed or 'nobody'}"))
        if preflight.status_code >= 400 or allowed not in (origin, "*"):
            why = f"HTTP {preflight.status_code} allowing {allowed or 'no origin'!r}"
            raise PayerError(f"the CORS preflight of {url} answered {why}: no browser sends the card from {origin}")
        body = hosted_fields.tokenize_body(ticket, card)
        self._action = hosted_fields.tokenize_action(card)
        headers = {"Content-Type": "application/json", "Origin": origin}
        send = lambda: self.session.post(url, data=json.dumps(body), headers=headers, timeout=self.timeout)  # noqa: E731
        answer, visit = self._timed("POST", url, "tokenize the card (the SDK's call)", send, body)
        try:
            token = hosted_fields.read_answer(answer.status_code, answer.content, answer.headers, origin)
        except PayerError as refused:
            self._record(replace(visit, to="gateway", shows=mask_text(f"refused: {refused}"[:160])))
            raise
        self._record(replace(visit, to="gateway", shows="a hosted fields token"))
        return token

    def follow_challenge(self, status: StatusResponse | str, password: str | None = None) -> Delivered:
        """Where a status sends the payer (its ``redirect-to``, or that URL itself, as a Hosted Fields page sets
        ``location.href`` once): the issuer's 3-D Secure page answered (default: the profile's password; another
        one fails it), then back to the merchant with the signed outcome (``return_to_merchant``)."""
        if isinstance(status, str):
            self._note("follow")
            page = self.settle(self.open(status, "follow redirect-to"))
        else:
            page = self.follow(status)
        if self.shows_challenge(page):
            page = self.answer_challenge(page, password)
        return self.return_to_merchant(page)


__all__ = ["MERCHANT_REDIRECT_FORM", "PASSWORDS", "Delivered", "Payer", "PayerError", "PayerSettings"]
