"""The payer in a real browser: headless Chromium driven by Selenium, beside the plain-HTTP ``Payer``.

The same pages read the same way (``toolkit.payer.reading``): a real browser runs the JavaScript
auto-submits itself, so after the last step it lands on the merchant's ``redirect_url`` with the signed
outcome.  On a merchant's Hosted Fields checkout it types the card into the gateway's iframes
(``open_checkout``, ``fill_hosted_fields``: ``toolkit.payer.hosted_frames``) and the page does the rest.
Chromium and ChromeDriver come from Debian (``chromium``, ``chromium-driver``; ``make`` installs them).
"""

from __future__ import annotations

import contextlib
import http.server
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from toolkit.masking import mask_fields, mask_html, mask_pan, mask_text
from toolkit.models import StatusResponse
from toolkit.payer import hosted_fields, hosted_frames, reading, tokenize_hook
from toolkit.payer.errors import PayerError
from toolkit.payer.forms import Button, Form, Page
from toolkit.payer.hosted_fields import HostedFieldsToken
from toolkit.payer.http import CARD_FIELDS
from toolkit.payer.navigations import Navigation, navigations
from toolkit.payer.reading import DEFAULT_SETTINGS, NotFound, PayerSettings
from toolkit.payer.visits import Party, Visit, card_action, masked_fields, page_orderid, party_of, sent_values, shows
from toolkit.testdata.cards import Card

CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


class BrowserUnavailable(RuntimeError):
    """No Chromium or ChromeDriver on this machine; the message says how to install them."""


def find_browser() -> tuple[str, str]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        raise BrowserUnavailable("Chromium and ChromeDriver are needed: apt-get install chromium chromium-driver")
    return chromium, driver


