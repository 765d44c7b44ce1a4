"""``drift.toml``: the differences a team knows and accepts, each with its reason.

    [[accept]]
    kind = "error-message"            # what differs (gatekit drift --help lists the kinds)
    operation = "capture"             # optional: only this operation
    field = "descriptor"              # optional: only this field (field-missing, field-extra...)
    scenario = "*refused*"            # optional: scenario names, shell-style pattern
    reason = "the sandbox words its refusals in its own way"

A difference that no rule accepts makes ``gatekit drift`` exit 1.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.drift.compare import Difference

KINDS = ("http-status", "type", "status", "error-code", "transaction-type", "error-message", "field-missing",
         "field-extra", "three-ds-path", "steps", "callbacks", "callback-fields", "redirects", "redirect-fields",
         "answer-time", "processing-time")  # fmt: skip
_KEYS = ("kind", "operation", "field", "scenario", "reason")


class AcceptError(ValueError):
    """A drift.toml that cannot be used; the message names the rule and the key."""


@dataclass(frozen=True)
class Rule:
    kind: str
    reason: str
    operation: str = ""
    field: str = ""
    scenario: str = ""

    def accepts(self, difference: Difference) -> bool:
        return (
            difference.kind == self.kind
            and (not self.operation or difference.operation == self.operation)
            and (not self.field or difference.field == self.field)
            and (not self.scenario or fnmatch.fnmatchcase(difference.scenario, self.scenario))
        )


def load_rules(path: Path | None) -> list[Rule]:
    """The rules of ``path`` (none when it is None or absent)."""
    if path is None or not path.is_file():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise AcceptError(f"{path}: {exc}") from None
    rules = data.get("accept", [])
    if not isinstance(rules, list):
        raise AcceptError(f"{path}: write the rules as [[accept]] tables")
    return [_rule(path, number, table) for number, table in enumerate(rules, start=1)]


def _rule(path: Path, number: int, table: Any) -> Rule:
    where = f"{path}: [[accept]] #{number}"
    if not isinstance(table, dict):
        raise AcceptError(f"{where}: must be a table")
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise AcceptError(f"{where}: unknown keys {', '.join(unknown)}; known: {', '.join(_KEYS)}")
    if table.get("kind") not in KINDS:
        raise AcceptError(f"{where}: kind must be one of {', '.join(KINDS)}, got {table.get('kind')!r}")
    if not str(table.get("reason", "")).strip():
        raise AcceptError(f'{where}: give the reason the difference is accepted (reason = "...")')
    return Rule(**{key: str(value) for key, value in table.items()})


def apply(rules: list[Rule], differences: list[Difference]) -> list[Difference]:
    """The differences, each with the reason of the first rule that accepts it (``accepted``)."""
    decided = []
    for difference in differences:
        rule = next((rule for rule in rules if rule.accepts(difference)), None)
        decided.append(dataclasses.replace(difference, accepted=rule.reason) if rule else difference)
    return decided
