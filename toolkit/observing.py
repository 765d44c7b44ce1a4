"""The one hook list of the toolkit's objects that make records (the client, the payers, the receiver): their
``observers``.  ``RecorderAlias`` keeps the older ``recorder`` attribute working for a while: reading it warns and
gives the recorder, setting it warns and puts the recorder among the object's ``observers`` in place of the one
before.
"""

from __future__ import annotations

import warnings
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class RecorderAlias(Generic[T]):
    """A deprecated ``recorder`` attribute of an object with ``observers`` (its value kept in ``_<name>``)."""

    def __init__(self, observed: str, hint: str) -> None:
        """``observed``: what the observers get (``exchanges``); ``hint``: how to do it now, for the warning
        (``GatewayClient(config, observers=[recorder])``)."""
        self.observed, self.hint = observed, hint
        self.name = self.private = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.private = f"{owner.__name__}.{name}", f"_{name}"

    def __get__(self, obj: Any, objtype: type | None = None) -> T | None:
        if obj is None:
            return self  # type: ignore[return-value]  # (the class's attribute: the descriptor)
        self._warn()
        value: T | None = getattr(obj, self.private, None)
        return value

    def __set__(self, obj: Any, recorder: T | None) -> None:
        self._warn()
        before = getattr(obj, self.private, None)
        if before is not None and before in obj.observers:
            obj.observers.remove(before)
        setattr(obj, self.private, recorder)
        if recorder is not None:
            obj.observers.append(recorder)

    def _warn(self) -> None:
        warnings.warn(f"{self.name} is deprecated: a recorder is an observer of {self.observed} like any other "
                      f"({self.hint})", DeprecationWarning, stacklevel=3)  # fmt: skip