def screenshot_html(html: str, *, width: int = 800, height: int = 600, timeout: float = 30.0) -> bytes:
    """A PNG of this HTML as headless Chromium draws it (Chromium alone: no ChromeDriver, no Selenium).

    The HTML is drawn from a temporary file; give it safe (``toolkit.display.pages.safe_html``): masked,
    without scripts.  BrowserUnavailable when there is no Chromium or it draws nothing.
    """
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise BrowserUnavailable("Chromium is needed for screenshots: apt-get install chromium")
    with tempfile.TemporaryDirectory(prefix="gatekit-shot-") as work:
        source, target = Path(work, "page.html"), Path(work, "page.png")
        source.write_text(html, encoding="utf-8")
        flags = (
            *CHROMIUM_FLAGS,
            f"--user-data-dir={work}/profile",
            "--hide-scrollbars",
            f"--window-size={width},{height}",
        )
        try:
            done = subprocess.run(
                [chromium, *flags, f"--screenshot={target}", source.as_uri()], capture_output=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            raise BrowserUnavailable(f"Chromium drew no screenshot within {timeout:g}s") from None
        if not target.exists():
            why = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
            raise BrowserUnavailable(f"Chromium drew no screenshot (exit {done.returncode}): {why[0]}")
        return target.read_bytes()


# Where each page the browser shows goes: (what the payer sees, PNG bytes); the plugin attaches it to Allure.
ScreenshotObserver = Callable[[str, bytes], None]
LostObserver = Callable[[Page, str], None]  # the page the payer could not read (masked by the observer), and why
WINDOW = (1000, 900)
CHECKOUT = hosted_fields.CHECKOUT
POLL = 0.05  # seconds between looks at a page that is still moving on (its scripts run)
_BUTTONS = "button:not([type]), button[type=submit], button[type=SUBMIT], input[type=submit], input[type=image]"


class BrowserPayer:
    """A cardholder in headless Chromium; ``wait`` bounds every wait for a page to show what the payer needs.

    Pages are read as the HTTP payer reads them (``toolkit.payer.reading``): by what they ask for, not by ids;
    the browser runs their scripts itself.  ``settings`` are the profile's ``[profiles.NAME.payer]``.
    Every document the browser loads (the pages, the frames, what submits itself: Chromium's performance log,
    ``toolkit.payer.navigations``) becomes a ``Visit`` in ``visits``, as the HTTP payer's requests do, and goes
    to ``visit_observers`` (the report's steps and its sequence diagram: the ACS included); ``collect_visits()``
    gathers those that happened since the last action (the way back to the merchant submits itself).

    With ``observers``, every page the payer reaches (the hosted payment page, the issuer's 3-D Secure page,
    where the merchant's redirect lands) is screenshot, before anything is typed into it: a screenshot never
    shows card data the payer typed.  ``lost_observers`` get the page the payer could not find its way on.
    ``recorder`` (a ``toolkit.recording.Recorder``, or any observer of visits) gets, after each of the payer's
    actions, the page the browser shows then, as a ``Visit`` with what the payer did (a replay does the same).
    """

    def __init__(
        self,
        *,
        wait: float = 10.0,
        observers: Sequence[ScreenshotObserver] = (),
        settings: PayerSettings = DEFAULT_SETTINGS,
        merchant_urls: Sequence[str] = (),
        lost_observers: Sequence[LostObserver] = (),
        recorder: Callable[[Visit], None] | None = None,
        visit_observers: Sequence[Callable[[Visit], None]] = (),
    ) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        chromium, driver = find_browser()
        self._profile = tempfile.mkdtemp(prefix="gatekit-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={self._profile}"):
            options.add_argument(flag)
        # the network events (``visits``), and the console, where the tokenize answers are kept (``tokenize_hook``)
        options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
        try:
            self.driver: Any = webdriver.Chrome(service=Service(driver), options=options)
        except BaseException:  # no browser to close() later: do not leave the profile behind
            shutil.rmtree(self._profile, ignore_errors=True)
            raise
        self.wait = wait
        self.observers = list(observers)
        self.settings = settings
        self.merchant_urls = list(merchant_urls)
        self.lost_observers = list(lost_observers)
        self.recorder = recorder  # the pages the browser reached, with what the payer did (``toolkit.recording``)
        self._action: dict[str, Any] | None = None  # what the payer does next: kept on the page it reaches
        self.visit_observers = list(visit_observers)
        self.visits: list[Visit] = []
        self._log: list[dict[str, Any]] = []  # the performance log so far (a request and its answer may be read apart)
        self._console: list[dict[str, Any]] = []  # the browser log so far: the tokenize answers (``tokenize_hook``)
        self._visited: set[str] = set()
        self._main_frame = ""
        self._step: tuple[str, Party | None] | None = None  # what the payer did (and to whom), for the next document
        self._typed: list[hosted_frames.CardFrame] = []  # the Hosted Fields iframes holding what the payer typed
        self._checkout = ""  # the address of the Hosted Fields checkout the payer opened
        self.driver.set_window_size(*WINDOW)
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": tokenize_hook.SCRIPT})

    def close(self) -> None:
        try:
            self.collect_visits()
        except _stale_errors():  # (a browser that is gone: nothing more to read)
            pass
        self.driver.quit()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> BrowserPayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the page as it is now ---------------------------------------------------------------------

    def page(self) -> Page:
        """The document (or the frame) the browser shows now, parsed as the HTTP payer parses a page."""
        return Page.parse(self.driver.current_url, 200, self.driver.page_source)

    def _loaded(self) -> bool:
        try:
            return bool(self.driver.execute_script("return document.readyState") == "complete")
        except _stale_errors():
            return False

    def _look(self, wanted: Callable[[Page], bool]) -> Page | None:
        """The page, or the first of its frames, that shows what is ``wanted`` (the driver left switched to it)."""
        self.driver.switch_to.default_content()
        if not self._loaded():
            return None
        page = self.page()
        if wanted(page):
            return page
        for index in range(len(self.driver.find_elements("tag name", "iframe"))):
            self.driver.switch_to.default_content()
            try:
                self.driver.switch_to.frame(index)
            except _stale_errors():
                return None
            inner = self.page()
            if wanted(inner):
                return inner
        self.driver.switch_to.default_content()
        return None

    def _wait_for(self, wanted: Callable[[Page], bool], what: str, looked_for: Callable[[Page], str]) -> Page:
        """Until the browser shows what is ``wanted`` (its scripts move it on by themselves): the page; else the
        payer is lost, and says what it looked for (``looked_for``) and what the page has."""
        deadline = time.monotonic() + self.wait
        while True:
            try:
                found = self._look(wanted)
            except _stale_errors():
                found = None
            if found is not None:
                return found
            if time.monotonic() > deadline:
                self.driver.switch_to.default_content()
                page = self.page()
                raise self.lost(f"{looked_for(page)} (waited {self.wait:g} s for {what})", page)
            time.sleep(POLL)

    def lost(self, message: str, page: Page) -> PayerError:
        """Tell the observers (the report attaches the page and a screenshot); the PayerError to raise."""
        self.snapshot(f"could not find its way ({message[:80]})")
        for observer in self.lost_observers:
            observer(page, message)
        return PayerError(message, page)

    # --- the steps -------------------------------------------------------------------------------

    def _acting(self, step: str, to: Party | None = None) -> None:
        """The payer is about to ``step`` (``to``: whom it sends to; None: read from the answer): what came before
        is collected, the next document the browser loads is this step."""
        self.collect_visits()
        self._step = (step, to)

    def collect_visits(self) -> list[Visit]:
        """The documents the browser loaded since the last call, as ``Visit`` records (masked), in order."""
        self._log += self.driver.get_log("performance")
        new = []
        for navigation in navigations(self._log, calls=hosted_fields.is_tokenize_call):
            answered = navigation.status is not None and (navigation.is_document or navigation.finished)
            if navigation.request_id in self._visited or not answered:  # (a call's body is read once it is all in)
                continue
            self._visited.add(navigation.request_id)
            self._main_frame = self._main_frame or navigation.frame
            new.append(self._visit(navigation))
        for visit in new:
            self.visits.append(visit)
            for observer in self.visit_observers:
                observer(visit)
        return new

    def _visit(self, navigation: Navigation) -> Visit:
        try:
            body = str(self.driver.execute_cdp_cmd("Network.getResponseBody", {"requestId": navigation.request_id})
                       .get("body", ""))  # fmt: skip
        except _stale_errors():  # (a body Chromium no longer keeps)
            body = ""
        if not navigation.is_document:  # the Hosted Fields SDK's tokenize call, from the merchant's page
            return self._call_visit(navigation, body or self._kept_answer(navigation.url))
        page = Page.parse(navigation.final_url, navigation.status or 0, body, redirects=navigation.redirects)
        to: Party = "merchant" if reading.goes_to(navigation.url, self.merchant_urls) else party_of(page, self.settings)
        card_field = hosted_fields.field_kind(body) if navigation.frame != self._main_frame else ""
        shown = shows(page, self.settings, self.merchant_urls)
        if card_field:  # one of the gateway's card iframes on the merchant's page
            step, to = f"load the gateway's card field ({card_field})", "gateway"
        elif self._step is not None and navigation.frame == self._main_frame:
            (step, told), self._step = self._step, None
            to = told or to
            shown = mask_text(page.title) if step == CHECKOUT else shown  # (its card form is no ACS's)
        elif navigation.frame != self._main_frame:
            step = "load the 3-D Secure method URL" if navigation.method == "GET" else "submit a form in a frame"
            to = to if reading.is_payment_page(page, self.settings) else "acs"  # (the method URL is the ACS's)
        else:
            step = {"merchant": "go back to the merchant", "acs": "go to the issuer's 3-D Secure page"}.get(
                to, "follow the page (it submits itself)"
            )
        fields = dict(parse_qsl(navigation.post_data or "", keep_blank_values=True))
        posted = fields.get("orderid", "") if to == "merchant" else ""  # (the way back names its order)
        return Visit(
            datetime.fromtimestamp(navigation.started, UTC), navigation.method, mask_text(navigation.url),
            navigation.status, navigation.elapsed or 0.0, step, to, shows=shown, orderid=page_orderid(page) or posted,
            fields=tuple(mask_fields(fields).items()), final_url=mask_text(navigation.final_url),
            redirects=navigation.redirects, body=mask_html(body),
        )  # fmt: skip

    def _kept_answer(self, url: str) -> str:
        """The tokenize answer to ``url`` as the page's console kept it, when Chromium no longer has it (the page went
        on at once): ``toolkit.payer.tokenize_hook``."""
        try:
            self._console += self.driver.get_log("browser")
        except _stale_errors():
            return ""
        same = [text for where, _, text in tokenize_hook.answers(self._console) if where == url]
        return same[-1] if same else ""  # (none: the payer says the answer was not JSON, as Chromium left it)

    def _call_visit(self, navigation: Navigation, body: str) -> Visit:
        """The SDK's tokenize call as a visit to the gateway: the card as BIN and last four, the CVV never."""
        try:
            hosted_fields.read_answer(navigation.status or 0, body)
            said = "a hosted fields token"
        except PayerError as refused:
            said = f"refused: {refused}"[:160]
        sent = hosted_fields.json_fields(navigation.post_data)
        return Visit(
            datetime.fromtimestamp(navigation.started, UTC), navigation.method, mask_text(navigation.url),
            navigation.status, navigation.elapsed or 0.0, "tokenize the card (the SDK's call)", "gateway",
            shows=mask_text(said), fields=tuple(mask_fields(sent).items()), final_url=mask_text(navigation.final_url),
            body=mask_html(body),
        )  # fmt: skip

    def _record(
        self, sent: tuple[str, str, dict[str, str] | None], step: str, to: Party | None, started: float
    ) -> None:
        """The page the browser shows now, as the answer to what the payer did (Selenium sees no requests): a
        ``Visit`` for the ``recorder``.  ``sent``: the method, the URL and the fields of what the payer did."""
        self.collect_visits()
        action, self._action = self._action, None
        if self.recorder is None:
            return
        self.driver.switch_to.default_content()
        method, url, fields = sent
        source, shown = self.driver.page_source, self.driver.current_url
        elapsed = time.monotonic() - started
        page = Page.parse(shown, 200, source)  # (a browser driven by Selenium does not tell the status it got)
        to = to or ("merchant" if reading.goes_to(shown, self.merchant_urls) else party_of(page, self.settings))
        self.recorder(Visit(
            datetime.now(UTC) - timedelta(seconds=elapsed), method, mask_text(url), 200, elapsed, step, to,
            shows=shows(page, self.settings, self.merchant_urls), orderid=page_orderid(page),
            fields=masked_fields(fields), final_url=mask_text(shown), body=mask_html(source), action=action,
            outcome_values=sent_values(fields),
        ))  # fmt: skip

    def open(self, url: str) -> None:
        self._acting("open the page")
        started = time.monotonic()
        self._action = {"action": "open"}
        self.driver.get(url)
        self._record(("GET", url, None), "open the page", None, started)
        self.snapshot("opened the page")

    def show_html(self, html: str) -> None:
        """Show ``html`` as a merchant's page shows it (a shop plugin echoes the status answer's): the browser runs
        its scripts by itself (the method URL in a hidden frame, then on to the gateway, the ACS: the gateway-run
        road of behaviour 12).  The page comes from a loopback address of its own, served once (a ``data:`` page
        may not load a loopback gateway's frame: Chromium's local network access checks)."""
        self._acting("show the page of the status html", "merchant")
        started = time.monotonic()
        self._action = {"action": "follow"}
        with _served_once(html) as url:
            self.driver.get(url)
        self._record(("GET", url, None), "show the page of the status html", "merchant", started)

    def snapshot(self, what: str) -> None:
        """Show the page as it is now to the observers (``what``: what the payer just did)."""
        if not self.observers:
            return
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver.switch_to.default_content()
        WebDriverWait(self.driver, self.wait).until(lambda driver: self._loaded())
        with hosted_frames.hidden(self.driver, self._typed):  # (a card typed into Hosted Fields is never shown)
            png = self._content_png()
        seen = f"Screenshot after the payer {what}: {self.driver.title or 'untitled page'}"
        for observer in self.observers:
            observer(seen, png)

    def _content_png(self) -> bytes:
        """The page as the payer sees it, cut to its content (a short page leaves no blank window below it)."""
        import base64

        width, height = WINDOW
        unreadable: tuple[type[BaseException], ...] = (*_stale_errors(), KeyError, ValueError, TypeError)
        try:
            used = int(self.driver.execute_script(
                "const b = document.body; if (!b) return 0; const r = b.getBoundingClientRect();"
                "const m = parseFloat(getComputedStyle(b).marginBottom) || 0;"
                "return Math.ceil(Math.max(r.bottom + m, b.scrollHeight));"
            ) or 0)  # fmt: skip
            if 0 < used < height:
                clip = {"x": 0, "y": 0, "width": width, "height": min(height, max(used + 24, 120)), "scale": 1}
                shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "clip": clip})
                return base64.b64decode(shot["data"])
        except unreadable:
            pass
        png: bytes = self.driver.get_screenshot_as_png()
        return png

    def fill_payment_page(self, card: Card, destination: str | None = None, **overrides: str) -> None:
        """Type the card into the payment form (in a frame too), press its pay button, wait for the next page.

        ``destination``: the number of the card that receives the money, on a page that asks for one (a transfer
        page; default ``reading.DEFAULT_DESTINATION``)."""
        page = self._wait_for(
            lambda shown: reading.is_payment_page(shown, self.settings),
            "a payment form",
            lambda shown: _reason(lambda: reading.payment_form(shown, self.settings)),
        )
        form = reading.payment_form(page, self.settings)
        typed = replace(card, **{CARD_FIELDS[name]: value for name, value in overrides.items()})
        try:
            entries = reading.card_entries(form, typed, destination)
        except NotFound as exc:
            raise self.lost(str(exc), page) from None
        element = self._type(form, entries)
        self._acting("pay on the hosted page", "gateway")
        started = time.monotonic()
        self._action = {
            "action": "pay",
            "card": card_action(typed),
            **({"destination": mask_pan(destination)} if destination else {}),
        }
        self._press(element, form, reading.submit_button(form))
        self._record((form.method.upper(), form.action, entries), "pay on the hosted page", "gateway", started)
        self.snapshot("pressed pay")

    def answer_challenge(self, password: str | None = None) -> None:
        """Answer the ACS page (2.x challenge or 1.0.2): the password or code typed (default: the profile's
        ``challenge_password``), the approve button pressed; another password fails it."""
        password = self.settings.challenge_password if password is None else password
        page = self._wait_for(
            self._shows_challenge,
            "the 3-D Secure challenge",
            lambda shown: _reason(lambda: reading.challenge_form(shown, self.settings)),
        )
        form = reading.challenge_form(page, self.settings)
        failing = password != self.settings.challenge_password
        try:
            entries, button = reading.challenge_answer(form, password, failing=failing, settings=self.settings)
        except NotFound as exc:
            raise self.lost(str(exc), page) from None
        element = self._type(form, entries)
        self._acting("answer the 3-D Secure challenge", "acs")
        started = time.monotonic()
        self._action = {"action": "challenge", "answer": "wrong" if failing else "right"}
        self._press(element, form, button)
        self._record((form.method.upper(), form.action, entries), "answer the 3-D Secure challenge", "acs", started)
        self.snapshot("answered the challenge")

    def _shows_challenge(self, page: Page) -> bool:
        """The ACS page, once the pages before it have submitted themselves (the browser runs their scripts); never
        the merchant's Hosted Fields checkout, whose own form waits while its script sends the payer on."""
        if reading.returns_to_merchant(page, self.merchant_urls) or reading.self_submitting(page) is not None:
            return False
        if page.url == self._checkout or hosted_frames.holds_card_frames(page):
            return False
        return reading.shows_challenge(page, self.settings)

    # --- Hosted Fields: the gateway's iframes on the merchant's checkout page ----------------------------------

    def open_checkout(self, url: str, fields: Mapping[str, str] | None = None) -> None:
        """Open a merchant's checkout page that embeds a gateway's Hosted Fields and wait until its card iframes
        show their inputs (the screenshot shows them, empty).  ``fields``: container id -> ``pan`` / ``exp`` /
        ``cvv``, for iframes that do not say which field they are."""
        self._acting(CHECKOUT, "merchant")
        started = time.monotonic()
        self._action = {"action": "open"}
        self._typed = []
        self.driver.get(url)
        self._card_frames(fields)
        self._checkout = str(self.driver.current_url)
        self._record(("GET", url, None), CHECKOUT, "merchant", started)
        self.snapshot("opened the merchant's checkout page")

    def fill_hosted_fields(
        self, card: Card, *, pay: str | None = None, fields: Mapping[str, str] | None = None, **overrides: str
    ) -> HostedFieldsToken:
        """Type the card into the gateway's iframes as a person does (a click into each, the keys typed), press the
        page's Pay button (``pay``: its CSS selector; default: the submit button of the form holding the fields)
        and wait for the SDK's tokenize call.  ``overrides`` change what is typed (``cvv2="1"``).

        The token the page received; ``TokenizeRefused`` naming the code and the field; a ``PayerError`` when Pay
        makes no tokenize call.  What follows is the page's (its sale, its status polls, the 3-D Secure redirect:
        ``answer_challenge`` waits for the issuer's page).  No screenshot shows the typed card."""
        frames = self._card_frames(fields)
        typed = replace(card, **{CARD_FIELDS[name]: value for name, value in overrides.items()})
        values = hosted_fields.typed_values(typed)
        self._typed = frames
        for frame in frames:
            hosted_frames.type_into(self.driver, frame, values[frame.kind])
        button = self._pay_button(frames, pay)
        self.collect_visits()
        self._step = None  # (the tokenize call is a fetch; the next document is the page's own doing)
        started, known = time.monotonic(), len(self.visits)
        self._action = hosted_fields.tokenize_action(typed)
        button.click()
        call = self._tokenize_call(known)
        entries = {hosted_fields.BODY_FIELDS[kind]: value for kind, value in values.items()}
        self._record(("POST", call.url, entries), "pay with the Hosted Fields", "gateway", started)
        return hosted_fields.read_answer(call.status_code or 0, call.body)

    def follow(self, status: StatusResponse | str) -> None:
        """Go where a status sends the payer (its ``redirect-to``, or that address), as a merchant's page does with
        ``location.href`` when it does not itself."""
        address = status if isinstance(status, str) else status.redirect_to
        if not address:
            raise PayerError(f"status {getattr(status, 'status', '')} asks nothing of the payer (no redirect-to)")
        self._acting("follow redirect-to")
        started = time.monotonic()
        self._action = {"action": "follow"}
        self.driver.get(address)
        self._record(("GET", address, None), "follow redirect-to", None, started)

    def _card_frames(self, fields: Mapping[str, str] | None) -> list[hosted_frames.CardFrame]:
        """The page's three card iframes, once each shows its input; the payer is lost without them."""
        deadline = time.monotonic() + self.wait
        while True:
            try:
                frames = hosted_frames.card_frames(self.driver, fields)
            except _stale_errors():
                frames = None
            if frames is not None and hosted_frames.ready(self.driver, frames):
                return frames
            if time.monotonic() > deadline:
                self.driver.switch_to.default_content()
                found = "not all of them" if frames is None else "their inputs did not load"
                raise self.lost(f"no Hosted Fields card number, expiry and CVV iframes on the page ({found}; "
                                f"waited {self.wait:g} s)", self.page())  # fmt: skip
            time.sleep(POLL)

    def _pay_button(self, frames: list[hosted_frames.CardFrame], selector: str | None) -> Any:
        """The page's Pay button, once enabled (the page keeps it disabled until the SDK's ``onReady``)."""
        deadline = time.monotonic() + self.wait
        while True:
            button = hosted_frames.pay_button(self.driver, frames, selector)
            if button is not None and button.is_enabled():
                return button
            if time.monotonic() > deadline:
                what = f"no button {selector!r}" if selector else "no submit button in the form of the card fields"
                state = what if button is None else "a Pay button that stays disabled"
                raise self.lost(f"the page offers {state} (waited {self.wait:g} s)", self.page())
            time.sleep(POLL)

    def _tokenize_call(self, known: int) -> Visit:
        """The SDK's tokenize call that pressing Pay made (a visit after the first ``known``), once answered."""
        deadline = time.monotonic() + self.wait
        while True:
            self.collect_visits()
            call = next((v for v in self.visits[known:] if hosted_fields.is_tokenize_call(v.url)), None)
            if call is not None:
                return call
            if time.monotonic() > deadline:
                page = self.page()
                said = "; ".join(reading.error_texts(page)) or "nothing"
                raise self.lost(f"pressing Pay made no Hosted Fields tokenize call within {self.wait:g} s (the page "
                                f"says {said})", page)  # fmt: skip
            time.sleep(POLL)

    def field_errors(self) -> dict[str, str]:
        """What the page says is wrong: ``error-<field>`` elements by field, else its error-looking texts."""
        page = self.page()
        errors = page.field_errors()
        return errors or {str(index): text for index, text in enumerate(reading.error_texts(page))}

    def screenshot(self, path: Path) -> Path:
        self.driver.switch_to.default_content()
        with hosted_frames.hidden(self.driver, self._typed):
            self.driver.save_screenshot(str(path))
        return path

    # --- typing and pressing -------------------------------------------------------------------------

    def _form_element(self, form: Form) -> Any:
        if form.id:
            found = self.driver.find_elements("id", form.id)
            if found:
                return found[0]
        return self.driver.find_elements("tag name", "form")[form.index]

    def _type(self, form: Form, entries: dict[str, str]) -> Any:
        """Type (or choose, in a select) each entry into its control of ``form``; the form's element."""
        from selenium.webdriver.support.ui import Select

        element = self._form_element(form)
        for name, value in entries.items():
            control = form.control(name)
            target = element.find_elements("name", name)
            if control is None or not target:
                continue
            if control.type == "select":
                Select(target[0]).select_by_value(value)
            else:
                target[0].clear()
                target[0].send_keys(value)
        return element

    def _press(self, element: Any, form: Form, button: Button | None) -> None:
        """Press ``button`` of the form (its submit when it has none); wait until the page has moved on."""
        if button is not None:
            index = form.buttons.index(button)
            element.find_elements("css selector", _BUTTONS)[index].click()
        else:
            self.driver.execute_script("HTMLFormElement.prototype.submit.call(arguments[0])", element)
        self._left(element)
        self.driver.switch_to.default_content()

    def _left(self, element: Any) -> None:
        """Wait until ``element``'s page is gone (the browser loaded what the submit answered)."""
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(self.driver, self.wait).until(lambda driver: _gone(element))


