"""Which test data gives which result: the one outcome table (behaviour section 6).

The simulator decides with it, steps and notebooks choose data with it, so that one feature
file passes against the simulator and a real sandbox.  Card transactions: CVV2 chooses.
Card-less operations (payouts, rebills, recurring charges): the amount's minor units choose.
3-D Secure 1.0.2: two test cards, and amounts 1.00-1.03 choose the authentication result.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from toolkit.models import Status
from toolkit.money import from_minor_units, to_minor_units

CHALLENGE_PASSWORD = "hint"  # the 3-D Secure challenge password that approves


@dataclass(frozen=True)
class CardOutcome:
    """What a card transaction with this CVV2 ends in."""

    name: str
    cvv2: str
    status: Status
    # "none" (no 3-D Secure step: not enrolled), "challenge" (3-D Secure 2.x method step, then a challenge) or
    # "frictionless" (3-D Secure 2.x method step, then a decision without a challenge)
    three_ds: str
    error_code: str = ""
    error_message: str = ""
    description: str = ""

    @property
    def is_decline(self) -> bool:
        return self.status is Status.DECLINED


# ISO 8583 response codes for the declines.
CARD_OUTCOMES: tuple[CardOutcome, ...] = (
    CardOutcome("approved", "123", Status.APPROVED, "none", description="approved"),
    CardOutcome("approved-4-digit-cvv", "1234", Status.APPROVED, "none", description="approved (4-digit CVV2)"),
    CardOutcome(
        "3ds-challenge", "321", Status.APPROVED, "challenge",
        description="3-D Secure challenge; the password 'hint' approves, anything else declines",
    ),
    CardOutcome(
        "not-enrolled", "111", Status.APPROVED, "none",
        description="approved at once, without any 3-D Secure step (card not enrolled)",
    ),
    CardOutcome(
        "unknown", "217", Status.UNKNOWN, "none", "91", "Acquirer unreachable", "status unknown (acquirer unreachable)"
    ),
    CardOutcome("expired-card", "101", Status.DECLINED, "none", "54", "Expired card", "declined: expired card"),
    CardOutcome(
        "insufficient-funds", "116", Status.DECLINED, "none", "51", "Insufficient funds", "declined: insufficient funds"
    ),
    CardOutcome(
        "not-permitted", "119", Status.DECLINED, "none", "57", "Transaction not permitted to cardholder",
        "declined: not permitted to cardholder",
    ),
    CardOutcome("stolen-card", "209", Status.DECLINED, "none", "43", "Pick up card, stolen", "declined: stolen card"),
)  # fmt: skip
GENERIC_DECLINE = CardOutcome("declined", "999", Status.DECLINED, "none", "05", "Do not honor", "declined (any other)")
CHALLENGE_FAILED = CardOutcome(
    "3ds-failed", "321", Status.DECLINED, "challenge", "05", "3-D Secure authentication failed", "challenge failed"
)

# The simulator's own outcomes, beyond the sandbox's table (behaviour section 11, [sim]): the two frictionless
# paths of 3-D Secure 2 after the method step.  A sandbox declines these CVV2s (any other CVV2 declines), so a
# scenario that uses them runs on the simulator only (``@simulator``).
SIMULATOR_OUTCOMES: tuple[CardOutcome, ...] = (
    CardOutcome(
        "3ds-frictionless", "331", Status.APPROVED, "frictionless",
        description="3-D Secure 2: method step, then approved without a challenge (simulator only)",
    ),
    CardOutcome(
        "3ds-frictionless-declined", "332", Status.DECLINED, "frictionless", "05",
        "3-D Secure authentication declined (frictionless)",
        "3-D Secure 2: method step, then declined without a challenge (simulator only)",
    ),
)  # fmt: skip
SIMULATOR_ONLY_CVV2 = frozenset(outcome.cvv2 for outcome in SIMULATOR_OUTCOMES)

_BY_CVV = {outcome.cvv2: outcome for outcome in (*CARD_OUTCOMES, *SIMULATOR_OUTCOMES)}
_BY_NAME = {outcome.name: outcome for outcome in (*CARD_OUTCOMES, *SIMULATOR_OUTCOMES, GENERIC_DECLINE)}


def outcome_for_cvv(cvv2: str) -> CardOutcome:
    """The sandbox rule: the CVV2 chooses; any CVV2 not in the table declines (the simulator's own outcomes
    are in the table here: the simulator decides with it)."""
    return _BY_CVV.get(cvv2.strip(), GENERIC_DECLINE)


def card_outcome(name: str) -> CardOutcome:
    """Look an outcome up by name (``insufficient-funds``); KeyError lists the names."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown outcome {name!r}; known: {', '.join(_BY_NAME)}") from None


