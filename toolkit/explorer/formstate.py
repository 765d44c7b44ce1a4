"""The explorer's form: an operation of the catalogue, an outcome of the table, a card, the values to send.

Pre-filled from faker and the outcome table (``toolkit.explorer.forms``); card data is chosen with the
outcome and card lists, never typed, and shown masked.  ``ExplorerModel`` is a ``FormState`` and
says what the merchant has at hand for pre-filling (``_context``: where it listens, the selected order).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from toolkit.explorer import forms
from toolkit.masking import mask_value
from toolkit.operations import OPERATIONS, Operation, get_operation
from toolkit.testdata.cards import DEFAULT_HOLDER, Card


class FormState:
    """The form: ``operation``, its ``fields``, ``outcomes`` and ``cards``, and the ``values`` to send."""

    def __init__(self, operation: str = "sale") -> None:
        self.operations: tuple[Operation, ...] = tuple(OPERATIONS.values())
        self.operation = get_operation(operation)
        self.values: dict[str, str] = {}
        self._prefilled: dict[str, str] = {}
        self._card: Card | None = None
        self.select_operation(operation)

    def _context(self) -> forms.Context:
        """What the merchant has at hand for pre-filling (a subclass knows its receiver and orders)."""
        return forms.Context()

    def select_operation(self, name: str) -> None:
        """A catalogue operation: its fields, outcomes and cards; the form is pre-filled."""
        self.operation = get_operation(name)
        self.fields = forms.form_fields(self.operation)
        self.outcomes = forms.outcome_choices(self.operation)
        self.outcome = self.outcomes[0] if self.outcomes else None
        self.cards = forms.card_choices(self.operation)
        self.card_label = self.cards[0] if self.cards else ""
        self.prefill()

    def select_outcome(self, label: str) -> None:
        """An outcome of the table: sets the card's CVV2 (or the 1.0.2 card) and the amount that give it."""
        self.outcome = next(choice for choice in self.outcomes if choice.label == label)
        self._apply_card(amount_too=True)

    def select_card(self, label: str) -> None:
        if label not in self.cards:
            raise ValueError(f"unknown card {label!r}; choose one of {', '.join(self.cards)}")
        self.card_label = label
        self._apply_card(amount_too=False)

    def prefill(self) -> None:
        """Fresh faker data, fresh ids, the outcome's card and amount; the selected order for follow-ups."""
        self._card = forms.make_card(self.operation, self.outcome, self.card_label, DEFAULT_HOLDER)
        self.values = forms.prefill(self.operation, self.outcome, self._card, self._context())
        self._prefilled = dict(self.values)

    def _apply_card(self, *, amount_too: bool) -> None:
        self._card = forms.make_card(self.operation, self.outcome, self.card_label, DEFAULT_HOLDER)
        fresh = forms.prefill(self.operation, self.outcome, self._card, self._context())
        names = {"credit_card_number", "card_printed_name", "expire_month", "expire_year", "cvv2"}
        self._refill(fresh, names | ({"amount", "currency"} if amount_too else set()))

    def _refill(self, fresh: Mapping[str, str], names: Iterable[str]) -> None:
        """Take these fields of the form from ``fresh``, as if pre-filled (so not noted as edited)."""
        for name in names:
            if name in self.values:
                self.values[name] = self._prefilled[name] = fresh[name]

    def set_value(self, name: str, value: str) -> None:
        """Edit a field; card data is chosen with the outcome and card lists, never typed or shown."""
        spec = next((f for f in self.fields if f.name == name), None)
        if spec is None:
            raise KeyError(f"{self.operation.name} has no field {name!r}")
        if spec.secret:
            if value != self.display_value(name):
                raise ValueError(f"{name} is card data: choose it with the outcome and card lists")
            return
        self.values[name] = value

    def display_value(self, name: str) -> str:
        return mask_value(name, self.values.get(name, ""))

    def display_values(self) -> dict[str, str]:
        """The form as it may be shown: card number masked, CVV2 as ***."""
        return {name: self.display_value(name) for name in self.values}
