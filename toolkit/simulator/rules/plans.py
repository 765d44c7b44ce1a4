"""What a new transaction is planned with: its card columns and its outcome (behaviour section 6).

The decision is made when the transaction is created (``plan_*`` columns) and carried out later
(``Engine.decide``): CVV2 chooses for cards, the amount for card-less operations.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Protocol

from toolkit.fields import card_brand, card_expiry
from toolkit.models import Status
from toolkit.testdata.outcomes import card_outcome, outcome_for_amount

# What a transaction keeps of a card: never the PAN or CVV (``card_values``).
CARD_COLUMNS = ("card_bin", "card_last4", "card_type", "card_exp_month", "card_exp_year", "cardholder")


def card_values(fields: Mapping[str, str]) -> dict[str, str]:
    """The ``CARD_COLUMNS`` of a request's card: BIN, last four, brand, expiry (``01``/``2099``), holder."""
    number = fields.get("credit_card_number", "")
    month, year = fields.get("expire_month", ""), fields.get("expire_year", "")
    expiry = card_expiry(month, year)
    if expiry is not None:
        month, year = f"{expiry[0]:02d}", str(expiry[1])
    return {
        "card_bin": number[:6],
        "card_last4": number[-4:],
        "card_type": card_brand(number),
        "card_exp_month": month,
        "card_exp_year": year,
        "cardholder": fields.get("card_printed_name", ""),
    }


class Outcome(Protocol):
    """What the outcome tables give (``CardOutcome``, ``AmountOutcome``): status and error."""

    @property
    def status(self) -> Status: ...
    @property
    def error_code(self) -> str: ...
    @property
    def error_message(self) -> str: ...


def plan_of(outcome: Outcome) -> dict[str, str]:
    """The ``plan_*`` columns of a transaction: the outcome it will be decided with."""
    return {"plan_status": outcome.status.value, "plan_code": outcome.error_code, "plan_message": outcome.error_message}


def amount_plan(amount: str, currency: str) -> dict[str, str]:
    """The plan of a card-less transaction (rebill, recurring charge, payout, transfer): the amount decides."""
    return plan_of(outcome_for_amount(amount, currency))


def has_expired(now: float, month: str, year: str) -> bool:
    """The card's last valid month (``1``/``01``, ``99``/``2099``) is before the month of ``now`` (UTC).

    False when the values are no expiry date (a stored card always has one; the format checks speak for
    a request's)."""
    expiry = card_expiry(month, year)
    if expiry is None:
        return False
    today = time.gmtime(now)  # (UTC, as a struct: cheaper than a datetime)
    return (expiry[1], expiry[0]) < (today.tm_year, today.tm_mon)


def expiry_plan(
    now: float, month: str, year: str, *, lenient: bool, warnings: list[str], what: str = "the card"
) -> dict[str, str] | None:
    """The plan of a transaction on an expired card (declined "Expired card", as the sandbox declines a direct
    sale), or None when the card is valid; a lenient simulator lets it through with a warning (None)."""
    if not has_expired(now, month, year):
        return None
    problem = f"{what} expired {month}/{year}"
    if lenient:
        warnings.append(f"{problem}; the gateway declines it (lenient: accepted)")
        return None
    return plan_of(card_outcome("expired-card"))
