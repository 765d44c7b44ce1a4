"""``Recorder``: the records of one scenario (or one client, or one proxy's order), kept to be written.

A recorder is an observer like any other: give it where records are made, and it keeps each one it is called
with, as it is (records are masked at birth: nothing unmasked is ever kept here)::

    recorder = Recorder()
    client = GatewayClient(config, observers=[recorder])     # the merchant's exchanges
    receiver.observers.append(recorder)                      # the callbacks and redirects received
    payer = Payer(observers=[recorder])                      # the payer's page visits
    recorder.write("scenario.har", title="A sale")           # HAR 1.2: toolkit.recording.serializers

It is safe to use from several threads (callbacks arrive on the receiver's).
"""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

from toolkit.recording import serializers
from toolkit.recording.records import Record


class Recorder:
    """Records as they come (``recorder(record)``); ``write(path)`` them, HAR 1.2 unless another serializer."""

    def __init__(self) -> None:
        self._records: list[Record] = []
        self._lock = threading.Lock()

    def __call__(self, record: Record) -> None:
        """Keep ``record`` (an ``Exchange``, a ``Visit``, a ``Received``): the observer's entry point."""
        with self._lock:
            self._records.append(record)

    def __len__(self) -> int:
        return len(self._records)

    def __repr__(self) -> str:
        return f"Recorder({len(self)} records)"

    @property
    def records(self) -> list[Record]:
        """The records so far, in the order they came."""
        with self._lock:
            return list(self._records)

    def write(self, path: str | Path, title: str = "", comment: str = "", *, serializer: str = serializers.HAR) -> Path:
        """The records to ``path`` as the serializer called ``serializer`` writes them, replaced whole (a temporary
        file renamed: never half written)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = serializers.serializer(serializer)(self.records, title, comment)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, target)
        return target
