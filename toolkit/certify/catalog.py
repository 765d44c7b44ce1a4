"""What a suite holds, read from its feature files: flows, scenarios and their tags.

``gatekit certify`` uses it before running anything: ``--list`` and ``--list-tags`` show what can
be selected, and a ``--tags`` expression naming a tag that no scenario carries is refused in one
line.  A Scenario Outline counts once per example, as it runs, titled as the run titles it
(``example_title``).  A scenario's tags are its own, its feature's, its rule's and its examples' (as
pytest-bdd marks them); ``--tags`` is a pytest marker expression over them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_bdd.feature import get_features
from pytest_bdd.parser import Examples, Feature, ScenarioTemplate

from toolkit.certify.pytest_compat import Expression, marker_expression


class SelectionError(ValueError):
    """A ``--tags`` expression that cannot be used; the message says why and what to run instead."""


@dataclass(frozen=True)
class Entry:
    """One scenario (an outline's example is one) of one flow."""

    flow: str
    scenario: str
    tags: frozenset[str]
    path: Path


def scenario_tags(feature: Feature, template: ScenarioTemplate) -> set[str]:
    return _own_tags(feature, template) | {tag for examples in template.examples for tag in examples.tags}


def _own_tags(feature: Feature, template: ScenarioTemplate) -> set[str]:
    """A scenario's tags but its examples': its own, its feature's and its rule's."""
    rule_tags = template.rule.tags if template.rule is not None else set()
    return set(template.tags) | set(feature.tags) | set(rule_tags)


def feature_tags(features: Iterable[Feature]) -> set[str]:
    return {
        tag
        for feature in features
        for template in feature.scenarios.values()
        for tag in scenario_tags(feature, template)
    }


def example_title(template: ScenarioTemplate, example: Mapping[str, str]) -> str:
    """An outline's title rendered with its example (``A card that is expired is declined``); when the title names
    no column, the example's values follow it in parentheses.  A plain scenario's title is its own."""
    rendered = template.render(dict(example)).name
    if example and rendered == template.name:
        return f"{rendered} ({', '.join(map(str, example.values()))})"
    return rendered


def read(folders: Sequence[Path]) -> list[Entry]:
    """Every scenario of the feature files under ``folders``, flow by flow; an outline once per example."""
    return [
        entry
        for feature in get_features([str(folder) for folder in folders])
        for template in feature.scenarios.values()
        for entry in _entries(feature, template)
    ]


def _entries(feature: Feature, template: ScenarioTemplate) -> Iterator[Entry]:
    flow, path, tags = feature.name or Path(feature.filename).stem, Path(feature.filename), _own_tags(feature, template)
    examples: list[tuple[Examples, dict[str, str]]] = [
        (block, example) for block in template.examples for example in block.as_contexts()
    ]
    if not examples:
        yield Entry(flow, template.name, frozenset(tags), path)
    for block, example in examples:  # (tagged as pytest-bdd marks each example: with its own block's tags)
        yield Entry(flow, example_title(template, example), frozenset(tags | set(block.tags)), path)


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
