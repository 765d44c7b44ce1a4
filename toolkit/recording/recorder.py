"""``Recorder``: the exchanges of one scenario (or one client, or one proxy run), masked, as HAR 1.2 entries.

The client (``GatewayClient(record=...)``), the payers and the callback receiver hand it what they sent and got,
as sent: it masks on the way in (``toolkit.recording.masks``), so nothing unmasked is ever kept.  It is safe
to use from several threads (callbacks arrive on the receiver's).
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.recording import har
from toolkit.recording.masks import TEST_CVV2, record_fields, record_headers, record_text

if TYPE_CHECKING:
    from toolkit.callbacks import Received
    from toolkit.testdata.cards import Card


def card_action(card: Card) -> dict[str, str | bool]:
    """What the payer typed, as a recording keeps it: the number masked, a test CVV2 kept."""
    from toolkit.fields import ascii_digits, luhn_ok
    from toolkit.masking import CVV_MASK, mask_pan

    return {
        "number": mask_pan(card.number),
        "luhn": ascii_digits(card.number) and luhn_ok(card.number),  # (a mistyped number, as the payer typed it)
        "expire_month": card.expire_month,
        "expire_year": card.expire_year,
        "cvv2": card.cvv2 if card.cvv2 in TEST_CVV2 else (CVV_MASK if card.cvv2 else ""),
        "holder": record_text(card.holder),
    }


class Recorder:
    """HAR entries, masked as they come; ``archive()`` the document, ``write(path)`` it atomically."""

    def __init__(self) -> None:
        self._entries: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._action: dict[str, Any] | None = None  # what the payer is doing: set on its next request

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def entries(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._entries)

    def _add(self, item: dict[str, Any]) -> None:
        with self._lock:
            self._entries.append(item)

    def exchange(
        self,
        *,
        operation: str,
        method: str,
        url: str,
        headers: Mapping[str, str],
        fields: Iterable[tuple[str, str]],
        status: int | None,
        response_headers: Mapping[str, str],
        body: str,
        elapsed: float,
        error: str | None = None,
        party: str = "merchant",
        signed_with: str = "",
        findings: Iterable[str] = (),
    ) -> None:
        """A merchant's request to the gateway and its answer (``status`` None: no answer, ``error`` why).

        ``signed_with``: a word on how it was signed when not with the profile's key (``another key``, or
        ``a wrong signature`` from the proxy): a replay signs the same way.  ``findings``: what the proxy
        found wrong with the exchange (``toolkit.proxy``), kept with it."""
        started = datetime.now(UTC) - timedelta(seconds=elapsed)
        extra: dict[str, Any] = {"party": party, "kind": "exchange", "operation": operation}
        if signed_with:
            extra["signed_with"] = signed_with
        if error:
            extra["error"] = record_text(error)
        if findings:
            extra["findings"] = [record_text(text) for text in findings]
        self._add(
            har.entry(
                started=started,
                method=method,
                url=record_text(url),
                request_headers=record_headers(headers),
                form=record_fields(fields),
                status=status,
                response_headers=record_headers(response_headers),
                body=record_text(body),
                mime_type=str(response_headers.get("Content-Type", response_headers.get("content-type", ""))),
                elapsed=elapsed,
                extra=extra,
            )
        )

    def payer_action(self, action: str, **details: Any) -> None:
        """What the payer does next (``pay`` with ``card=card_action(card)``, ``challenge`` right or wrong...):
        noted on the next request the payer makes."""
        self._action = {"action": action, **details}

    def visit(
        self,
        *,
        method: str,
        url: str,
        fields: Iterable[tuple[str, str]] | None,
        status: int | None,
        body: str,
        elapsed: float,
        final_url: str = "",
        step: str = "",
    ) -> None:
        """A request of the payer's browser and the page it got."""
        started = datetime.now(UTC) - timedelta(seconds=elapsed)
        extra: dict[str, Any] = {"party": "payer", "kind": "visit", "step": step}
        if self._action is not None:
            extra["action"], self._action = self._action, None
        if final_url and final_url != url:
            extra["final_url"] = record_text(final_url)
        self._add(
            har.entry(
                started=started,
                method=method,
                url=record_text(url),
                form=record_fields(fields) if fields is not None else None,
                status=status,
                body=record_text(body),
                mime_type="text/html",
                elapsed=elapsed,
                extra=extra,
            )
        )

    def arrival(self, received: Received, base: str = "http://merchant.invalid") -> None:
        """A callback or the payer's redirect, as the merchant's back end (at ``base``) received it (masked)."""
        kind = received.kind
        entry = har.entry(
            started=received.received_wall,
            method=received.method,
            url=base.rstrip("/") + "/" + received.path.lstrip("/"),
            form=list(received.params.items()) if received.method.upper() == "POST" else None,
            status=received.answered,
            body="",
            extra={
                "party": "gateway" if kind == "callback" else "payer",
                "kind": kind,
                "control_ok": received.control_ok,
            },
        )
        if received.method.upper() != "POST":
            entry["request"]["queryString"] = [{"name": k, "value": v} for k, v in received.params.items()]
        self._add(entry)

    def archive(self, title: str = "", comment: str = "") -> dict[str, Any]:
        return har.archive(self.entries, title=title, comment=comment)

    def write(self, path: str | Path, title: str = "", comment: str = "") -> Path:
        """The archive to ``path``, replaced whole (a temporary file renamed: never half written)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.archive(title, comment), indent=1, ensure_ascii=False)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, target)
        return target
