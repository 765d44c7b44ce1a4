"""Input of the control API: the arguments of a route (``Arg``), read from its path, its query and its JSON body.

Every problem of a call is found before it is refused, and the one answer (HTTP 400) names them all, each with
what is valid: a client in any language fixes its call once, not once per field.  An ``Arg`` also says what it
takes for the index (``GET /_sim/``) and the OpenAPI document (``controlapi``).
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from starlette.requests import Request

from toolkit.masking import mask_text
from toolkit.money import WIRE_AMOUNT
from toolkit.simulator.storage import row_id
from toolkit.simulator.storage.base import MAX_ROW_ID
from toolkit.wire import DecodeError, loads_json

MAX_DIGITS = 19  # no count, limit or id of the control API needs more
MAX_PROBLEMS = 20  # named in one answer (a body of 64 KB could hold thousands of unknown names)
PLACES = {"path": "path", "query": "query", "body": "JSON body"}
Values = dict[str, Any]
Rule = Callable[[Values], list["ControlError"]]  # problems of the values together (once each one is valid)


@dataclass(frozen=True)
class Problem:
    field: str
    error: str  # "<field>: <why>", masked
    valid: str = ""  # what the field takes, when the route says

    def view(self) -> dict[str, str]:
        return {"field": self.field, "error": self.error, **({"valid": self.valid} if self.valid else {})}


class ControlError(Exception):
    """A refused control request, with ``http_status``: ``{"error": "<field>: <why>; ...", "field": "<the first
    field>", "problems": [{"field", "error", "valid"}, ...]}`` (and the ``route`` refused, when known)."""

    problems: tuple[Problem, ...]
    field: str
    http_status: int
    route: str

    def __init__(self, field: str, message: str, *, http_status: int = 400, valid: str = "") -> None:
        self._set((Problem(field, mask_text(f"{field}: {message}"), valid),), http_status)

    def _set(self, problems: tuple[Problem, ...], http_status: int, route: str = "") -> None:
        Exception.__init__(self, "; ".join(problem.error for problem in problems))
        self.problems, self.field, self.http_status, self.route = problems, problems[0].field, http_status, route

    @classmethod
    def joined(cls, errors: Sequence[ControlError], route: str) -> ControlError:
        """One refusal of ``route`` naming every problem of ``errors`` (the first one's HTTP status)."""
        problems = tuple(problem for error in errors for problem in error.problems)
        if len(problems) > MAX_PROBLEMS:
            more = Problem("request", f"request: {len(problems) - MAX_PROBLEMS} more problems not shown")
            problems = (*problems[:MAX_PROBLEMS], more)
        error = cls.__new__(cls)
        error._set(problems, errors[0].http_status, route)
        return error

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"error": str(self), "field": self.field}
        body["problems"] = [problem.view() for problem in self.problems]
        if self.route:
            body.update(route=self.route, see="GET /_sim/")
        return body


