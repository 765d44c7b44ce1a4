"""What a suite holds, read from its feature files: flows, scenarios and their tags.

``gatekit certify`` uses it before running anything: ``--list`` and ``--list-tags`` show what can
be selected, and a ``--tags`` expression naming a tag that no scenario carries is refused in one
line.  A scenario's tags are its own, its feature's, its rule's and its examples' (as pytest-bdd
marks them); ``--tags`` is a pytest marker expression over them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_bdd.feature import get_features
from pytest_bdd.parser import Feature, ScenarioTemplate

from toolkit.certify.pytest_compat import Expression, marker_expression


class SelectionError(ValueError):
    """A ``--tags`` expression that cannot be used; the message says why and what to run instead."""


@dataclass(frozen=True)
class Entry:
    """One scenario (an outline counts once) of one flow."""

    flow: str
    scenario: str
    tags: frozenset[str]
    path: Path


def scenario_tags(feature: Feature, template: ScenarioTemplate) -> set[str]:
    rule_tags = template.rule.tags if template.rule is not None else set()
    example_tags = {tag for examples in template.examples for tag in examples.tags}
    return set(template.tags) | set(feature.tags) | set(rule_tags) | example_tags


def feature_tags(features: Iterable[Feature]) -> set[str]:
    return {
        tag
        for feature in features
        for template in feature.scenarios.values()
        for tag in scenario_tags(feature, template)
    }


def read(folders: Sequence[Path]) -> list[Entry]:
    """Every scenario of the feature files under ``folders``, flow by flow."""
    return [
        Entry(
            feature.name or Path(feature.filename).stem,
            name,
            frozenset(scenario_tags(feature, template)),
            Path(feature.filename),
        )
        for feature in get_features([str(folder) for folder in folders])
        for name, template in feature.scenarios.items()
    ]


def tag_counts(entries: Iterable[Entry]) -> Counter[str]:
    return Counter(tag for entry in entries for tag in entry.tags)


def _compile(expression: str) -> Expression:
    try:
        return marker_expression(expression)  # pytest's own -m parser
    except SyntaxError as error:
        raise SelectionError(f"--tags {expression!r}: {error.msg}") from None


def select(entries: Sequence[Entry], expression: str | None) -> list[Entry]:
    """The entries ``expression`` selects; SelectionError for a bad expression or an unknown tag."""
    if not expression:
        return list(entries)
    compiled = _compile(expression)
    unknown = sorted(compiled.idents() - set(tag_counts(entries)))
    if unknown:
        tags = ", ".join(unknown)
        raise SelectionError(f"--tags {expression!r}: no scenario is tagged {tags} (gatekit certify --list-tags)")
    return [entry for entry in entries if compiled.evaluate(_has_tag(entry))]


def _has_tag(entry: Entry) -> Callable[..., bool]:
    return lambda name, /, **kwargs: name in entry.tags
