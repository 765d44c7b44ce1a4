"""What a scenario is called: its Gherkin title, its flow and its text, read from a collected pytest item.

pytest names a scenario after the function pytest-bdd made for it
(``test_a_card_that_is_outcome_is_declined[expired-Expired card]``); people know it by its Gherkin
title (``A card that is expired is declined``).  The live progress line, the Allure tree, the JUnit
XML and the Markdown summary all use these names.  An outline's title is rendered with its example;
when the title has no ``<placeholder>`` the example's values follow it in parentheses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from pytest_bdd.parser import Scenario, ScenarioTemplate
from pytest_bdd.scenario import scenario_wrapper_template_registry

from toolkit.certify.catalog import example_title, scenario_tags
from toolkit.operations import OPERATIONS

EXAMPLE_PARAM = "_pytest_bdd_example"  # the parameter pytest-bdd gives an outline's example


def template_of(item: pytest.Item) -> ScenarioTemplate | None:
    """The Gherkin scenario behind a test, or None for a plain test."""
    try:
        return scenario_wrapper_template_registry.get(getattr(item, "obj", None))  # type: ignore[arg-type]
    except TypeError:  # not weak-referenceable: not a scenario
        return None


def example_of(item: pytest.Item) -> dict[str, str]:
    callspec = getattr(item, "callspec", None)
    example = callspec.params.get(EXAMPLE_PARAM) if callspec is not None else None
    return dict(example) if isinstance(example, dict) else {}


def scenario_of(item: pytest.Item) -> Scenario | None:
    """The scenario as it runs: an outline rendered with the item's example."""
    template = template_of(item)
    return template.render(example_of(item)) if template is not None else None


def title(item: pytest.Item) -> str:
    """The Gherkin title (``A card that is expired is declined``); a plain test's own name otherwise."""
    template = template_of(item)
    return example_title(template, example_of(item)) if template is not None else item.name


def flow(item: pytest.Item) -> str:
    """The flow a scenario belongs to: its feature's name (the file's name when it has none)."""
    template = template_of(item)
    if template is not None:
        return template.feature.name or _stem(template.feature.filename)
    return item.nodeid.split("::")[0]


def operation(tags: set[str]) -> str | None:
    """The catalogue operation a scenario is tagged with (``@sale``, ``@payout_pay``...)."""
    return next((tag for tag in sorted(tags) if tag in OPERATIONS), None)


def tags(item: pytest.Item) -> set[str]:
    """A scenario's tags: its own, its feature's, its rule's and its examples' (as pytest-bdd marks them)."""
    template = template_of(item)
    return scenario_tags(template.feature, template) if template is not None else set()


def gherkin(item: pytest.Item) -> str | None:
    """The scenario as written, rendered with its example: ``Feature:``, ``Scenario:`` and the steps."""
    scenario = scenario_of(item)
    if scenario is None:
        return None
    lines = [f"Feature: {scenario.feature.name}", f"  {_keyword(scenario)}: {scenario.name}"]
    lines += [f"    {step.keyword} {step.name}" for step in scenario.steps]
    return "\n".join(lines)


@dataclass(frozen=True)
class Identity:
    """Who a scenario is, run after run: its suite (``gatekit`` for gatekit's own flows, the merchant's folder
    otherwise), its feature file's path inside that suite and its title as written (an outline's, unrendered).

    Never the install path: moving the virtual environment or upgrading Python keeps a scenario's Allure
    history (``full_name``, ``package`` and the suite labels are made from this, not from pytest's node id).
    """

    suite: str  # "gatekit", or the merchant's feature folder relative to the rootdir ("features")
    path: str  # "three_ds/sale_3ds.feature"
    scenario: str  # "The payer passes the 3-D Secure 2 challenge"

    @property
    def full_name(self) -> str:
        return f"{self.path}: {self.scenario}"

    @property
    def package(self) -> str:
        return ".".join([self.suite.replace("/", "."), *PurePosixPath(self.path).with_suffix("").parts])

    @property
    def folder(self) -> str:
        """The feature's folder inside its suite (``three_ds``), or its file's name when it has none."""
        parent = PurePosixPath(self.path).parent
        return str(parent) if str(parent) != "." else self.path


def identity(item: pytest.Item, roots: list[Path] | None = None) -> Identity | None:
    """A scenario's identity (None for a plain test); ``roots``: the merchant's feature folders, when known."""
    template = template_of(item)
    if template is None:
        return None
    from toolkit import suite

    feature = Path(template.feature.filename).resolve()
    rootdir = item.config.rootpath.resolve()
    try:
        candidates = [("gatekit", _resolved(suite.features_dir()))]
    except suite.SuiteMissing:
        candidates = []
    candidates += [(_relative_name(folder, rootdir), folder) for folder in map(_resolved, roots or [])]
    for name, folder in candidates:
        if folder is not None and feature.is_relative_to(folder):
            return Identity(name, feature.relative_to(folder).as_posix(), template.name)
    inside = feature.relative_to(rootdir).as_posix() if feature.is_relative_to(rootdir) else feature.name
    relative = PurePosixPath(inside)
    if len(relative.parts) > 1:
        return Identity(relative.parts[0], str(PurePosixPath(*relative.parts[1:])), template.name)
    return Identity(".", str(relative), template.name)


def _resolved(folder: Path) -> Path | None:
    try:
        return folder.resolve()
    except (OSError, RuntimeError):
        return None


def _relative_name(folder: Path | None, rootdir: Path) -> str:
    if folder is None:
        return "."
    return folder.relative_to(rootdir).as_posix() if folder.is_relative_to(rootdir) else folder.name


def _keyword(scenario: Any) -> str:
    return str(getattr(scenario, "keyword", "") or "Scenario").strip()


def _stem(path: str) -> str:
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name.removesuffix(".feature")
