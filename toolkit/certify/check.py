"""Feature files checked before anything runs: every step has a phrase, every value is one its phrase knows.

Run when pytest collects a module of scenarios (a feature file under ``gatekit certify``, a ``scenarios()``
module under plain ``pytest``): a module whose feature file has a misspelled keyword (``Scenaro:``, ``Givn``)
or a line Gherkin cannot read (``toolkit.certify.keywords``), a step no phrase matches (``Given a card that is aproved``
under gatekit's phrases and the merchant's own ``conftest.py`` steps) or a value its phrase does not know
(``toolkit.certify.choices``) fails to collect, with one line per problem naming the file, the line, the
step and the closest known phrases or the valid values; pytest then stops before any scenario runs
(exit 2).  ``gatekit certify --check`` collects only, and prints those lines.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pytest_bdd.compat import get_fixture_names, getfixturedefs
from pytest_bdd.steps import StepFunctionContext, step_function_context_registry

from toolkit.certify import naming
from toolkit.certify.choices import one_of
from toolkit.certify.keywords import problems_in as keyword_lines
from toolkit.certify.keywords import written_steps
from toolkit.certify.pytest_compat import fixture_manager

_STEP_FIXTURE_PREFIX = "pytestbdd_stepdef_"
_UNPARSED = re.compile(r"\bFile: (.+?\.feature)$", re.MULTILINE)  # how pytest-bdd's GherkinParseError names its file
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
    candidates = set(written_steps().get(kind, ()))
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


def shown_path(item: pytest.Item, filename: str) -> str:
    shown = _shown(item.config, Path(filename))
    if shown is not None:
        return shown
    identity = naming.identity(item)
    gatekits = identity is not None and identity.suite == "gatekit"
    return f"gatekit's {identity.path}" if identity is not None and gatekits else str(Path(filename).resolve())


def _shown(config: pytest.Config, path: Path) -> str | None:
    """``path`` as the user knows it: relative to where pytest was started, or to the rootdir; None elsewhere."""
    path = path.resolve()
    for base in (config.invocation_params.dir, config.rootpath):
        if path.is_relative_to(base.resolve()):
            return path.relative_to(base.resolve()).as_posix()
    return None


def keyword_problems(config: pytest.Config, paths: Iterable[Path]) -> list[str]:
    """Misspelled keywords and lines Gherkin cannot read in the feature files at ``paths`` (``certify.keywords``)."""
    named = {path: _shown(config, path) or _in_suite(path) for path in sorted(set(paths))}
    return [line for path, shown in named.items() for line in keyword_lines(path, shown)]


def _in_suite(path: Path) -> str:
    """``gatekit's three_ds/sale_3ds.feature`` for a file of gatekit's own suite; the path otherwise."""
    from toolkit import suite

    try:
        inside = path.resolve().relative_to(suite.features_dir().resolve())
    except (ValueError, suite.SuiteMissing):
        return str(path)
    return f"gatekit's {inside.as_posix()}"


def _feature_files(collector: pytest.Collector, report: pytest.CollectReport, items: list[pytest.Item]) -> set[Path]:
    """The feature files of a module: its own path (a ``.feature`` collected as a module), its scenarios' files, and
    the file pytest-bdd could not parse when a ``scenarios()`` module failed to import."""
    files = {Path(collector.path)} if Path(collector.path).suffix == ".feature" else set()
    if report.failed:
        files |= {Path(name) for name in _UNPARSED.findall(str(report.longrepr))}
    templates = (naming.template_of(item) for item in items)
    return files | {Path(template.feature.filename) for template in templates if template is not None}


def refuse(report: pytest.CollectReport, collector: pytest.Collector) -> None:
    """A module's collect report failed with its problems, when it has any (before anything runs): misspelled
    keywords and lines Gherkin cannot read first (a feature file that did not parse fails here with them), then
    steps no phrase matches and values no phrase knows."""
    items = [node for node in report.result if isinstance(node, pytest.Item)] if report.passed else []
    keywords = keyword_problems(collector.config, _feature_files(collector, report, items))
    if keywords:
        report.outcome = "failed"
        report.longrepr = "\n".join(keywords)
        report.result = []
        return
    if not report.passed or not items:
        return
    problems = problems_in(items)
    if problems:
        report.outcome = "failed"
        report.longrepr = "\n".join(map(str, problems))
        report.result = []
