"""Feature files checked before anything runs: every step has a phrase, every value is one its phrase knows.

Run when pytest collects a module of scenarios (a feature file under ``gatekit certify``, a ``scenarios()``
module under plain ``pytest``): a module with a step no phrase matches (``Given a card that is aproved``
under gatekit's phrases and the merchant's own ``conftest.py`` steps) or a value its phrase does not know
(``toolkit.certify.choices``) fails to collect, with one line per problem naming the file, the line, the
step and the closest known phrases or the valid values; pytest then stops before any scenario runs
(exit 2).  ``gatekit certify --check`` collects only, and prints those lines.
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pytest_bdd.compat import get_fixture_names, getfixturedefs
from pytest_bdd.steps import StepFunctionContext, step_function_context_registry

from toolkit.certify import naming
from toolkit.certify.choices import one_of
from toolkit.certify.pytest_compat import fixture_manager

_STEP_FIXTURE_PREFIX = "pytestbdd_stepdef_"
_SHAPE = re.compile(r'\d+(?:\.\d+)?|\{[^}]*\}|"[^"]*"')  # what varies between uses of one phrase


@dataclass(frozen=True)
class Problem:
    path: str  # as the user knows it: relative to the rootdir, or inside gatekit's suite
    line: int
    step: str  # "Given a card that is aproved"
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.step}: {self.reason}"


def phrases_for(node: pytest.Item) -> list[StepFunctionContext]:
    """The step definitions visible to ``node`` (gatekit's, the merchant's conftest.py, the module's own)."""
    manager = fixture_manager(node)
    found = []
    for name in get_fixture_names(manager):
        if not name.startswith(_STEP_FIXTURE_PREFIX):
            continue
        for definition in getfixturedefs(manager, name, node) or ():
            context = step_function_context_registry.get(definition.func)
            if context is not None:
                found.append(context)
    return found


def problems_in(items: list[pytest.Item]) -> list[Problem]:
    """What cannot run among the scenarios of one collected module (each file line said once)."""
    scenarios = [item for item in items if naming.template_of(item) is not None]
    if not scenarios:
        return []
    phrases = phrases_for(scenarios[0])  # one module: its items see the same definitions
    found: dict[tuple[str, int, str], Problem] = {}
    for item in scenarios:
        scenario = naming.scenario_of(item)
        if scenario is None:
            continue
        path = shown_path(item, scenario.feature.filename)
        for step in scenario.steps:
            text = f"{step.keyword.strip()} {step.name}"
            key = (path, step.line_number, text)
            if key in found:
                continue
            reason = _what_is_wrong(step, phrases)
            if reason is not None:
                found[key] = Problem(path, step.line_number, text, reason)
    return list(found.values())


def _what_is_wrong(step: Any, phrases: list[StepFunctionContext]) -> str | None:
    matching = [p for p in phrases if (p.type is None or p.type == step.type) and p.parser.is_matching(step.name)]
    if not matching:
        close = closest_phrases(step.type, step.name, phrases)
        hint = f"; closest: {'; '.join(repr(phrase) for phrase in close)}" if close else ""
        return f"no phrase matches this {step.type} step{hint}"
    complaints = [p.parser.unknown_values(step.name) if isinstance(p.parser, one_of) else [] for p in matching]
    if all(complaints):  # no phrase takes it as written
        return "; ".join(complaints[-1])
    return None


def closest_phrases(kind: str, text: str, phrases: list[StepFunctionContext], n: int = 3) -> list[str]:
    """Known phrases of this kind that look most like ``text``: how they are written in gatekit's features,
    and the phrases' own texts (``a card that {description}``) when they are not regular expressions."""
    candidates = set(_written_steps().get(kind, ()))
    for phrase in phrases:
        if (phrase.type is None or phrase.type == kind) and not hasattr(phrase.parser, "regex"):
            candidates.add(phrase.parser.name)
    scored = sorted((-difflib.SequenceMatcher(None, text, c).ratio(), c) for c in candidates)
    shapes: dict[str, str] = {}  # one per shape: "a sale of 10.00 EUR", not also "of 1.00" and "of 15.00"
    for negative_ratio, candidate in scored:
        if -negative_ratio < 0.5 or len(shapes) == n:
            break
        shapes.setdefault(_SHAPE.sub("#", candidate), candidate)
    return list(shapes.values())


@functools.cache
def _written_steps() -> dict[str, frozenset[str]]:
    """Every step of gatekit's own features, by kind (given, when, then): phrases as people write them."""
    from pytest_bdd.feature import get_features

    from toolkit import suite

    try:
        features = get_features([str(suite.features_dir())])
    except suite.SuiteMissing:
        return {}
    by_kind: dict[str, set[str]] = {}
    for feature in features:
        for scenario in feature.scenarios.values():
            for step in scenario.steps:
                if "<" not in step.name:
                    by_kind.setdefault(step.type, set()).add(step.name)
    return {kind: frozenset(texts) for kind, texts in by_kind.items()}


def shown_path(item: pytest.Item, filename: str) -> str:
    path = Path(filename).resolve()
    for base in (item.config.invocation_params.dir, item.config.rootpath):
        if path.is_relative_to(base.resolve()):
            return path.relative_to(base.resolve()).as_posix()
    identity = naming.identity(item)
    return f"gatekit's {identity.path}" if identity is not None and identity.suite == "gatekit" else str(path)


def refuse(report: pytest.CollectReport) -> None:
    """A module's collect report failed with its problems, when it has any (before anything runs)."""
    if not report.passed or not report.result:
        return
    items = [node for node in report.result if isinstance(node, pytest.Item)]
    problems = problems_in(items)
    if problems:
        report.outcome = "failed"
        report.longrepr = "\n".join(map(str, problems))
        report.result = []
