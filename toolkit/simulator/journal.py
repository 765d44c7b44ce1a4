"""The request journal per merchant: every request, masked, with its conformance warnings; bounded.

No PAN beyond BIN and last four, no CVV, no secrets: fields pass through ``toolkit.masking``
(by name and by value) before they are kept.  A merchant certifying its integration reads the
warnings here.  The journal never grows without end:

- in memory (no ``--db``): a ring of the last ``journal_size`` entries, and at most
  ``MEMORY_BYTES`` of them, the oldest dropped first;
- with ``--db``: every entry in the store (a SQLite file: in a file of its own beside it, ``DB.requests``;
  PostgreSQL: its ``journal`` table), written in batches by a thread
  (``StoreJournal``), rows older than ``journal_retention`` seconds (on the simulator's clock) or beyond the
  last ``journal_size`` dropped as new ones come.

Each entry keeps at most ``MAX_FIELDS`` fields and ``MAX_VALUE`` characters of each value.
"""

from __future__ import annotations

import collections
import itertools
import logging
import operator
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

from toolkit.masking import mask_fields, mask_path, mask_text
from toolkit.simulator.settings import SimulatorSettings
from toolkit.simulator.storage import Store, StoreUnavailable, dumps, journal_rows, journal_store, loads

log = logging.getLogger("gatekit.simulator")

MAX_FIELDS = 100
MAX_VALUE = 256
MAX_NAME = 64
MAX_WARNINGS = 20
MEMORY_BYTES = 16 * 1024 * 1024
PRUNE_EVERY = 100  # SQLite: inserts between two prunings


class Journal(Protocol):
    def record(self, entry: dict[str, Any]) -> None: ...
    def entries(self, *, login: str | None = None, limit: int = 500) -> list[dict[str, Any]]: ...
    def clear(self) -> None: ...


@dataclass(frozen=True)
class Sent:
    """The fields of a request as its journal line keeps them: masked and cut to size, and its client_orderid."""

    fields: dict[str, str]
    client_orderid: str


def sent(fields: list[tuple[str, str]]) -> Sent:
    """What the journal keeps of a request's fields.  The route makes it as soon as the body is parsed: masking
    looks at every free-text value once, and the values found clean are then stored without a second look
    (``toolkit.masking``'s clean texts: the client_orderid, e-mail and addresses a row keeps)."""
    kept = _kept_fields(fields)
    if len(fields) <= MAX_FIELDS:  # the client_orderid sent, masked as ``kept`` has it (the last one sent)
        client_orderid = kept.get("client_orderid", kept.get("client-order-id", ""))
    else:
        given = dict(fields)
        client_orderid = _cut(mask_text(given.get("client_orderid", given.get("client-order-id", ""))))
    return Sent(kept, client_orderid)


NOTHING_SENT = Sent({}, "")


def entry(
    *,
    at: float,
    login: str,
    operation: str,
    path: str,
    http_status: int,
    body: dict[str, str],
    sent: Sent,
    warnings: list[str],
) -> dict[str, Any]:
    """One journal line, masked and cut to size (the request's fields as ``sent`` made them; ``warnings`` as
    Python values)."""
    response_type = body.get("type", "")
    return {
        "at": at,
        "login": login,
        "operation": operation,
        "path": mask_path(path),
        "http_status": http_status,
        "response_type": response_type,
        "serial": body.get("serial-number", ""),
        "orderid": body.get("paynet-order-id", ""),
        "client_orderid": sent.client_orderid,
        # by name (card fields, CVV-like names), then by content: a card number typed into any other field
        "fields": sent.fields,
        "warnings": [_cut(mask_text(w), 500) for w in warnings[:MAX_WARNINGS]] if warnings else [],
        "error": mask_text(body.get("error-message", "")) if response_type in ("validation-error", "error") else "",
    }


def _kept_fields(fields: list[tuple[str, str]]) -> dict[str, str]:
    kept = mask_fields(fields[:MAX_FIELDS])
    if kept and (max(map(len, kept)) > MAX_NAME or max(map(len, kept.values())) > MAX_VALUE):
        kept = {_cut(name, MAX_NAME): _cut(value) for name, value in kept.items()}
    if len(fields) > MAX_FIELDS:
        kept["..."] = f"{len(fields) - MAX_FIELDS} more fields not kept"
    return kept


def _cut(text: str, limit: int = MAX_VALUE) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


class MemoryJournal:
    """The last ``size`` entries in memory, at most ``MEMORY_BYTES`` of them."""

    def __init__(self, size: int, budget: int = MEMORY_BYTES) -> None:
        self._lines: collections.deque[tuple[int, dict[str, Any]]] = collections.deque()
        self._size, self._budget, self._bytes = size, budget, 0
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def record(self, entry: dict[str, Any]) -> None:
        cost = _size(entry)
        with self._lock:
            self._lines.append((cost, {"id": next(self._ids), **entry}))
            self._bytes += cost
            while len(self._lines) > self._size or (self._bytes > self._budget and len(self._lines) > 1):
                dropped, _ = self._lines.popleft()
                self._bytes -= dropped

    def entries(self, *, login: str | None = None, limit: int = 500) -> list[dict[str, Any]]:
        with self._lock:
            lines = [line for _, line in self._lines if login is None or line["login"] == login]
        return lines[-limit:] if limit else []

    def clear(self) -> None:
        with self._lock:
            self._lines.clear()
            self._bytes = 0

    @property
    def bytes(self) -> int:
        return self._bytes


def _size(entry: dict[str, Any]) -> int:
    """About the size of an entry in characters (its text, with room for the names and punctuation): cheaper
    than encoding it, and what the memory budget counts."""
    fields, warnings = entry["fields"], entry["warnings"]
    text = "".join(_TEXTS_OF(entry)) + "".join(fields) + "".join(fields.values()) + "".join(warnings)
    return 256 + len(text) + 8 * len(fields) + 4 * len(warnings)


