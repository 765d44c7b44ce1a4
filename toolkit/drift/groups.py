"""Differences as a person reads them: one group per kind, field and pair of values, with how often it was found
and where (its operations, its scenarios); fields of one kind found in the very same places, one group (``amount,
bin, currency``); a run's timings, one group per kind (their operations' values as a range).  Groups come most
frequent first; accepted ones (``drift.toml``) apart from the others.

    groups = grouped(report.differences)
    [(g.kind, g.field, g.count, g.operations) for g in groups]   # [("field-extra", "descriptor", 121, ("status",))]
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from toolkit.drift.compare import Difference, _worded, seconds

TIMINGS = ("answer-time", "processing-time")
_SECONDS = re.compile(r"(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))? s")


@dataclass(frozen=True)
class Group:
    """Differences of one kind and field whose values read the same (the numbers and ids in them aside)."""

    kind: str
    fields: tuple[str, ...]  # (none for most kinds; several when they were found in the very same places)
    a: str  # A's value (a timing group: the range of its operations' values)
    b: str
    accepted: str  # the drift.toml reason, "" when not accepted
    note: str  # how finely it was measured (timings)
    differences: tuple[Difference, ...]

    @property
    def field(self) -> str:
        return ", ".join(self.fields)

    @property
    def count(self) -> int:
        return len(self.differences)

    @property
    def operations(self) -> tuple[str, ...]:
        """The operations it concerns (a callback or a redirect: that word)."""
        return tuple(sorted({d.operation or d.step for d in self.differences if d.operation or d.step != "-"}))

    @property
    def scenarios(self) -> tuple[str, ...]:
        """The scenarios it was found in, in the order of the run (none for the run's timings)."""
        return tuple(dict.fromkeys(d.scenario for d in self.differences if d.kind not in TIMINGS))

    @property
    def where(self) -> str:
        """Its operations and scenarios, in words: ``status, in 6 scenarios``; ``sale, in A card ... declined``."""
        operations = ", ".join(self.operations) or "-"
        if self.kind in TIMINGS:
            return f"{operations} (medians over the run)"
        scenarios = self.scenarios
        return f"{operations}, in {scenarios[0] if len(scenarios) == 1 else f'{len(scenarios)} scenarios'}"

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "field": self.field, "fields": list(self.fields), "a": self.a, "b": self.b,
                "count": self.count, "operations": list(self.operations), "scenarios": list(self.scenarios),
                "accepted": self.accepted, "note": self.note}  # fmt: skip


def grouped(differences: Iterable[Difference]) -> list[Group]:
    """The differences in groups, most frequent first (then in the order they were found)."""
    members: dict[tuple[str, ...], list[Difference]] = {}
    for difference in differences:
        values = ("", "") if difference.kind in TIMINGS else (_worded(difference.a), _worded(difference.b))
        members.setdefault((difference.kind, difference.field, difference.accepted, *values), []).append(difference)
    alike: dict[tuple[Any, ...], list[list[Difference]]] = {}  # the same but for the field, in the same places
    for (kind, _, *rest), found in members.items():
        places = frozenset((d.scenario, d.step) for d in found)
        alike.setdefault((kind, *rest, places), []).append(found)
    groups = [_group(fields) for fields in alike.values()]
    return sorted(groups, key=lambda group: -group.count)


def _group(fields: list[list[Difference]]) -> Group:
    found = [difference for field in fields for difference in field]
    first = found[0]
    a, b = first.a, first.b
    if first.kind in TIMINGS:
        a, b = _range(d.a for d in found), _range(d.b for d in found)
    notes = "; ".join(dict.fromkeys(d.note for d in found if d.note))
    names = tuple(field[0].field for field in fields if field[0].field)
    return Group(first.kind, names, a, b, first.accepted, notes, tuple(found))


def _range(values: Iterable[str]) -> str:
    """Seconds (``0.25 s``, ``0.1-0.15 s``) as one range of them all."""
    bounds = []
    for text in values:
        match = _SECONDS.fullmatch(text)
        if match is None:
            return text
        bounds += [float(match[1]), float(match[2] or match[1])]
    low, high = seconds(min(bounds)), seconds(max(bounds))
    return f"{low} s" if low == high else f"{low}-{high} s"


def by_kind(differences: Iterable[Difference]) -> str:
    """How many differences of each kind, most first: ``field-extra 121, answer-time 2``."""
    counted = Counter(difference.kind for difference in differences)
    return ", ".join(f"{kind} {count}" for kind, count in counted.most_common())


__all__ = ["Group", "by_kind", "grouped"]
