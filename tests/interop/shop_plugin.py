"""The family's shop plugins and a direct sale by card, written in Python from reading their source.

payneteasy/php-plugin-woocommerce, wc-payneteasy/ (the others of the family take the same road):
- Payneteasy.lib.php ``PneApi``: ``{gate}paynet/api/v2/{action}/{endpoint}``, a curl POST of
  ``http_build_query($data)`` (form-urlencoded, no Accept header: the legacy answer), HTTP status other than 200
  or an empty answer -> PneException; ``parse_str`` then ``rtrim`` of every value; ``validation-error`` ->
  PneException.  ``signed()``: sale control = ``sha1(endpoint . client_orderid . (amount * 100) . email .
  control_key)``, appended last; status adds ``login`` and signs ``sha1(login . client_orderid . orderid .
  control_key)``.
- wc-payneteasy.php ``make_sale``: the fields of ``SALE_FIELDS``, in that order, empty ones too (``ssn``, an
  unset ``notify_url``); the return URL ``home_url("?wc-api=wc_payneteasy_return&orderId=N")`` is
  ``redirect_url`` (and the success and fail URLs), the webhook ``home_url("?wc-api=wc_payneteasy_webhook")`` is
  ``server_callback_url``.
- ``hook_return_handler`` (the page the payer is sent to after the sale, and comes back to): one status; on
  ``sale/processing`` it echoes the status answer's ``html``, or, without one, a "Check status" link its ticker
  script clicks once it has run through the text (12 characters at 300 ms: the status again after ~3.6 s);
  otherwise the result.  ``hook_webhook_handler``: on a callback, a status by the callback's ``orderid``.
Nothing in any of them calls an upload operation: the gateway runs 3-D Secure itself (behaviour section 12).
"""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import parse_qsl, urlencode

import requests

from toolkit.payer.browser import BrowserPayer
from toolkit.payer.http import Payer, PayerError

TICKER_INTERVAL = 12 * 0.3  # seconds: the "Check status" ticker of the return page (js_ticker, 300 ms a letter)
FINAL = ("approved", "declined", "filtered", "error")
USER_AGENT = "Payneteasy-Client/2.0"
# make_sale's fields in its order: the card from the checkout form ($_POST), the rest from the WooCommerce order.
SALE_FIELDS = (
    "client_orderid", "order_desc", "amount", "currency", "address1", "city", "zip_code", "country", "phone",
    "email", "ipaddress", "cvv2", "ssn", "credit_card_number", "card_printed_name", "expire_month", "expire_year",
    "first_name", "last_name", "redirect_success_url", "redirect_fail_url", "redirect_url", "server_callback_url",
    "notify_url",
)  # fmt: skip
Answer = dict[str, str]


class PluginError(Exception):
    """What PneException stands for: the gateway could not be reached, answered non-200, or refused the request."""


def php_float(value: float) -> str:
    """PHP's float to string (``precision`` 14): 1000.0 -> "1000", 19.99 * 100 -> "1999"."""
    return format(value, ".14G")


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class PluginSettings:
    """The plugin's settings page: ``gate`` ends in ``/`` (its LIVE_URL / SANDBOX_URL rule)."""

    gate: str
    login: str
    control_key: str
    endpoint: str


@dataclass(frozen=True)
class ShopOrder:
    """A WooCommerce order (its id is the client_orderid) and the gateway's paynet-order-id the plugin stored."""

    client_orderid: str
    orderid: str
    return_url: str


@dataclass(frozen=True)
class ReturnPage:
    """What ``hook_return_handler`` shows: the status html, the "Check status" ticker, or the result."""

    answer: Answer

    @property
    def payment_status(self) -> str:  # "{transaction-type}/{status}", as the plugin switches on it
        return f"{self.answer.get('transaction-type')}/{self.answer.get('status')}"

    @property
    def html(self) -> str:
        return self.answer.get("html", "") if self.answer.get("status") == "processing" else ""

    @property
    def shows(self) -> str:
        if self.answer.get("status") != "processing":
            return "result"
        return "html" if self.html else "check-status"


