"""What a Then step compares, said one way: what the feature expected, and what the gateway said.

Every comparison of the suite's steps (``steps/``) goes through these functions, so that a failure reads::

    the decline message: the feature expected "Insuficient funds"; the gateway said "Insufficient funds"
    (Order(sale, orderid=4711, client_orderid=inv-1))

in the console, the Markdown summary and Allure's headline alike: the message is the assertion's whole
message (gatekit's modules are not rewritten by pytest, so no ``assert ...`` introspection is added).

- ``expect``: the gateway's value is the feature's;
- ``expect_in``: the feature's words are within the gateway's text (a message says more than a feature quotes);
- ``expect_fields``: several fields of one answer (``status``, ``amount``...): the differing ones are named;
- ``expect_refusal``: the gateway refused, and of the kind the feature expects (a validation error...);
- ``fail``: for what another test decides (a page that names the field), in the same words.

Text is shown in double quotes, as a feature quotes it; statuses by their value; ``Words`` (ours, not the
gateway's: "a validation error") as they are.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, NoReturn

from toolkit.errors import ApiError, AuthenticationError, ValidationError

REFUSALS: dict[type[ApiError], str] = {ValidationError: "a validation error",
                                       AuthenticationError: "an authentication error (HTTP 401)",
                                       ApiError: "a refusal"}  # fmt: skip


class Words(str):
    """A description in our words ("a validation error", "no refusal"), shown without quotes."""


def expect(what: str, expected: object, said: object, *, about: object = None) -> None:
    """AssertionError naming both values unless the gateway ``said`` what the feature ``expected``."""
    if said != expected:
        raise AssertionError(mismatch(what, expected, said, about=about))


def expect_in(what: str, expected: str, said: str | None, *, about: object = None) -> None:
    """AssertionError naming both texts unless the feature's words ``expected`` are within the gateway's ``said``."""
    if said is None or expected not in said:
        raise AssertionError(mismatch(what, expected, said, about=about))


def expect_fields(what: str, answer: object, *, about: object = None, **expected: object) -> None:
    """AssertionError naming the fields of ``answer`` (attributes, or keys of a mapping) that differ from
    ``expected``: ``expect_fields("the capture", status, status=Status.APPROVED, amount=Decimal("5.00"))``."""
    said = {name: _field(answer, name) for name in expected}
    differing = [name for name in expected if said[name] != expected[name]]
    if differing:
        raise AssertionError(
            mismatch(what, _Fields({n: expected[n] for n in differing}), _Fields({n: said[n] for n in differing}),
                     about=about)
        )  # fmt: skip


def expect_refusal(what: str, refusal: ApiError | None, kind: type[ApiError] = ApiError, *, about: object = None
                   ) -> ApiError:  # fmt: skip
    """The refusal, when the gateway refused as ``kind``; AssertionError saying how it answered otherwise."""
    if isinstance(refusal, kind):
        return refusal
    if refusal is None:
        said = Words("no refusal: it accepted the request")
    else:
        said = Words(f"{next(w for k, w in REFUSALS.items() if isinstance(refusal, k))} ({refusal.error_message})")
    fail(what, Words(REFUSALS.get(kind, kind.__name__)), said, about=about)


def fail(what: str, expected: object, said: object, *, about: object = None) -> NoReturn:
    """AssertionError in the one shape, for a comparison decided elsewhere."""
    raise AssertionError(mismatch(what, expected, said, about=about))


def mismatch(what: str, expected: object, said: object, *, about: object = None) -> str:
    """``what: the feature expected X; the gateway said Y (about)``: the one shape of a failed comparison."""
    tail = f" ({about})" if about is not None and str(about) else ""
    return f"{what}: the feature expected {shown(expected)}; the gateway said {shown(said)}{tail}"


def shown(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, Words | _Fields):
        return str(value)
    if isinstance(value, str) and not isinstance(value, Enum):
        return f'"{value}"'
    if isinstance(value, Enum):
        return str(value.value)
    return str(value)


class _Fields(dict[str, object]):
    def __str__(self) -> str:
        return ", ".join(f"{name.replace('_', ' ')} {shown(value)}" for name, value in self.items())


def _field(answer: Any, name: str) -> object:
    if isinstance(answer, dict):
        return answer.get(name)
    return getattr(answer, name, None)
