"""The explorer's forms: built from the catalogue (``toolkit.operations``) and the field registry
(``toolkit.fields``), pre-filled from faker (``toolkit.testdata``) and the outcome table.

Which outcome an operation offers is read from the catalogue too: an operation that takes a card's
CVV2 offers the card outcomes (CVV2 chooses, behaviour section 6) and the 3-D Secure 1.0.2 test
cards (the amount chooses); one that takes a ``hosted_fields_token`` (the Hosted Fields sale) offers
the card outcomes of the card the payer types into the gateway's iframes (its CVV2 chooses there too,
hosted-fields.md section 12); a card-less operation that takes an amount offers the amount rules;
anything else offers none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from toolkit.fields import FIELDS, Kind
from toolkit.masking import mask_pan
from toolkit.operations import Operation, ResponseKind
from toolkit.testdata import orders
from toolkit.testdata.cards import Card, card_for, future_expiry, random_card_number, three_ds_v1_card
from toolkit.testdata.outcomes import (
    AMOUNT_APPROVED,
    AMOUNT_RULES,
    CARD_OUTCOMES,
    EXAMPLE_CARDS,
    GENERIC_DECLINE,
    THREE_DS_V1_AMOUNTS,
    amount_for_currency,
)
from toolkit.testdata.payers import Payer, new_client_orderid, new_payer

Rule = Literal["cvv2", "amount", "3ds-v1"]
Section = Literal["required", "one of", "together", "optional"]
_LABELS = {
    "3ds-challenge": "3-D Secure challenge",
    "not-enrolled": "not enrolled (no 3-D Secure step)",
    "unknown": "unknown (acquirer unreachable)",
    "approved-4-digit-cvv": "approved (4-digit CVV2)",
    "declined": "declined (any other CVV2)",
}
RANDOM_CARD = "a random Luhn-valid card"


@dataclass(frozen=True)
class FormField:
    """One input of an operation's form."""

    name: str
    kind: Kind
    doc: str
    section: Section
    secret: bool = False
    choices: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        return self.section == "required"


def form_fields(op: Operation) -> tuple[FormField, ...]:
    """Required fields first, then the one-of groups, the fields that go together with them, the optional ones
    (catalogue order: ``Operation.fields``)."""
    sections: tuple[tuple[Section, tuple[str, ...]], ...] = (  # a name shows in the first section that has it
        ("required", op.required),
        ("one of", tuple(name for group in op.one_of for name in group)),
        ("optional", op.optional),
        ("together", tuple(name for group in op.together for name in group)),
    )
    placed: dict[str, Section] = {}
    for section, names in sections:
        placed.update({name: section for name in names if name not in placed})
    return tuple(
        FormField(name, FIELDS[name].kind, FIELDS[name].doc, placed[name], FIELDS[name].secret, FIELDS[name].choices)
        for name in op.fields
    )


@dataclass(frozen=True)
class OutcomeChoice:
    """An entry of the outcome dropdown: what the data will make the gateway answer."""

    label: str
    name: str  # the outcome's name in toolkit.testdata.outcomes (or the 1.0.2 amount)
    rule: Rule
    description: str


def _label(name: str) -> str:
    return _LABELS.get(name, name.replace("-", " "))


def by_token(op: Operation) -> bool:
    """The operation charges a card the payer typed into the gateway's Hosted Fields (``hosted_fields_token``)."""
    return "hosted_fields_token" in op.fields


def takes_card(op: Operation) -> bool:
    """A card goes with the operation: in its fields, or typed by the payer into the Hosted Fields for its token."""
    return "credit_card_number" in op.fields or by_token(op)


def outcome_rule(op: Operation) -> Rule | None:
    """How the sandbox chooses this operation's outcome, read from the catalogue."""
    if "cvv2" in op.required or by_token(op):
        return "cvv2"
    card_less = not {"credit_card_number", "orderid"} & set(op.required)
    if "amount" in op.required and card_less and op.response is not ResponseKind.FORM:
        return "amount"
    return None


def outcome_choices(op: Operation) -> tuple[OutcomeChoice, ...]:
    rule = outcome_rule(op)
    if rule == "cvv2":
        cards = [
            OutcomeChoice(_label(o.name), o.name, "cvv2", o.description) for o in (*CARD_OUTCOMES, GENERIC_DECLINE)
        ]
        if by_token(op):  # (the Hosted Fields sale: the card's CVV2 alone)
            return tuple(cards)
        v1 = [
            OutcomeChoice(f"3-D Secure 1.0.2: {result.description} ({amount})", amount, "3ds-v1", result.description)
            for amount, result in THREE_DS_V1_AMOUNTS.items()
        ]
        return (*cards, *v1)
    if rule == "amount":
        rules = [AMOUNT_APPROVED, *AMOUNT_RULES.values()]
        return tuple(OutcomeChoice(_label(r.name), r.name, "amount", f"amount rule: {r.name}") for r in rules)
    return ()