class ShopPlugin:
    """One shop with the plugin installed; ``return_url`` and ``webhook_url`` are the shop's ``home_url`` of its
    two handlers.  ``interval``: how often the shop asks the status (the ticker; tests make it short), ``deadline``:
    how long it asks before giving up.  ``sent`` holds every request as (action, fields)."""

    def __init__(
        self,
        settings: PluginSettings,
        *,
        return_url: str,
        webhook_url: str,
        session: requests.Session | None = None,
        interval: float = TICKER_INTERVAL,
        deadline: float = 60.0,
    ) -> None:
        self.settings = settings
        self.return_url = return_url
        self.webhook_url = webhook_url
        self.session = session or requests.Session()
        self.interval = interval
        self.deadline = deadline
        self.sent: list[tuple[str, list[tuple[str, str]]]] = []

    # --- PneApi ----------------------------------------------------------------------------------------

    def execute(self, action: str, data: list[tuple[str, str]], session: requests.Session | None = None) -> Answer:
        self.sent.append((action, data))
        url = f"{self.settings.gate}paynet/api/v2/{action}/{self.settings.endpoint}"
        headers = {"Content-Type": "application/x-www-form-urlencoded", "User-Agent": USER_AGENT}
        try:
            response = (session or self.session).post(url, data=urlencode(data), headers=headers, timeout=30)
        except requests.RequestException as exc:
            raise PluginError(f"Card processing error, CURL error: '{exc}'") from exc
        if response.status_code != 200:
            raise PluginError(f"Card processing error, HTTP code: '{response.status_code}': {response.text[:300]}")
        if not response.text:
            raise PluginError("Card processing response is empty")
        result = {name: value.rstrip() for name, value in parse_qsl(response.text, keep_blank_values=True)}
        if result.get("type") == "validation-error":
            raise PluginError(f"Card processing returned error: '{result.get('error-message')}'")
        return result

    def sale(self, data: Mapping[str, str]) -> Answer:
        cents = php_float(float(data["amount"]) * 100)
        signed = self.settings.endpoint + data["client_orderid"] + cents + data["email"] + self.settings.control_key
        return self.execute("sale", [*data.items(), ("control", sha1(signed))])

    def status(self, order: ShopOrder, session: requests.Session | None = None) -> Answer:
        key, login = self.settings.control_key, self.settings.login
        data = [("client_orderid", order.client_orderid), ("orderid", order.orderid), ("login", login)]
        control = sha1(login + order.client_orderid + order.orderid + key)
        return self.execute("status", [*data, ("control", control)], session)

    # --- WC_Payneteasy -----------------------------------------------------------------------------------

    def checkout(self, card: Mapping[str, str], customer: Mapping[str, str], amount: str = "10.00") -> ShopOrder:
        """``process_payment`` -> ``make_sale``: the sale with the card the payer typed at the checkout."""
        order_id = str(uuid.uuid4().int % 10**9)  # WooCommerce order ids are integers
        return_url = f"{self.return_url}?wc-api=wc_payneteasy_return&orderId={order_id}"
        values = {
            **customer,
            **card,
            "client_orderid": order_id,
            "order_desc": f"Order # {order_id}",
            "amount": amount,
            "redirect_success_url": return_url,
            "redirect_fail_url": return_url,
            "redirect_url": return_url,
            "server_callback_url": f"{self.webhook_url}?wc-api=wc_payneteasy_webhook",
        }
        answer = self.sale({name: values.get(name, "") for name in SALE_FIELDS})
        if answer.get("type") != "async-response" or not answer.get("paynet-order-id"):
            raise PluginError(f"the sale was not taken: {answer}")
        return ShopOrder(order_id, answer["paynet-order-id"], return_url)

    def return_page(self, order: ShopOrder) -> ReturnPage:
        """``hook_return_handler`` once: what the payer's browser is shown."""
        return ReturnPage(self.status(order))

    def until_shown(self, order: ShopOrder) -> ReturnPage:
        """The return page, and again each time its ticker clicks "Check status", until it shows the status html or
        the result; PluginError at the deadline."""
        end = time.monotonic() + self.deadline
        while True:
            page = self.return_page(order)
            if page.shows != "check-status":
                return page
            if time.monotonic() >= end:
                raise PluginError(f"the return page still says 'Check status' after {self.deadline:g} s: {page.answer}")
            time.sleep(self.interval)  # the ticker runs through its text before it clicks

    def webhook(self, params: Mapping[str, str]) -> ReturnPage:
        """``hook_webhook_handler``: the callback's orderid asked about (its control is not looked at)."""
        order = ShopOrder(params["client_orderid"], params["orderid"], "")
        return ReturnPage(self.status(order))

    def watch(self, order: ShopOrder) -> StatusWatch:
        """The status asked every ``interval`` in the background (its own connection) until it is final."""
        return StatusWatch(lambda session: self.status(order, session), self.interval, self.deadline)