@dataclass(frozen=True)
class Arg:
    """An argument of a control route: its ``kind`` (orderid, integer, number, amount or text), where it is
    given, and what it takes (``choices``, ``minimum`` and ``maximum``, or ``valid_text`` when the choices
    are too many to say in a sentence)."""

    name: str
    kind: str
    doc: str
    where: str = "body"
    required: bool = False
    default: Any = None
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    valid_text: str = ""

    def valid(self) -> str:
        """What this argument takes, as a person reads it."""
        if self.valid_text:
            return self.valid_text
        if self.choices:
            return f"one of {'|'.join(self.choices)}"
        low, high = _figure(self.minimum or 0), _figure(self.maximum if self.maximum is not None else math.inf)
        return {
            "orderid": "a gateway orderid (digits)",
            "integer": f"a whole number from {low} to {high}",
            "number": f"a number from {low} to {high}",
            "amount": 'an amount as a string, e.g. "2.50"',
            "text": "a string",
        }[self.kind]

    def read(self, data: Mapping[str, Any]) -> Any:
        """This argument's value in ``data`` (its default when absent); ControlError naming it and what is valid."""
        value = data.get(self.name)
        if value is None or (value == "" and self.kind != "text"):
            if self.required:
                raise ControlError(self.name, f"is required: {self.valid()}", valid=self.valid())
            return self.default
        try:
            return self._read(value)
        except ControlError as exc:
            why = exc.problems[0].error.removeprefix(f"{self.name}: ")
            raise ControlError(self.name, why, valid=self.valid()) from None

    def _read(self, value: Any) -> Any:
        if self.kind == "orderid":
            return orderid(value, self.name)
        if self.kind == "integer":
            return integer(value, self.name, minimum=int(self.minimum or 0), maximum=int(self.maximum or 10**9))
        if self.kind == "number":
            return number(value, self.name, maximum=self.maximum if self.maximum is not None else math.inf)
        if self.kind == "amount":
            if not isinstance(value, str) or not value.strip():
                raise ControlError(self.name, f'must be an amount as a string, e.g. "2.50", not {_shown(value)}')
            return value.strip()
        chosen = text(value, self.name)
        if self.choices and chosen not in self.choices:
            close = difflib.get_close_matches(chosen, self.choices, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            shown = repr(chosen) if len(chosen) <= 40 else f"{chosen[:40]!r}..."
            raise ControlError(self.name, f"must be {self.valid()}, not {shown}{hint}")
        return chosen

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of the argument (OpenAPI 3.1)."""
        schema: dict[str, Any] = {
            "orderid": {"type": "string", "pattern": f"^[0-9]{{1,{MAX_DIGITS}}}$"},
            "integer": {"type": "integer"},
            "number": {"type": "number"},
            "amount": {"type": "string", "pattern": WIRE_AMOUNT.pattern.join("^$")},
            "text": {"type": "string"},
        }[self.kind]
        if self.choices:
            schema["enum"] = list(self.choices)
        schema.update(self._bounds())
        return {**schema, "description": self.doc}

    def listing(self) -> dict[str, Any]:
        """The argument as ``GET /_sim/`` lists it."""
        listed = {"name": self.name, "in": self.where, "required": self.required, "type": self.schema()["type"]}
        listed.update(valid=self.valid(), doc=self.doc, **({"choices": list(self.choices)} if self.choices else {}))
        return {**listed, **self._bounds()}

    def _bounds(self) -> dict[str, Any]:
        low = 0 if self.minimum is None and self.kind in ("integer", "number") else self.minimum  # (never below 0)
        bounds = {"minimum": low, "maximum": self.maximum, "default": self.default}
        return {name: value for name, value in bounds.items() if value is not None}


async def read_arguments(request: Request, route: str, args: Sequence[Arg], rule: Rule | None = None) -> Values:
    """The arguments of a call to ``route``, every one read: ControlError naming every problem when there is any
    (each bad value, each required one missing, each name the route does not take; then, once the values are
    each valid, what ``rule`` finds in them together)."""
    problems: list[ControlError] = []
    sources: dict[str, Mapping[str, Any]] = {"path": request.path_params, "query": request.query_params, "body": {}}
    if any(arg.where == "body" for arg in args):
        try:
            sources["body"] = await json_body(request)
        except ControlError as exc:
            problems.append(exc)
            args = [arg for arg in args if arg.where != "body"]  # (what a broken body holds is not known)
    values: Values = {}
    for arg in args:
        try:
            values[arg.name] = arg.read(sources[arg.where])
        except ControlError as exc:
            problems.append(exc)
    if rule is not None and not problems:
        problems += rule(values)
    problems += unknown_names(route, args, sources)
    if problems:
        raise ControlError.joined(problems, route)
    return values


def unknown_names(route: str, args: Sequence[Arg], sources: Mapping[str, Mapping[str, Any]]) -> list[ControlError]:
    """A problem for each name of the query or the body that the route does not take there."""
    takes = {arg.name: arg for arg in args}
    said = ", ".join(takes) if takes else ""
    problems = []
    for where in ("query", "body"):
        for name in sources[where]:
            arg = takes.get(name)
            if arg is not None and arg.where == where:
                continue
            shown = name if len(name) <= 40 else f"{name[:40]}..."
            if arg is not None:
                why = f"{route} takes {name} in its {PLACES[arg.where]}, not the {where}"
            else:
                close = difflib.get_close_matches(name, list(takes), n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]}?)" if close else ""
                why = f"{route} takes no {shown}{hint}; " + (f"its arguments are {said}" if said else "it takes none")
            problems.append(ControlError(shown, why, valid=said))
    return problems


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object; an empty body is ``{}``."""
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        data = loads_json(raw)  # depth and number sizes bounded; floats as Decimal
    except DecodeError as exc:
        raise ControlError("body", f"is not valid JSON ({str(exc).removeprefix('invalid JSON: ')})") from None
    if not isinstance(data, dict):
        raise ControlError("body", "must be a JSON object")
    return data


def number(value: Any, name: str, *, maximum: float = math.inf) -> float:
    """A finite number between 0 and ``maximum`` (JSON number or numeric string)."""
    if isinstance(value, bool) or (isinstance(value, str) and len(value) > MAX_DIGITS):
        raise ControlError(name, f"must be a number, not {_shown(value)}")
    try:
        result = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ControlError(name, f"must be a number, not {_shown(value)}") from None
    if not math.isfinite(result) or not 0 <= result <= maximum:
        raise ControlError(name, f"must be a number from 0 to {_figure(maximum)}, not {_shown(value)}")
    return result


def integer(value: Any, name: str, *, minimum: int = 0, maximum: int = 10**9) -> int:
    """A whole number between ``minimum`` and ``maximum`` (JSON number or digit string)."""
    if isinstance(value, Decimal) and value == value.to_integral_value():
        value = int(value)  # (a JSON number with no fraction)
    if isinstance(value, str) and value.strip().isascii() and value.strip().lstrip("-").isdigit():
        if len(value.strip()) > MAX_DIGITS:  # int() of 5000 digits raises, and no limit is that large
            raise ControlError(name, f"must be from {minimum} to {maximum}, not a number of {len(value)} digits")
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ControlError(name, f"must be a whole number, not {_shown(value)}")
    if not minimum <= value <= maximum:
        raise ControlError(name, f"must be from {minimum} to {maximum}, not {_shown(value)}")
    return value


def text(value: Any, name: str) -> str:
    """A string, stripped (numbers are written as text)."""
    if isinstance(value, Decimal) and value == value.to_integral_value():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ControlError(name, f"must be a string, not {_shown(value)}")
    return str(value).strip()


def orderid(value: Any, name: str = "orderid") -> int:
    """A gateway orderid (ASCII digits, at most SQLite's largest integer), from a path, a query or a body."""
    if isinstance(value, Decimal) and value == value.to_integral_value():
        value = int(value)
    key = row_id(value.strip()) if isinstance(value, str) else value
    if isinstance(key, int) and not isinstance(key, bool) and 0 < key <= MAX_ROW_ID:
        return key
    raise ControlError(name, f"must be a gateway orderid (digits), not {_shown(value)}")


def _shown(value: Any) -> str:
    """A value as the refusal shows it: JSON, cut to 40 characters (a 5000-digit id is not repeated)."""
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else f"{text[:40]}... ({len(text)} characters)"


def _figure(value: float) -> str:
    """A bound as a person writes it: 316224000, not 3.16224e+08."""
    return f"{value:.0f}" if math.isfinite(value) and value == int(value) else f"{value:g}"
