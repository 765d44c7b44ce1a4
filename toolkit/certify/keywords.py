"""Misspelled Gherkin keywords, and lines Gherkin cannot read, named before anything runs.

Gherkin takes a line it does not know for description text where a description may stand, and stops
with "unexpected token" elsewhere.  So ``Scenaro: ...`` as a feature's first scenario turns it and its
steps into the feature's description (the scenario silently disappears), ``Givn a card ...`` as a
scenario's first line into the scenario's description (the next step then misses its ``card``), and
``Thne ...`` after a step stops the parser.  Each such line is named with its file, its line and the
keyword it resembles (``difflib``, against the keywords of the file's dialect: ``# language: fr``
reads French ones); a line Gherkin cannot read for another reason is named with what it expects there.

Only lines at a keyword's place are looked at, so that prose is left alone:

- a header (``Featur:``, ``Scenaro:``, ``Scenario Outlin:``, ``Exampels:``): words and a colon that
  resemble a header keyword, before the feature or after a step (where Gherkin takes no description),
  or in a description when what follows is what the keyword introduces (steps; a table for examples);
- a step (``Givn``, ``Wen``, ``Thne``): a word and more text, the word resembling a step keyword, in a
  scenario once its steps have begun; in its description's place (before the first step) only when
  the rest reads like a step written in gatekit's features or in the same file.

A feature's or a rule's description ("Given that ...", "Scenarios below ...") is prose: no step is
looked for in it.  ``toolkit.certify.runner`` runs this over every feature file before ``gatekit
certify`` starts pytest (and for ``--check`` and ``--list``); ``toolkit.certify.check`` at collection.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from gherkin.dialect import Dialect
from gherkin.errors import CompositeParserException, ParserError, ParserException
from gherkin.parser import Parser

CUTOFF = 0.75  # difflib's ratio: Givn/Given 0.89, Wen/When 0.86, Thne/Then 0.75, Exampels/Examples 0.88
_LANGUAGE = re.compile(r"^\s*#\s*language\s*:\s*([a-zA-Z\-_]+)\s*$")
_HEADER_WORDS = 3  # "Scenario Outline", "Plan du scénario": a header keyword has at most this many words
_KINDS = {"#StepLine": "a step", "#TableRow": "a table row", "#DocStringSeparator": "a doc string",
          "#TagLine": "a tag", "#BackgroundLine": "Background:", "#ScenarioLine": "Scenario:",
          "#ExamplesLine": "Examples:", "#RuleLine": "Rule:", "#FeatureLine": "Feature:"}  # fmt: skip


@dataclass(frozen=True)
class Finding:
    """One line of a feature file that Gherkin would not read as its author meant."""

    line: int
    text: str  # the line as written, stripped
    reason: str  # "'Scenaro' is not a Gherkin keyword; did you mean 'Scenario'?"

    def shown(self, path: str) -> str:
        """``features/a.feature:7: Scenaro: A card: 'Scenaro' is not a Gherkin keyword; did you mean 'Scenario'?``"""
        where = f"{path}:{self.line}" if self.line else path
        text = f"{self.text} " if self.text.endswith(":") else f"{self.text}: " if self.text else ""
        return f"{where}: {text}{self.reason}"


@dataclass(frozen=True)
class Keywords:
    """A dialect's keywords, by what they open."""

    headers: dict[str, str]  # "Scenario Outline" -> "scenario", "Examples" -> "examples", "Rule" -> "feature"
    steps: tuple[str, ...]  # "Given", "When", "Then", "And", "But" (and "*")

    def header(self, text: str) -> str | None:
        """The header keyword ``text`` opens with (``Scenario: ...`` -> ``Scenario``), exactly as written."""
        prefix, colon, _ = text.partition(":")
        return prefix.strip() if colon and prefix.strip() in self.headers else None

    def is_step(self, text: str) -> bool:
        return any(text.startswith(f"{keyword} ") or text == keyword for keyword in self.steps)

    def header_like(self, text: str) -> str | None:
        """The header keyword a ``Words: ...`` line resembles without being it."""
        prefix, colon, _ = text.partition(":")
        words = prefix.split()
        if not colon or not 0 < len(words) <= _HEADER_WORDS or not all(map(_is_word, words)):
            return None
        return _closest(" ".join(words), self.headers)

    def step_like(self, text: str) -> tuple[str, str, str] | None:
        """The step keyword a ``Word more text`` line opens with a resemblance of, the word(s) as written and the
        rest of the line."""
        best: tuple[float, str, str, str] | None = None
        for keyword in self.steps:
            count = len(keyword.split())
            words = text.split(maxsplit=count)
            if len(words) <= count or not all(map(_is_word, words[:count])):
                continue
            said = " ".join(words[:count])
            score = _ratio(said, keyword)
            if said != keyword and score >= CUTOFF and (best is None or score > best[0]):
                best = (score, keyword, said, words[count])
        return best[1:] if best is not None else None


@cache
def keywords_of(language: str) -> Keywords:
    dialect = Dialect.for_name(language) or Dialect.for_name("en")
    assert dialect is not None
    opens = {"feature": [*dialect.feature_keywords, *dialect.rule_keywords],
             "scenario": [*dialect.scenario_keywords, *dialect.scenario_outline_keywords,
                          *dialect.background_keywords],
             "examples": dialect.examples_keywords}  # fmt: skip
    headers = {keyword.strip(): kind for kind, words in opens.items() for keyword in words}
    step_words = [*dialect.given_keywords, *dialect.when_keywords, *dialect.then_keywords, *dialect.and_keywords,
                  *dialect.but_keywords]  # fmt: skip
    steps = tuple(dict.fromkeys(word.strip() for word in step_words if word.strip()))
    return Keywords(headers, steps)


