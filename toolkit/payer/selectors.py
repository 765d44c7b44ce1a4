"""A small CSS selector matcher for the HTTP payer: what ``[profiles.NAME.payer]`` may name a form or a button by.

Supported (what a page's form or button is told apart by): a tag, ``#id``, ``.class``, ``[attr]``,
``[attr=value]`` (quoted or not), ``[attr*=value]``, ``[attr^=value]``, compound (``form#acs.main``), and one
descendant step, an ancestor form then an element (``form#acs button[name=approve]``).  The browser payer
hands the same text to Chromium, which knows all of CSS.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_PART = re.compile(
    r"(?P<tag>^[a-zA-Z][\w-]*)|#(?P<id>[\w-]+)|\.(?P<cls>[\w-]+)"
    r"|\[\s*(?P<attr>[\w-]+)\s*(?:(?P<op>[*^$]?=)\s*(?P<quote>['\"]?)(?P<value>.*?)(?P=quote))?\s*\]"
)


class SelectorError(ValueError):
    """A selector this matcher cannot read; the message says which part."""


@dataclass(frozen=True)
class Compound:
    """One compound selector: a tag and conditions on attributes (id and class included)."""

    tag: str
    conditions: tuple[tuple[str, str, str], ...]  # (attribute, operator or "", value)

    def matches(self, tag: str, attributes: Mapping[str, str]) -> bool:
        if self.tag and self.tag != tag.lower():
            return False
        return all(_holds(attributes, *condition) for condition in self.conditions)


def _holds(attributes: Mapping[str, str], name: str, op: str, value: str) -> bool:
    if name not in attributes:
        return False
    actual = attributes[name]
    if name == "class" and op == "~=":
        return value in actual.split()
    return {
        "": True,
        "=": actual == value,
        "*=": value in actual,
        "^=": actual.startswith(value),
        "$=": actual.endswith(value),
    }[op]


def compound(text: str) -> Compound:
    """One compound selector (``button.primary[name=approve]``); SelectorError when a part is not understood."""
    tag, conditions, at = "", [], 0
    while at < len(text):
        match = _PART.match(text, at)  # (``^``: a tag only at the start)
        if match is None or match.end() == at:
            raise SelectorError(f"selector {text!r}: cannot read {text[at:]!r}")
        if match.group("tag"):
            tag = match.group("tag").lower()
        elif match.group("id"):
            conditions.append(("id", "=", match.group("id")))
        elif match.group("cls"):
            conditions.append(("class", "~=", match.group("cls")))
        else:
            conditions.append((match.group("attr").lower(), match.group("op") or "", match.group("value") or ""))
        at = match.end()
    return Compound(tag, tuple(conditions))


@dataclass(frozen=True)
class Selector:
    """A compound selector, or an ancestor (a form) then an element: ``form#acs button``."""

    text: str
    target: Compound
    ancestor: Compound | None = None


def parse(text: str) -> Selector:
    parts = text.split()
    if not parts or len(parts) > 2 or any(part in (">", "+", "~") for part in parts):
        raise SelectorError(f"selector {text!r}: one compound selector, or a form then an element, is supported")
    if len(parts) == 1:
        return Selector(text, compound(parts[0]))
    return Selector(text, compound(parts[1]), compound(parts[0]))