def card_choices(op: Operation) -> tuple[str, ...]:
    """Cards the payer can use (numbers never shown: ``453897******6732``); empty without a card."""
    if not takes_card(op):
        return ()
    examples = [f"example card {mask_pan(number)}" for number in EXAMPLE_CARDS]
    return (*examples, RANDOM_CARD)


def make_card(op: Operation, outcome: OutcomeChoice | None, card_label: str, holder: str) -> Card | None:
    """The card for this outcome: the 1.0.2 test card, or the chosen number with the outcome's CVV2."""
    if not takes_card(op):
        return None
    if outcome is not None and outcome.rule == "3ds-v1":
        return three_ds_v1_card(holder=holder)
    labels = card_choices(op)
    index = labels.index(card_label) if card_label in labels else 0
    number = EXAMPLE_CARDS[index] if index < len(EXAMPLE_CARDS) else random_card_number()
    if outcome is None or outcome.rule != "cvv2":  # payouts: a destination card, no CVV2
        month, year = future_expiry()
        return Card(number, month, year, "", holder)
    return card_for(outcome.name, number=number, holder=holder)


@dataclass(frozen=True)
class Context:
    """What the merchant has at hand for pre-filling: where it listens, the selected order, its card refs."""

    redirect_url: str = orders.DEFAULT_REDIRECT_URL
    callback_url: str | None = None
    client_orderid: str = ""
    orderid: str = ""
    cardrefid: str = ""
    payer_fields: Mapping[str, str] | None = None  # cres, pares, md brought back by the payer
    hosted_fields_token: str = ""  # the token the payer's Hosted Fields gave the page, not charged yet


def prefill(
    op: Operation, outcome: OutcomeChoice | None, card: Card | None, context: Context, payer: Payer | None = None
) -> dict[str, str]:
    """Values for the fields of ``op`` (blank where nothing sensible can be proposed)."""
    payer = payer or new_payer()
    follow_up = "orderid" in op.fields
    amount = _amount(op, outcome)
    candidate: dict[str, str] = {
        "client_orderid": context.client_orderid if follow_up else new_client_orderid(),
        "client-order-id": context.client_orderid if follow_up else new_client_orderid(),
        "orderid": context.orderid if follow_up else "",
        "order_desc": orders.DEFAULT_ORDER_DESC,
        "amount": "" if amount is None else format(amount, "f"),
        "currency": "" if amount is None else orders.DEFAULT_CURRENCY,
        "redirect_url": context.redirect_url,
        "server_callback_url": context.callback_url or "",
        "notify_url": context.callback_url or "",
        "cardrefid": context.cardrefid,
        "sending-card-ref-id": context.cardrefid,
        "threeDSCompInd": "Y",
        "hosted_fields_token": context.hosted_fields_token,
        **orders.BROWSER_DATA,  # (the Hosted Fields sale: what the merchant's page tells of the payer's browser)
        "period": "month",
        "interval": "1",
        **payer.fields(),
        **(card.fields() if card is not None else {}),
        **{op.wire_name(name): value for name, value in (context.payer_fields or {}).items()},
    }
    if card is not None and not card.cvv2:
        candidate.pop("cvv2")
    values = {field.name: candidate.get(field.name, "") for field in form_fields(op)}
    for group in op.one_of:  # one of each group: the card as the destination, client_orderid as the id
        chosen = next((name for name in ("credit_card_number", "client_orderid") if name in group), group[0])
        for name in group:
            if name != chosen and name in values:
                values[name] = ""
    return values


def _amount(op: Operation, outcome: OutcomeChoice | None) -> Decimal | None:
    """The amount the outcome needs; follow-ups leave it blank (the whole amount)."""
    if "amount" not in op.required:
        return None
    if outcome is not None and outcome.rule == "3ds-v1":
        return Decimal(outcome.name)
    if outcome is not None and outcome.rule == "amount":
        return amount_for_currency(outcome.name, orders.DEFAULT_CURRENCY)
    return orders.DEFAULT_AMOUNT