@contextlib.contextmanager
def _served_once(html: str) -> Iterator[str]:
    """``html`` at a loopback address while the block runs (the merchant's page that shows it)."""
    body = html.encode("utf-8")

    class StatusPage(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StatusPage)
    thread = threading.Thread(target=server.serve_forever, name="gatekit-payer-page", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/status-page"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _reason(find: Callable[[], object]) -> str:
    """The NotFound message of ``find``, or why the page is not yet what is wanted."""
    try:
        find()
    except NotFound as exc:
        return str(exc)
    return "the page is still moving on by itself"


def _stale_errors() -> tuple[type[BaseException], ...]:
    from selenium.common.exceptions import NoSuchFrameException, StaleElementReferenceException, WebDriverException

    return (StaleElementReferenceException, NoSuchFrameException, WebDriverException)


def _gone(element: Any) -> bool:
    """The element's page was replaced: Selenium says stale, or Chromium says its node left the document.

    Chromium answers the second ("unhandled inspector error ... does not belong to the document") when it
    is asked about a node while the next page replaces it; ``staleness_of`` lets that through as an error.
    Asked in the middle of the navigation itself, it answers "aborted by navigation" (the target navigated):
    not yet known, asked again at the next poll.
    """
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    try:
        element.is_enabled()
    except StaleElementReferenceException:
        return True
    except WebDriverException as error:
        if "does not belong to the document" in str(error):
            return True
        if "aborted by navigation" in str(error) or "target navigated or closed" in str(error):
            return False
        raise
    return False
