"""What the payer's browser did, as records: one ``Visit`` per request, masked, timed, for diagrams and reports.

``toolkit.payer.Payer`` keeps them in ``visits``: when the request left (UTC), what the payer did
(``step``), where the request went (``to``: the gateway, the issuer's ACS, or the merchant's
``redirect_url``), the HTTP status, how long it took, what the answer showed, and the order it
concerns (read from the page); for reports and recordings, the fields sent, the redirects followed, the
page itself and what the payer did to send it (``action``: pay with a card, answer a challenge...).  Card
data never reaches a visit: URLs, fields and the page are masked when it is made (``masked_fields``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from toolkit.masking import CVV_MASK, mask_fields, mask_pan, mask_text
from toolkit.outcome_values import TEST_CVV2, outcome_values
from toolkit.payer import reading
from toolkit.payer.forms import Form, Page
from toolkit.payer.reading import DEFAULT_SETTINGS, PayerSettings
from toolkit.testdata.cards import Card

Party = Literal["gateway", "acs", "merchant"]
_ORDER_IN_TEXT = re.compile(r"\border (\d+)")
_ORDER_FIELDS = ("orderid", "order_id", "orderId", "MD", "md", "threeDSSessionData")


@dataclass(frozen=True)
class Visit:
    """One request of the payer's browser, masked at birth (URL, fields sent, the page answered).

    ``final_url`` is where the redirects (``redirects``: their statuses) ended; ``body`` the page, masked.
    ``action`` is what the payer did that sent it (``{"action": "pay", "card": card_action(card)}``,
    ``{"action": "challenge", "answer": "right"}``...: a replay does the same), ``outcome_values`` the public
    test values among the fields sent (``toolkit.outcome_values``), which only a recording shows.
    """

    at: datetime
    method: str
    url: str
    status_code: int | None
    elapsed: float
    step: str
    to: Party
    shows: str = ""
    orderid: str = ""
    fields: tuple[tuple[str, str], ...] = ()
    final_url: str = ""
    redirects: tuple[int, ...] = ()
    body: str = ""
    action: Mapping[str, Any] | None = None
    outcome_values: Mapping[str, str] = field(default_factory=dict, repr=False)

    def summary(self) -> str:
        """``answer the 3-D Secure challenge: HTTP 200, the redirect to the merchant (approved)``."""
        status = f"HTTP {self.status_code}" if self.status_code is not None else "no answer"
        return f"{self.step}: {status}" + (f", {self.shows}" if self.shows else "")


def masked_fields(fields: Mapping[str, str] | None) -> tuple[tuple[str, str], ...]:
    """The fields a visit keeps of what the payer's browser sent: card data masked."""
    return tuple(mask_fields(dict(fields or {})).items())


def sent_values(fields: Mapping[str, str] | None) -> dict[str, str]:
    """The public test values among the fields sent, kept as sent (``toolkit.outcome_values``)."""
    return outcome_values((fields or {}).items())


def card_action(card: Card) -> dict[str, str | bool]:
    """What the payer typed, as a visit keeps it: the number masked, a test CVV2 kept."""
    from toolkit.fields import ascii_digits, luhn_ok

    return {
        "number": mask_pan(card.number),
        "luhn": ascii_digits(card.number) and luhn_ok(card.number),  # (a mistyped number, as the payer typed it)
        "expire_month": card.expire_month,
        "expire_year": card.expire_year,
        "cvv2": card.cvv2 if card.cvv2 in TEST_CVV2 else (CVV_MASK if card.cvv2 else ""),
        "holder": mask_text(card.holder),
    }


def shows(page: Page, settings: PayerSettings = DEFAULT_SETTINGS, merchant_urls: Sequence[str] = ()) -> str:
    """What a page shows the payer, in a few words, read as a person would (no ids needed)."""
    if reading.returns_to_merchant(page, merchant_urls) and not reading.is_payment_page(page, settings):
        fields = reading.merchant_form(page, merchant_urls).fields
        status = (
            fields.get("status") or page.text("outcome-status") or ("3-D Secure result" if _has_result(fields) else "")
        )
        return f"the redirect to the merchant ({status or '?'})"
    auto = reading.self_submitting(page)
    if auto is not None and reading.asks_the_acs(auto):
        v1 = "pareq" in {name.lower() for name in auto.fields}
        return "on to the 3-D Secure 1.0.2 ACS page" if v1 else "on to the 3-D Secure challenge"
    if auto is not None and reading.hands_result_on(auto, page, merchant_urls):
        return "the result handed on to the gateway"
    if reading.is_payment_page(page, settings):
        errors = page.field_errors() or reading.error_texts(page)
        return f"field errors: {', '.join(sorted(errors))}" if errors else "the hosted payment page"
    if reading.shows_challenge(page, settings):
        form = reading.challenge_form(page, settings)
        pares = (
            any(name.lower() in ("pareq", "md", "termurl") for name in form.fields) or "1.0.2" in page.visible_text()
        )
        return "the 3-D Secure 1.0.2 ACS page" if pares else "the 3-D Secure challenge"
    if page.has("threeds-method-done") or "method" in page.title.lower():
        return "the method step done"
    if page.status_code >= 400 or page.has("page-error"):
        return mask_text(f"an error: {page.text('page-error-message') or page.title or page.status_code}")
    if page.has("outcome-status"):
        return f"the result ({page.text('outcome-status')})"
    if reading.refreshes_to(page) is not None and not page.forms:
        return mask_text(f"a page that waits ({page.title})" if page.title else "a page that waits")
    return mask_text(page.title)


def _has_result(fields: dict[str, str]) -> bool:
    return any(name.lower() in ("cres", "pares") for name in fields)


def page_orderid(page: Page) -> str:
    """The order a page belongs to: its summary, a form's order field, or the text of the page."""
    if page.text("orderid"):
        return page.text("orderid")
    for form in page.forms:
        for name in _ORDER_FIELDS:
            if form.fields.get(name, "").isdigit():
                return form.fields[name]
    found = _ORDER_IN_TEXT.search(page.text("threeds-method-done") or page.visible_text())
    return found.group(1) if found else ""


def party_of(page: Page, settings: PayerSettings = DEFAULT_SETTINGS) -> Party:
    """Who served what the payer opened: the ACS when it shows a 3-D Secure challenge, else the gateway."""
    return (
        "acs" if reading.shows_challenge(page, settings) and not reading.is_payment_page(page, settings) else "gateway"
    )


def submit_step(
    form: Form, settings: PayerSettings = DEFAULT_SETTINGS, merchant_urls: Sequence[str] = ()
) -> tuple[str, Party | None]:
    """What submitting ``form`` is, in words, and where it goes (None: read from the answer)."""
    if reading.card_number_control(form) is not None:
        return "pay on the hosted page", "gateway"
    if merchant_urls and reading.goes_to(form.action, merchant_urls):
        return "go back to the merchant", "merchant"
    if reading.secret_control(form) is not None or form.buttons:
        return "answer the 3-D Secure challenge", "acs"
    return f"submit {form.id or 'the form'}", None


def masked_url(url: str) -> str:
    return mask_text(url)
