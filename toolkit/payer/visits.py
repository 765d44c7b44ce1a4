"""What the payer's browser did, as records: one ``Visit`` per request, masked, timed, for diagrams and reports.

``toolkit.payer.Payer`` keeps them in ``visits``: when the request left (UTC), what the payer did
(``step``), where the request went (``to``: the gateway, the issuer's ACS, or the merchant's
``redirect_url``), the HTTP status, how long it took, what the answer showed, and the order it
concerns (read from the page); for reports, the fields sent, the redirects followed and the page
itself.  Card data never reaches a visit: URLs, fields and the page are masked when it is made.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from toolkit.masking import mask_text
from toolkit.payer.forms import Page

Party = Literal["gateway", "acs", "merchant"]
THREE_DS_FORMS = {"challenge-form": "the 3-D Secure challenge", "acs-form": "the 3-D Secure 1.0.2 ACS page"}
SUBMITS: dict[str, tuple[str, Party | None]] = {
    "payment-form": ("pay on the hosted page", "gateway"),
    "challenge-form": ("answer the 3-D Secure challenge", "acs"),
    "acs-form": ("answer the 3-D Secure 1.0.2 ACS page", "acs"),
}
_ORDER_IN_TEXT = re.compile(r"\border (\d+)")


@dataclass(frozen=True)
class Visit:
    """One request of the payer's browser, masked at birth (URL, fields sent, the page answered).

    ``final_url`` is where the redirects (``redirects``: their statuses) ended; ``body`` the page, masked.
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

    def summary(self) -> str:
        """``answer the 3-D Secure challenge: HTTP 200, the redirect to the merchant (approved)``."""
        status = f"HTTP {self.status_code}" if self.status_code is not None else "no answer"
        return f"{self.step}: {status}" + (f", {self.shows}" if self.shows else "")


def shows(page: Page) -> str:
    """What a page shows the payer, in a few words (the simulator's stable element ids)."""
    ids = {form.id for form in page.forms}
    for form_id, words in THREE_DS_FORMS.items():
        if form_id in ids:
            return words
    if "merchant-redirect" in ids:
        return f"the redirect to the merchant ({page.text('outcome-status') or '?'})"
    if "payment-form" in ids:
        errors = page.field_errors()
        return f"field errors: {', '.join(sorted(errors))}" if errors else "the hosted payment page"
    if page.has("threeds-method-done"):
        return "the method step done"
    if page.has("page-error"):
        return mask_text(f"an error: {page.text('page-error-message')}")
    if page.has("outcome-status"):
        return f"the result ({page.text('outcome-status')})"
    return ""


def page_orderid(page: Page) -> str:
    """The order a page belongs to: its summary, its redirect form, or the method page's text."""
    if page.text("orderid"):
        return page.text("orderid")
    for form in page.forms:
        if form.id == "merchant-redirect" and form.fields.get("orderid"):
            return form.fields["orderid"]
    found = _ORDER_IN_TEXT.search(page.text("threeds-method-done"))
    return found.group(1) if found else ""


def party_of(page: Page) -> Party:
    """Who served what the payer opened: the ACS when it shows a 3-D Secure page, else the gateway."""
    return "acs" if {form.id for form in page.forms} & set(THREE_DS_FORMS) else "gateway"


def masked_url(url: str) -> str:
    return mask_text(url)