# The text values of an entry (``at``, a float, and ``http_status`` count in the 256 of room).
_TEXTS_OF = operator.itemgetter(
    "login", "operation", "path", "response_type", "serial", "orderid", "client_orderid", "error"
)


class StoreJournal:
    """Every entry in the store's ``journal`` table (SQLite or PostgreSQL); old rows pruned by age and by count.

    Entries are written by a thread of this journal, up to ``FLUSH_EVERY`` seconds after their request, many in
    one write transaction: a request never waits for its line, and processes that share the store do not take
    turns at its write lock once more per request.  Under load (the last write's lines came at ``BUSY_RATE`` a
    second or more) the next write waits ``BUSY_EVERY`` instead: five transactions a second, not fifty, each with
    more lines.  On PostgreSQL each is a few round trips and the thread's turns at the GIL beside the event loop:
    the team simulator spent 10% of its CPU per sale on them.  ``entries`` writes this process's queue first (the
    other processes' lines show within ``FLUSH_EVERY`` seconds, ``BUSY_EVERY`` under load); ``close`` writes what
    waits.
    """

    FLUSH_EVERY = 0.02
    BUSY_EVERY = 0.2
    BUSY_RATE = 250.0  # lines a second
    MAX_QUEUED = 10_000  # beyond this (a store that cannot keep up), the oldest queued lines are dropped

    def __init__(self, store: Store, size: int, retention: float, *, owned: bool = False) -> None:
        """``owned``: the journal's own store (a file beside a SQLite ``--db``), closed with the journal."""
        self.store, self._size, self._retention, self._owned = store, size, retention, owned
        self._inserts = 0
        self._pruned_at = -float("inf")
        self._queue: collections.deque[dict[str, Any]] = collections.deque(maxlen=self.MAX_QUEUED)
        self._flushing = threading.Lock()
        self._wake = threading.Event()
        self._closed = threading.Event()
        threading.Thread(target=self._run, name="gatekit-journal", daemon=True).start()

    def record(self, entry: dict[str, Any]) -> None:
        self._queue.append(entry)
        self._wake.set()

    def _run(self) -> None:
        wait, flushed_at = self.FLUSH_EVERY, time.monotonic()
        while not self._closed.is_set():
            self._wake.wait()
            self._wake.clear()
            self._closed.wait(wait)  # what comes meanwhile joins the same transaction
            lines = 0
            try:
                lines = self.flush()
            except StoreUnavailable:  # (the store said so once) these lines are lost, not the process
                pass
            except Exception:  # a store that failed: these lines are lost, not the process
                log.exception("the journal could not be written")
            now = time.monotonic()
            wait, flushed_at = self.next_wait(lines, now - flushed_at), now

    def next_wait(self, lines: int, seconds: float) -> float:
        """How long the next write waits for lines to join it, after one of ``lines`` that came in ``seconds``."""
        if lines >= self.BUSY_RATE * max(seconds, 1e-6):
            return max(self.BUSY_EVERY, self.FLUSH_EVERY)
        return self.FLUSH_EVERY

    def flush(self) -> int:
        """Write the queued entries now, in one transaction; how many."""
        with self._flushing:
            batch = [self._queue.popleft() for _ in range(len(self._queue))]
            if not batch:
                return 0
            # rows made before the write lock is taken (``entry`` masked them: not scanned again), written in one
            # statement: a thread that holds the write lock gives the GIL away (and waits for it) at every call
            rows = [
                {**entry, "fields": dumps(entry["fields"]), "warnings": dumps(entry["warnings"])} for entry in batch
            ]
            latest = max(entry["at"] for entry in batch)
            before, self._inserts = self._inserts, self._inserts + len(rows)
            with self.store.transaction():
                journal_rows.add(self.store, rows)
                if before // PRUNE_EVERY != self._inserts // PRUNE_EVERY:  # by count (a range of ids: cheap)
                    self._prune_by_count()
                # by age (a scan: no index on ``at``) once a minute of the clock, and whenever it jumped on
                if latest - self._pruned_at > min(60.0, self._retention):
                    self._prune_by_age(latest)
            return len(rows)

    def close(self) -> None:
        """Write what waits and stop the thread (before the store closes); a database that does not answer loses
        those lines, said on the log, and the stop goes on."""
        self._closed.set()
        self._wake.set()
        try:
            self.flush()
        except StoreUnavailable:
            log.warning("the request journal's last lines were not written: the database does not answer")
        if self._owned:
            self.store.close()

    def _prune_by_age(self, now: float) -> None:
        self._pruned_at = now
        journal_rows.prune_before(self.store, now - self._retention)

    def _prune_by_count(self) -> None:
        journal_rows.keep_latest(self.store, self._size)

    def entries(self, *, login: str | None = None, limit: int = 500) -> list[dict[str, Any]]:
        self.flush()
        return [_decoded(row) for row in reversed(journal_rows.latest(self.store, limit, login))]

    def clear(self) -> None:
        self._queue.clear()
        journal_rows.clear(self.store)


def _decoded(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "fields": loads(row["fields"]), "warnings": loads(row["warnings"])}


def open_journal(store: Store, settings: SimulatorSettings) -> Journal:
    """In memory for an in-memory store; else where storage keeps it (``storage.journal_store``: for a SQLite file,
    a file of its own beside it; PostgreSQL's own store)."""
    if store.in_memory:
        return MemoryJournal(settings.journal_size)
    kept, owned = journal_store(store)
    return StoreJournal(kept, settings.journal_size, settings.journal_retention, owned=owned)
