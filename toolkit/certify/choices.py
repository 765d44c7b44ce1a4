"""Phrases whose placeholders take known values: ``Given a card that {description}`` knows its cards.

``one_of`` matches like pytest-bdd's ``parsers.parse`` (so a value it does not know still finds its phrase)
and says which values it knows; ``toolkit.certify.check`` refuses a feature file that uses another one
before anything runs, naming the closest known values::

    @given(one_of("a card that {description}", description=CARDS, noun="card"), target_fixture="card")
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from pytest_bdd import parsers


class one_of(parsers.parse):  # (named like the parsers it sits beside: parsers.parse, parsers.re)
    """A ``parse`` phrase with the values each named field may take."""

    def __init__(self, text: str, *, noun: str | None = None, extra_types: dict[str, Any] | None = None,
                 **fields: Iterable[str]) -> None:  # fmt: skip
        super().__init__(text, extra_types=extra_types or {})
        self.fields = {name: tuple(values) for name, values in fields.items()}
        self.noun = noun

    def unknown_values(self, text: str) -> list[str]:
        """What is wrong with the values of ``text`` (a step this phrase matches): one sentence per field."""
        found = self.parse_arguments(text) or {}
        problems = []
        for name, valid in self.fields.items():
            value = found.get(name)
            if value is None or value in valid:
                continue
            noun = self.noun or name
            close = difflib.get_close_matches(str(value), valid, n=2, cutoff=0.6)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            problems.append(f"{value!r} is not a {noun} this phrase knows{hint} (known: {', '.join(valid)})")
        return problems
