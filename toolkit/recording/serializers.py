"""How a recording's records are written: serializers by name, HAR 1.2 the one gatekit registers.

    register_serializer("jsonl", lambda records, title, comment: ...)   # records in, text out
    recorder.write("scenario.jsonl", serializer="jsonl")

A serializer takes the records (``toolkit.recording.records``), the scenario's title and a comment, and returns
the text of the file.  ``har`` (``toolkit.recording.har``) is what ``gatekit certify --record``, the pytest
plugin, ``gatekit proxy --record`` and ``GatewayClient(record=...)`` write, and what ``gatekit drift`` reads.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from toolkit.recording import har
from toolkit.recording.records import Record

Serializer = Callable[[Sequence[Record], str, str], str]
HAR = "har"
_SERIALIZERS: dict[str, Serializer] = {}


def register_serializer(name: str, serializer: Serializer) -> None:
    """Make ``serializer`` the one called ``name`` (a name given again is replaced)."""
    _SERIALIZERS[name] = serializer


def serializer(name: str) -> Serializer:
    """The serializer called ``name``; KeyError, naming those there are, when there is none."""
    try:
        return _SERIALIZERS[name]
    except KeyError:
        raise KeyError(f"no serializer called {name!r} (there are: {', '.join(sorted(_SERIALIZERS))})") from None


def har_text(records: Sequence[Record], title: str = "", comment: str = "") -> str:
    """The HAR 1.2 document of ``records`` as JSON text (``toolkit.recording.har``)."""
    return json.dumps(har.archive(records, title=title, comment=comment), indent=1, ensure_ascii=False)


register_serializer(HAR, har_text)