def decline_outcomes() -> tuple[CardOutcome, ...]:
    """Every declining CVV2 of the table (for a Scenario Outline), the generic one last."""
    return (*(o for o in CARD_OUTCOMES if o.is_decline), GENERIC_DECLINE)


# --- Card-less operations: the amount decides (behaviour section 6, [sim]) ----------------------


@dataclass(frozen=True)
class AmountOutcome:
    name: str
    status: Status
    error_code: str = ""
    error_message: str = ""


AMOUNT_RULES: dict[str, AmountOutcome] = {
    "13": AmountOutcome("insufficient-funds", Status.DECLINED, "51", "Insufficient funds"),
    "17": AmountOutcome("unknown", Status.UNKNOWN, "91", "Acquirer unreachable"),
}
AMOUNT_APPROVED = AmountOutcome("approved", Status.APPROVED)


def outcome_for_amount(amount: Decimal | str, currency: str) -> AmountOutcome:
    """Minor units ending in 13 decline, in 17 end ``unknown``, anything else is approved."""
    minor = str(to_minor_units(amount, currency))
    return AMOUNT_RULES.get(minor[-2:], AMOUNT_APPROVED)


_APPROVED_ENDING = 42  # any other ending approves; 42 is the one the builders use (10.42)


def _ending(outcome: str) -> int:
    """The last two digits of the minor units that give ``outcome``; KeyError lists the outcomes."""
    for ending, rule in AMOUNT_RULES.items():
        if rule.name == outcome:
            return int(ending)
    if outcome == AMOUNT_APPROVED.name:
        return _APPROVED_ENDING
    raise KeyError(
        f"unknown amount outcome {outcome!r}; known: approved, {', '.join(r.name for r in AMOUNT_RULES.values())}"
    )


def amount_for(outcome: str, base: Decimal = Decimal("10")) -> Decimal:
    """An amount that gives ``outcome`` (``approved``, ``insufficient-funds``, ``unknown``), two decimals."""
    return base + Decimal(_ending(outcome)) / 100


# --- 3-D Secure 1.0.2 test cards (behaviour section 6, [gw]) ------------------------------------

THREE_DS_V1_CARDS = ("4444000022224444", "4444000011118888")


@dataclass(frozen=True)
class ThreeDSv1Result:
    """The authentication result a 3-D Secure 1.0.2 test amount selects."""

    eci: str
    authenticated: bool
    description: str


THREE_DS_V1_AMOUNTS: dict[str, ThreeDSv1Result] = {
    "1.00": ThreeDSv1Result("05", True, "fully authenticated"),
    "1.01": ThreeDSv1Result("06", True, "attempted authentication"),
    "1.02": ThreeDSv1Result("07", False, "authentication failed"),
    "1.03": ThreeDSv1Result("07", True, "authentication unavailable; approved without liability shift"),
}
THREE_DS_V1_DEFAULT = THREE_DS_V1_AMOUNTS["1.00"]


def is_three_ds_v1_card(number: str) -> bool:
    return number.strip() in THREE_DS_V1_CARDS


def three_ds_v1_result(amount: Decimal | str) -> ThreeDSv1Result:
    return THREE_DS_V1_AMOUNTS.get(f"{Decimal(str(amount)):.2f}", THREE_DS_V1_DEFAULT)


# Luhn-valid cards seen in public examples (behaviour section 6).
EXAMPLE_CARDS = ("4538977399606732", "4444555566661111")


def amount_for_currency(outcome: str, currency: str) -> Decimal:
    """``amount_for`` in any currency: 1000 minor units plus the rule's two-digit ending.

    ``insufficient-funds``: 10.13 EUR, 1013 JPY, 1.013 KWD; ``approved``: 10.42 EUR, 1042 JPY.
    """
    return from_minor_units(1000 + _ending(outcome), currency)
