"""Transfers between cards and card-eligibility sends (spec 4.3, behaviour section 11).

- ``transfer`` (v4): from a card (number and expiry) or a stored card (``card_recurring_payment_id``) to a
  card number (``destination-card-no``) or a stored card (``destination_card_recurring_payment_id``).
- ``transfer-by-ref`` (v2): from a stored card (``source-card-ref-id``; without one, from the merchant) to a
  stored card (``destination-card-ref-id``).
- ``transfer-by-ref`` (v4): a deposit to a card number (the family's deposit-to-card example).
- ``pan-eligibility/send``: whether a stored card may send money.

Every card reference must be one of the merchant's (another merchant's is refused as unknown, naming the
field).  A card whose expiry has passed on the simulator's clock is declined "Expired card" (behaviour
section 11: a stored reference does not make an expired card valid); otherwise the amount chooses the
outcome (``outcomes.outcome_for_amount``).  The transaction (``transfer``) keeps the source card's columns
(the destination's when the money comes from the merchant) and the masked destination in ``extra``.

A deposit (the money comes from the merchant: ``transfer-by-ref`` without a source, the v4 ``transfer-by-ref``)
spends the merchant's payout balance as a payout does (behaviour section 12, ``payouts.spend_balance``): in the
balance's currency only, declined "Insufficient funds" beyond it, its amount held from the balance unless declined.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolkit.operations import ResponseKind
from toolkit.simulator.rules import payouts
from toolkit.simulator.rules.cards import card_ref, ref_columns, ref_expiry_plan
from toolkit.simulator.rules.engine import Call, Engine, Result
from toolkit.simulator.rules.plans import amount_plan, card_values, expiry_plan
from toolkit.simulator.storage import dumps


class Side:
    """One side of a transfer: its card columns and the plan of an expired card (None when valid)."""

    def __init__(self, columns: dict[str, str], expired: dict[str, str] | None, ref: str = "") -> None:
        self.columns, self.expired, self.ref = columns, expired, ref

    def masked(self) -> dict[str, str]:
        """What ``extra`` keeps of the side: BIN, last four and the reference (never the number)."""
        kept = {"bin": self.columns.get("card_bin", ""), "last4": self.columns.get("card_last4", "")}
        return {**kept, "cardrefid": self.ref} if self.ref else kept


def stored_side(engine: Engine, call: Call, field: str, what: str) -> Side | None:
    """The stored card a reference field names (None when the field is not sent)."""
    cardrefid = call.fields.get(field)
    if not cardrefid:
        return None
    ref = card_ref(engine, call.merchant.login, cardrefid, field)
    return Side(ref_columns(ref), ref_expiry_plan(engine, ref, call, what), str(ref["cardrefid"]))


def card_side(engine: Engine, call: Call, number: str, fields: Mapping[str, str]) -> Side:
    """A card sent by number (with its expiry when the request carries one)."""
    columns = card_values({**fields, "credit_card_number": number})
    month, year = fields.get("expire_month", ""), fields.get("expire_year", "")
    expired = expiry_plan(
        engine.clock.now(), month, year, lenient=call.lenient, warnings=call.warnings, what="the source card"
    )
    return Side(columns, expired)


def _transfer(engine: Engine, call: Call, source: Side | None, destination: Side) -> Result:
    """The ``transfer`` transaction from ``source`` (None: the merchant, a deposit) to ``destination``."""
    fields = call.fields
    if source is None:
        payouts.check_currency(call)
    expired = (source.expired if source else None) or destination.expired
    plan = expired or amount_plan(fields["amount"], fields["currency"])
    extra: dict[str, Any] = {"destination": destination.masked()}
    if source is not None:
        extra["source"] = source.masked()
    columns = (source or destination).columns
    cardrefid = source.ref if source else destination.ref
    tx = engine.new_tx(call, call.operation.makes, **{**columns, "cardrefid": cardrefid}, extra=dumps(extra), **plan)
    if source is None:  # the merchant's money (behaviour section 12)
        tx = payouts.spend_balance(engine, tx, plan, what="deposit")
    return Result(ResponseKind.ASYNC, engine.schedule(tx))


def transfer(engine: Engine, call: Call) -> Result:
    """v4 transfer: a source and a destination, each a card or a stored card (the catalogue's one_of)."""
    fields = call.fields
    with engine.store.transaction():
        source = stored_side(engine, call, "card_recurring_payment_id", "the source card") or card_side(
            engine, call, fields.get("credit_card_number", ""), fields
        )
        destination = stored_side(engine, call, "destination_card_recurring_payment_id", "the destination card")
        if destination is None:
            destination = Side(card_values({"credit_card_number": fields["destination-card-no"]}), None)
        return _transfer(engine, call, source, destination)


def transfer_by_ref(engine: Engine, call: Call) -> Result:
    """v2 transfer-by-ref: stored card to stored card; without ``source-card-ref-id``, from the merchant."""
    with engine.store.transaction():
        source = stored_side(engine, call, "source-card-ref-id", "the source card")
        destination = stored_side(engine, call, "destination-card-ref-id", "the destination card")
        assert destination is not None  # a mandatory field (checks.check_fields)
        return _transfer(engine, call, source, destination)


def transfer_by_ref_v4(engine: Engine, call: Call) -> Result:
    """v4 transfer-by-ref: a deposit from the merchant to the card number ``destination-card-no``."""
    number = call.fields["destination-card-no"]
    with engine.store.transaction():
        return _transfer(engine, call, None, Side(card_values({"credit_card_number": number}), None))


def pan_eligibility_send(engine: Engine, call: Call) -> Result:
    """Whether the stored card ``sending-card-ref-id`` may send money: approved, or declined when it expired."""
    with engine.store.transaction():
        sender = stored_side(engine, call, "sending-card-ref-id", "the sending card")
        assert sender is not None  # a mandatory field
        tx = engine.new_tx(call, call.operation.makes, **sender.columns, **(sender.expired or {}))
        return Result(ResponseKind.ASYNC, engine.schedule(tx))


def install(engine: Engine) -> None:
    engine.register("transfer", transfer)
    engine.register("transfer_by_ref", transfer_by_ref)
    engine.register("transfer_by_ref_v4", transfer_by_ref_v4)
    engine.register("pan_eligibility_send", pan_eligibility_send)
