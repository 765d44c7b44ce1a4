"""The life of a transaction (spec section 3; behaviour sections 3, 10 and 11), written once.

Every kind of transaction the simulator makes, with its order-stage, whether it opens an order, whether it
settles, what it means for the order's money, and which follow-up applies to it.  The simulator's rules
(``toolkit.simulator.rules``) read it; the catalogue (``toolkit.operations``) says which kind each operation
makes and which kinds a follow-up operation applies to, and the explorer reads it there.  Pure data: it imports
nothing of the toolkit, so the catalogue may read it without loading the simulator.

- A kind's name is the gateway's transaction type: a callback's ``type``, a status's ``transaction-type``.
- Its order-stage is ``{stage}_{status}`` (``auth_approved``), ``{stage}_3d_validating`` while the payer is
  challenged (behaviour section 3: ``sale_3d_validating``).
- An order is opened by its first transaction (its id is the orderid); a follow-up adds a later transaction to
  it (same orderid): capture, void, return (a reversal, or a cancel of a hold), chargeback, payout-pay.
- Money (``Money``): for every order, at every moment, charged >= returned + charged back; a hold's captures
  stay within what it reserved (``toolkit.simulator.rules.followups`` counts it).

Adding a kind is one entry in ``_KINDS`` (and, made by an operation, its ``makes`` in the catalogue) plus the
handler that writes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cache


class Money(StrEnum):
    """What a transaction of a kind means for its order's money."""

    NONE = "none"  # moves nothing: a check (account verification, payout check, card eligibility)
    CHARGE = "charge"  # its amount is charged to the payer: what a return or a chargeback may take back
    HOLD = "hold"  # reserves its amount; what is charged is what its captures took of it
    CAPTURE = "capture"  # takes (part of) what a hold reserved
    TAKE_BACK = "take back"  # gives the payer back part of what was charged (reversal, chargeback)
    RELEASE = "release"  # undoes a whole transaction or hold (void, cancel)
    PAYOUT = "payout"  # sends the merchant's money out, from its payout balance


# The follow-ups: what may be done to an order once its first transaction is approved.
CAPTURE, VOID, RETURN, CHARGEBACK, CARD_REF, PAYOUT_PAY = (
    "capture", "void", "return", "chargeback", "card-ref", "payout-pay",
)  # fmt: skip
THREE_DS_VALIDATING = "3d_validating"  # the state in an order-stage while the payer is challenged


@dataclass(frozen=True)
class FollowUp:
    """A follow-up and the kinds of later transaction it adds to the order (none: a card reference)."""

    name: str
    makes: tuple[str, ...]
    summary: str


@dataclass(frozen=True)
class TransactionKind:
    """One kind of transaction: its name (the transaction type), order-stage, money and follow-ups."""

    name: str
    stage: str  # the order-stage's prefix: ``{stage}_{status}``
    money: Money = Money.NONE
    initial: bool = False  # opens an order the merchant names by client_orderid: a repeat is checked against it
    settles: bool = False  # approved, it settles (``settlement_after``) unless voided
    follow_ups: tuple[str, ...] = ()  # what applies to an approved one

    @property
    def holds(self) -> bool:
        """A hold (a preauth): what its order charged is what captures took of it, not its amount."""
        return self.money is Money.HOLD

    @property
    def charges(self) -> bool:
        """Its order charges the payer (its amount, or a hold's captures): its money rules apply."""
        return self.money in (Money.CHARGE, Money.HOLD)


_TAKEN_BACK = (RETURN, CHARGEBACK)
_FOLLOW_UPS = (
    FollowUp(CAPTURE, ("capture",), "takes (part of) what a hold reserved"),
    FollowUp(VOID, ("void",), "undoes the latest unsettled capture, else the order itself, whole"),
    FollowUp(RETURN, ("reversal", "cancel"), "gives back (part of) what was charged; cancels an uncaptured hold"),
    FollowUp(CHARGEBACK, ("chargeback",), "the issuer takes back (part of) what was charged (the control API)"),
    FollowUp(CARD_REF, (), "stores the card of a final approved card transaction as a card reference"),
    FollowUp(PAYOUT_PAY, ("payout-pay",), "executes a registered, approved payout check, once"),
)
# In this order the kinds a follow-up applies to are named (``applies_to``).
_KINDS = (
    # opening an order
    TransactionKind("sale", "sale", Money.CHARGE, initial=True, settles=True,
                    follow_ups=(VOID, *_TAKEN_BACK, CARD_REF)),
    TransactionKind("preauth", "auth", Money.HOLD, initial=True, follow_ups=(CAPTURE, VOID, *_TAKEN_BACK, CARD_REF)),
    TransactionKind("account-verification", "verify", initial=True, follow_ups=(CARD_REF,)),
    TransactionKind("rebill", "rebill", Money.CHARGE, initial=True, settles=True, follow_ups=_TAKEN_BACK),
    # made by the clock; each charge has a client_orderid of its own (the subscription's, numbered)
    TransactionKind("recurring-charge", "recurring", Money.CHARGE, settles=True, follow_ups=_TAKEN_BACK),
    TransactionKind("transfer", "transfer", Money.CHARGE, initial=True, settles=True, follow_ups=_TAKEN_BACK),
    TransactionKind("payout", "payout", Money.PAYOUT, initial=True),
    TransactionKind("payout-check", "payout_check", initial=True, follow_ups=(PAYOUT_PAY,)),
    TransactionKind("pan-eligibility", "eligibility"),
    # later transactions of an order, added by a follow-up
    TransactionKind("capture", "capture", Money.CAPTURE, settles=True),
    TransactionKind("void", "void", Money.RELEASE),
    TransactionKind("cancel", "cancel", Money.RELEASE),
    TransactionKind("reversal", "reversal", Money.TAKE_BACK),
    TransactionKind("chargeback", "chargeback", Money.TAKE_BACK),
    TransactionKind("payout-pay", "payout", Money.PAYOUT),
)  # fmt: skip

KINDS: dict[str, TransactionKind] = {kind.name: kind for kind in _KINDS}
FOLLOW_UPS: dict[str, FollowUp] = {follow_up.name: follow_up for follow_up in _FOLLOW_UPS}
INITIAL = tuple(kind.name for kind in _KINDS if kind.initial)


def stage(kind: str, state: str) -> str:
    """The order-stage of a transaction of ``kind`` in ``state`` (a status, or ``THREE_DS_VALIDATING``)."""
    return f"{KINDS[kind].stage}_{state}"


@cache
def applies_to(follow_up: str) -> tuple[str, ...]:
    """The kinds of transaction ``follow_up`` applies to (opened by one of them, approved)."""
    if follow_up not in FOLLOW_UPS:
        raise KeyError(f"unknown follow-up {follow_up!r}; known follow-ups: {', '.join(FOLLOW_UPS)}")
    return tuple(kind.name for kind in _KINDS if follow_up in kind.follow_ups)


@cache
def kinds_with(money: Money) -> tuple[str, ...]:
    """The kinds whose transactions mean ``money`` (``Money.TAKE_BACK``: reversal and chargeback)."""
    return tuple(kind.name for kind in _KINDS if kind.money is money)


def is_later(kind: str) -> bool:
    """A later transaction of an order (a follow-up adds it), not one that opens an order."""
    return any(kind in follow_up.makes for follow_up in _FOLLOW_UPS)