class StatusWatch:
    """A context manager polling the status from a thread while the payer is in the browser; ``answers`` holds
    every answer, ``final()`` waits for the final one."""

    def __init__(self, poll: Callable[[requests.Session], Answer], interval: float, deadline: float) -> None:
        self.answers: list[Answer] = []
        self.error: BaseException | None = None
        self._poll, self._interval, self._deadline = poll, interval, deadline
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="shop-plugin-status", daemon=True)

    def __enter__(self) -> StatusWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)

    def _run(self) -> None:
        end = time.monotonic() + self._deadline
        with requests.Session() as session:
            try:
                while not self._stop.is_set():
                    self.answers.append(self._poll(session))
                    if self.answers[-1].get("status") in FINAL or time.monotonic() >= end:
                        return
                    self._stop.wait(self._interval)
            except BaseException as exc:  # (seen by final(): a thread's exception is not the test's)
                self.error = exc

    def final(self) -> Answer:
        """The final status the polling got; PluginError when it failed or the deadline passed first."""
        self._thread.join(timeout=self._deadline + 60)
        if self.error is not None:
            raise PluginError(f"polling the status failed: {self.error}") from self.error
        last = self.answers[-1] if self.answers else {}
        if last.get("status") not in FINAL:
            raise PluginError(f"no final status after {len(self.answers)} polls in {self._deadline:g} s: {last}")
        return last


# --- the payer's browser, shown the status html by the return page ------------------------------------------


class ShownBrowser(Protocol):
    def pay_through_challenge(self, html: str, password: str) -> None:
        """Show the status html; the page goes on by itself to the ACS, where ``password`` is typed; the pages
        then take the payer back to the shop's return URL."""


class HttpBrowser:
    """gatekit's HTTP payer (no JavaScript: it does what the pages' scripts do, and the last step back itself)."""

    def __init__(self, payer: Payer) -> None:
        self.payer = payer

    def pay_through_challenge(self, html: str, password: str) -> None:
        page = self.payer.show_html(html)
        if not self.payer.shows_challenge(page):
            raise PayerError(f"the status html did not lead to the 3-D Secure challenge: {page.url}", page)
        page = self.payer.answer_challenge(page, password)
        self.payer.return_to_merchant(page)


class ChromiumBrowser:
    """gatekit's real-browser payer: Chromium runs the pages' scripts, the way back included."""

    def __init__(self, payer: BrowserPayer) -> None:
        self.payer = payer

    def pay_through_challenge(self, html: str, password: str) -> None:
        self.payer.show_html(html)
        self.payer.answer_challenge(password)  # (it waits for the ACS page: the frames and forms move on first)
