"""Checks of a request's fields against the catalogue, shared by the client and the simulator.

Every problem names the field and the rule it breaks, so that a person can fix the request
without reading the spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from toolkit.fields import FIELDS, Kind, format_problem
from toolkit.money import MoneyError, currency_exponent, parse_amount
from toolkit.operations import Operation


@dataclass(frozen=True)
class Problem:
    """One broken rule: ``field`` and a sentence that says what is wrong."""

    field: str
    rule: str

    def __str__(self) -> str:
        return f"{self.field}: {self.rule}"


# Checked in lenient mode too: an identifier the gateway could not store, and the card's expiry.
_ALWAYS_CHECKED = frozenset({Kind.ID, Kind.MONTH, Kind.YEAR})
# Checked by ``_money_problems``: the amount's precision depends on the currency.
_MONEY = frozenset({Kind.AMOUNT, Kind.CURRENCY})


# Behaviour section 10: ``state`` is required for these countries.
STATE_COUNTRIES = ("US", "CA", "AU")


def request_problems(
    operation: Operation,
    fields: Mapping[str, str],
    *,
    strict: bool = True,
    required: tuple[str, ...] | None = None,
) -> list[Problem]:
    """Everything wrong with ``fields`` for ``operation``; empty when the request is well-formed.

    ``strict=False`` checks presence, amounts, currencies, expiry dates and identifiers only, and
    leaves the other formats (Luhn, e-mail, URL...) to the gateway.  (``GatewayClient`` calls this
    strictly, or not at all with ``validate=False``.)  ``required`` replaces the operation's
    mandatory fields (a lenient simulator passes ``operation.lenient_required``).
    """
    present = {name: text for name, value in fields.items() if (text := str(value).strip())}
    needed = operation.required if required is None else required
    problems = [Problem(name, f"is required by {operation.name}") for name in needed if name not in present]
    problems.extend(_state_problem(operation, present))
    for group in operation.one_of:
        if not any(name in present for name in group):
            problems.append(Problem(group[0], f"{operation.name} needs one of: {', '.join(group)}"))
    for group in operation.together:
        sent = [name for name in group if name in present]
        if sent and len(sent) != len(group):
            missing = next(name for name in group if name not in present)
            problems.append(Problem(missing, f"goes together with {', '.join(sent)}"))
    problems.extend(_money_problems(present))
    for name, value in present.items():
        spec = FIELDS.get(name)
        if spec is None or spec.kind in _MONEY or not (strict or spec.kind in _ALWAYS_CHECKED):
            continue
        rule = format_problem(spec, value)
        if rule:
            problems.append(Problem(name, rule))
    return problems


def _state_problem(operation: Operation, present: Mapping[str, str]) -> list[Problem]:
    country = present.get("country", "")
    # operation.fields builds its tuple on each use: asked last, only for a country that needs a state
    if country in STATE_COUNTRIES and "state" not in present and "state" in operation.fields:
        return [Problem("state", f"is required when country is {', '.join(STATE_COUNTRIES)} ({country} was sent)")]
    return []


def missing_fields(operation: Operation, fields: Mapping[str, str]) -> list[str]:
    """The operation's mandatory fields that ``fields`` leaves out or leaves empty."""
    return [name for name in operation.required if not str(fields.get(name, "")).strip()]


def _money_problems(present: Mapping[str, str]) -> list[Problem]:
    currency = present.get("currency")
    problems = []
    if currency is not None:
        try:
            currency_exponent(currency)
        except MoneyError as exc:
            problems.append(Problem(exc.field, exc.rule))
            currency = None
    if "amount" in present:
        try:
            parse_amount(present["amount"], currency)
        except MoneyError as exc:
            problems.append(Problem(exc.field, exc.rule))
    return problems