@cache
def written_steps() -> dict[str, frozenset[str]]:
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


def problems_in(path: Path, shown: str) -> list[str]:
    """One line per finding of the feature file at ``path`` (named ``shown``), with gatekit's steps as the steps
    people write."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return [finding.shown(shown) for finding in findings(text, _all_written())]


@cache
def _all_written() -> tuple[str, ...]:
    return tuple(sorted({text for texts in written_steps().values() for text in texts}))


def findings(text: str, written: Iterable[str] = ()) -> list[Finding]:
    """What is wrong with a feature file's ``text``: misspelled keywords first, then what Gherkin cannot read.

    ``written``: steps as people write them (gatekit's features): a line in a scenario's description place is a
    misspelled step only when its rest reads like one of them, or like a step of this file."""
    lines = text.splitlines()
    keywords = keywords_of(_language(lines))
    known = [*written, *_steps_of(lines, keywords)]
    misspelled = list(_misspellings(lines, keywords, known))
    corrected = list(lines)  # (read again as meant: what else Gherkin cannot read, without the misspellings' echoes)
    for finding, written, meant in misspelled:
        corrected[finding.line - 1] = corrected[finding.line - 1].replace(written, meant, 1)
    found = [finding for finding, _, _ in misspelled]
    seen = {finding.line for finding in found}
    return found + [finding for finding in _unreadable("\n".join(corrected), lines) if finding.line not in seen]


def _misspellings(lines: list[str], keywords: Keywords, known: list[str]) -> Iterator[tuple[Finding, str, str]]:
    """Each misspelled keyword: the finding, the word(s) as written and the keyword meant."""
    place, in_steps = "start", False  # what the last header opened (nothing yet); whether its steps have begun
    for number, text in _significant(lines):
        header = keywords.header(text)
        if header is not None:
            place, in_steps = keywords.headers[header], False
            continue
        if text.startswith("|") or keywords.is_step(text):
            in_steps = in_steps or (place == "scenario" and not text.startswith("|"))
            continue
        meant = keywords.header_like(text)
        before = in_steps or place == "start"  # (where Gherkin takes no description: the line can only be a keyword)
        if meant is not None and (before or _introduces(keywords.headers[meant], number, lines, keywords)):
            yield _misspelled(number, text, meant, text.partition(":")[0].strip())
            place, in_steps = keywords.headers[meant], False
            continue
        step = keywords.step_like(text) if place == "scenario" else None
        if step is not None and (in_steps or difflib.get_close_matches(step[2], known, n=1, cutoff=CUTOFF)):
            yield _misspelled(number, text, step[0], step[1])
            in_steps = True


def _introduces(kind: str, number: int, lines: list[str], keywords: Keywords) -> bool:
    """Whether the line after ``number`` is what a ``kind`` header introduces: steps, or an example table."""
    following = next((text for _, text in _significant(lines, start=number)), "")
    if kind == "examples":
        return following.startswith("|")
    return kind == "scenario" and (keywords.is_step(following) or keywords.step_like(following) is not None)


def _misspelled(number: int, text: str, keyword: str, written: str) -> tuple[Finding, str, str]:
    return Finding(number, text, f"{written!r} is not a Gherkin keyword; did you mean {keyword!r}?"), written, keyword


def _significant(lines: list[str], start: int = 0) -> Iterator[tuple[int, str]]:
    """(line number, stripped text) of the lines Gherkin reads as keywords, steps or text: no blank line, comment,
    tag or doc string."""
    fence: str | None = None
    for index in range(start, len(lines)):
        text = lines[index].strip()
        if fence is not None:
            fence = None if text.startswith(fence) else fence
            continue
        if text.startswith(('"""', "```")):
            fence = text[:3]
            continue
        if text and not text.startswith(("#", "@")):
            yield index + 1, text


def _steps_of(lines: list[str], keywords: Keywords) -> Iterator[str]:
    for _, text in _significant(lines):
        if keywords.is_step(text):
            yield text.split(maxsplit=1)[-1]


def _unreadable(text: str, lines: list[str]) -> Iterator[Finding]:
    """Gherkin's own parse errors, one line each, in words."""
    try:
        Parser().parse(text)
    except CompositeParserException as error:
        for each in error.errors:
            yield _finding(each, lines)
    except ParserException as error:
        yield _finding(error, lines)
    except ParserError as error:  # (no location)
        yield Finding(0, "", str(error))


def _finding(error: ParserException, lines: list[str]) -> Finding:
    number = int(error.location["line"])
    text = lines[number - 1].strip() if 0 < number <= len(lines) else ""
    message = str(error).split(": ", 1)[-1]
    expected = re.match(r"(?:expected|unexpected end of file, expected): (.*?)(?:, got '.*')?$", message)
    if expected:
        kinds = [_KINDS[token] for token in expected.group(1).split(", ") if token in _KINDS]
        message = f"Gherkin cannot read this line here (it takes {_either(kinds)})"
    return Finding(number, text or "(end of file)", message)


def _either(kinds: list[str]) -> str:
    return ", ".join(kinds[:-1]) + f" or {kinds[-1]}" if len(kinds) > 1 else (kinds[0] if kinds else "nothing")


def _closest(text: str, choices: Iterable[str]) -> str | None:
    scored = [(_ratio(text, choice), choice) for choice in choices if choice != text]
    best = max(scored, default=(0.0, ""))
    return best[1] if best[0] >= CUTOFF else None


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()


def _is_word(word: str) -> bool:
    return word.replace("'", "").replace("-", "").isalpha()


def _language(lines: list[str]) -> str:
    for text in lines:
        match = _LANGUAGE.match(text)
        if match:
            return match.group(1)
        if text.strip() and not text.strip().startswith("#"):
            break
    return "en"
