"""Test cards: the sandbox accepts any Luhn-valid number and CVV2 chooses the outcome (behaviour section 6).

``card_for("insufficient-funds")`` gives a card whose CVV2 the outcome table maps to that
result; the number is one of the public example cards unless one is given.  A ``Card`` never
shows its number or CVV2 in ``repr`` or ``str`` (``toolkit.masking``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date

from toolkit.fields import ascii_digits, luhn_ok
from toolkit.masking import CVV_MASK, mask_pan
from toolkit.testdata.outcomes import EXAMPLE_CARDS, THREE_DS_V1_CARDS, CardOutcome, card_outcome, outcome_for_cvv

DEFAULT_HOLDER = "GATEKIT TEST"
_VALID_YEARS = 3  # test cards expire this many years from today


@dataclass(frozen=True, repr=False)
class Card:
    """A card as the request carries it; ``fields()`` gives the wire names."""

    number: str
    expire_month: str
    expire_year: str
    cvv2: str
    holder: str = DEFAULT_HOLDER

    def __repr__(self) -> str:
        return (
            f"Card(number={mask_pan(self.number)!r}, expire_month={self.expire_month!r}, "
            f"expire_year={self.expire_year!r}, cvv2={CVV_MASK!r}, holder={self.holder!r})"
        )

    def __str__(self) -> str:
        return f"{mask_pan(self.number)} {self.expire_month}/{self.expire_year}"

    @property
    def outcome(self) -> CardOutcome:
        """What the sandbox and the simulator do with this card's CVV2."""
        return outcome_for_cvv(self.cvv2)

    def fields(self) -> dict[str, str]:
        """``credit_card_number``, ``card_printed_name``, ``expire_month``, ``expire_year``, ``cvv2``."""
        return {
            "credit_card_number": self.number,
            "card_printed_name": self.holder,
            "expire_month": self.expire_month,
            "expire_year": self.expire_year,
            "cvv2": self.cvv2,
        }


def future_expiry(today: date | None = None) -> tuple[str, str]:
    """(month, year) a few years ahead: ``("12", "2029")`` in 2026."""
    year = (today or date.today()).year + _VALID_YEARS
    return "12", str(year)


def card_for(
    outcome_name: str = "approved",
    *,
    number: str | None = None,
    holder: str = DEFAULT_HOLDER,
    today: date | None = None,
) -> Card:
    """A card that ends in ``outcome_name`` (a name of ``outcomes.CARD_OUTCOMES``, ``SIMULATOR_OUTCOMES`` or
    ``declined``).

    KeyError lists the known names; ValueError when ``number`` fails the Luhn check.
    """
    outcome = card_outcome(outcome_name)
    number = number or EXAMPLE_CARDS[0]
    if not (ascii_digits(number) and luhn_ok(number)):
        raise ValueError(f"card number {mask_pan(number)} is not Luhn-valid: the sandbox would refuse it")
    month, year = future_expiry(today)
    return Card(number, month, year, outcome.cvv2, holder)


def three_ds_v1_card(index: int = 0, *, holder: str = DEFAULT_HOLDER, today: date | None = None) -> Card:
    """One of the two 3-D Secure 1.0.2 test cards; the amount (1.00-1.03) then chooses the result."""
    return card_for("approved", number=THREE_DS_V1_CARDS[index], holder=holder, today=today)


def random_card_number(bin: str = "444455", length: int = 16, *, rng: random.Random | None = None) -> str:
    """A Luhn-valid number starting with ``bin`` (the sandbox accepts any Luhn-valid number)."""
    if not ascii_digits(bin) or not 12 <= length <= 19 or len(bin) >= length:
        raise ValueError(f"bin {bin!r}, length {length}: the bin must be digits, the length 12 to 19 and longer")
    rng = rng or random.SystemRandom()
    body = bin + "".join(rng.choice("0123456789") for _ in range(length - len(bin) - 1))
    return body + luhn_check_digit(body)


def luhn_check_digit(partial: str) -> str:
    """The digit that makes ``partial + digit`` pass the Luhn check."""
    return next(digit for digit in "0123456789" if luhn_ok(partial + digit))
