"""``PayerError``: the payer could not find its way (a page that did not offer what it expected, a refused card).

In a module of its own so that every part of the payer raises it without importing the HTTP payer; ``from
toolkit.payer import PayerError`` is where users find it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit.masking import mask_text

if TYPE_CHECKING:
    from toolkit.payer.forms import Page


class PayerError(RuntimeError):
    """The page did not offer what the payer expected; the message says what it looked for and what the page
    showed (its forms and inputs, masked).  ``page`` is that page."""

    def __init__(self, message: str, page: Page | None = None) -> None:
        super().__init__(mask_text(message))
        self.page = page
