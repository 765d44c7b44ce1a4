"""Checks of a request's fields against the catalogue, shared by the client and the simulator.

Every problem names the field and the rule it breaks, so that a person can fix the request
without reading the spec.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass

from toolkit.fields import FIELDS, LEGACY_SPELLINGS, Field, FormatRule, Kind, format_rule, too_long
from toolkit.money import MoneyError, currency_exponent, parse_amount
from toolkit.operations import Operation
from toolkit.plancache import PlanCache


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
    clean: bool = False,
) -> list[Problem]:
    """Everything wrong with ``fields`` for ``operation``; empty when the request is well-formed.

    ``strict=False`` checks presence, amounts, currencies, expiry dates and identifiers only, and
    leaves the other formats (Luhn, e-mail, URL...) to the gateway.  (``GatewayClient`` calls this
    strictly, or not at all with ``validate=False``.)  ``required`` replaces the operation's
    mandatory fields (a lenient simulator passes ``operation.lenient_required``).  ``clean``: the
    values are already stripped strings, none empty (the simulator's canonical fields).

    What depends on the names sent alone (the missing fields, the groups, which formats to check) is
    planned once per operation and names (``_PLANS``); each request then checks its values.
    """
    present = fields if clean else {name: text for name, value in fields.items() if (text := str(value).strip())}
    plan = _PLANS.get(operation, tuple(present), strict, required)
    problems = list(plan.missing)
    problems += [Problem(name, "holds a character that is not text (a lone surrogate): it cannot be sent as UTF-8")
                 for name, value in present.items() if not value.isascii() and not _utf8(value)]  # fmt: skip
    if plan.state_rule:
        problems.extend(_state_problem(operation, present))
    problems.extend(plan.groups)
    if plan.money:
        problems.extend(_money_problems(present))
    for name, spec, rule in plan.checks:  # (``format_problem``, its rule found once per plan)
        value = present[name]
        if len(value) > spec.max_length:
            problems.append(Problem(name, too_long(spec)))
        elif rule is not None and (broken := rule(spec, value)):
            problems.append(Problem(name, broken))
    return problems


@dataclass(frozen=True)
class _Plan:
    """What ``request_problems`` finds from the names alone, and the format checks it runs on the values."""

    missing: tuple[Problem, ...]  # required fields not sent
    state_rule: bool  # ``state`` is known and not sent: a country that needs one is a problem
    groups: tuple[Problem, ...]  # one_of and together groups broken
    money: bool  # an amount or a currency is sent
    checks: tuple[tuple[str, Field, FormatRule | None], ...]  # the fields whose format is checked, and the rule


def _make_plan(operation: Operation, names: tuple[str, ...], strict: bool, required: tuple[str, ...] | None) -> _Plan:
    sent = frozenset(names)
    needed = operation.required if required is None else required
    groups = [
        Problem(group[0], f"{operation.name} needs one of: {', '.join(group)}")
        for group in operation.one_of
        if not any(name in sent for name in group)
    ]
    for group in operation.together:
        given = [name for name in group if name in sent]
        if given and len(given) != len(group):
            missing = next(name for name in group if name not in sent)
            groups.append(Problem(missing, f"goes together with {', '.join(given)}"))
    for replacing, refused in operation.excludes:  # (the v4 sale's token stands for the card: hosted-fields.md 3.3)
        if replacing in sent:
            groups += [Problem(name, f"is refused beside {replacing}, which replaces it") for name in refused
                       if name in sent]  # fmt: skip
    checks = []
    for name in names:
        spec = FIELDS.get(name)
        if spec is None or spec.kind in _MONEY or not (strict or spec.kind in _ALWAYS_CHECKED):
            continue
        checks.append((name, spec, format_rule(spec)))
    return _Plan(
        missing=tuple(Problem(name, f"is required by {operation.name}") for name in needed if name not in sent),
        state_rule="state" not in sent and "state" in operation.fields,
        groups=tuple(groups),
        money="amount" in sent or "currency" in sent,
        checks=tuple(checks),
    )


_PLANS = PlanCache(_make_plan)


def _state_problem(operation: Operation, present: Mapping[str, str]) -> list[Problem]:
    country = present.get("country", "")
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


def _squashed(name: str) -> str:
    return name.lower().replace("-", "").replace("_", "")


def respelled(op: Operation, sent: str) -> str | None:
    """The operation's field that ``sent`` is another spelling of (alias, legacy spelling, case), or None."""
    legacy = LEGACY_SPELLINGS.get(sent)
    for wire in op.fields:
        if sent in FIELDS[wire].names or legacy == wire or _squashed(sent) == _squashed(wire):
            return wire
    return None


MISSPELLING_CUTOFF = 0.8  # difflib's ratio: "ammount" and "amount" 0.92, "email" and "emails" 0.91


def meant_field(op: Operation, sent: str) -> str | None:
    """The field of ``op`` that ``sent`` (a name it does not know) most likely meant: another spelling of it
    (``card_printed_name``), a near miss (``ammount``, ``curency``) or a part of one name only (``zip``,
    ``card_number``); None when nothing is close or several are."""
    spelled = respelled(op, sent)
    if spelled is not None:
        return spelled
    squashed = _squashed(sent)
    close = difflib.get_close_matches(squashed, [_squashed(name) for name in op.fields], 1, MISSPELLING_CUTOFF)
    if close:
        return next(name for name in op.fields if _squashed(name) == close[0])
    within = [name for name in op.fields if len(squashed) >= 3 and squashed in _squashed(name)]  # zip, card_number
    return within[0] if len(within) == 1 else None


def _utf8(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
