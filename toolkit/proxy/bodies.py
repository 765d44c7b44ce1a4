"""What the proxy keeps of an answer's body: its first ``kept_body`` bytes (for the checks and the recording) and its
true size.  The rest is passed on to the client and counted, never held: a 300 MB answer costs the proxy a
megabyte, not 300.

A recording (``ProxyRecorder``) keeps the kept part masked and says what it left out: ``content.comment`` and
``content._truncated`` (bytes left out), while ``content.size`` and ``bodySize`` stay the true sizes.  A cut can
fall inside a card number, which masking would then not know for one: the digits and separators the kept part
ends with are left out too.  An order's recording keeps ``ARCHIVE_BODIES`` bytes of bodies in all (it is held
in memory and written again as it grows); bodies after that are left out the same way.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from toolkit.proxy.limits import MIB
from toolkit.recording import Recorder

ARCHIVE_BODIES = 32 * MIB
# What a card number cut at the end may look like: digits and separators, escaped ones too (``%20``), and an
# escape cut in its middle (``%2``).
_CARDISH_END = re.compile(rb"(?:[0-9 \t.+\-]|%2[0dD])*(?:%2?)?\Z")


class Body:
    """An answer's body as it passes: ``add`` each part; ``kept`` (at most ``limit`` bytes), ``size`` (all)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.size = 0

    def add(self, data: bytes) -> bytes:
        """Count ``data`` and keep what fits; what did not fit is returned (the caller passes it on)."""
        self.size += len(data)
        room = max(0, self.limit - len(self.kept))
        self.kept += data[:room]
        return data[room:]

    @property
    def full(self) -> bool:
        """More came than is kept (a byte over ``limit`` tells a body of exactly ``limit`` bytes from a longer one)."""
        return self.size > self.limit

    def text(self, charset: str = "utf-8", budget: int | None = None) -> tuple[str, int]:
        """The kept part as text, and the number of bytes left out of it (0: the whole body)."""
        data = bytes(self.kept[: self.limit if budget is None else max(0, min(self.limit, budget))])
        if len(data) < self.size:
            data = data[:-256] + _CARDISH_END.sub(b"", data[-256:])  # (a card number and its separators fit there)
        try:
            text = data.decode(charset, "replace")
        except LookupError:  # (a charset Python does not know)
            text = data.decode("utf-8", "replace")
        return text, self.size - len(data)


def charset_of(content_type: str) -> str:
    found = re.search(r"(?i)charset=\"?([A-Za-z0-9_\-.:]+)", content_type)
    return found.group(1) if found else "utf-8"


class ProxyRecorder(Recorder):
    """A ``Recorder`` for the proxy's exchanges: ``exchange_with(body, ...)`` keeps at most the body's kept part,
    within what is left of ``ARCHIVE_BODIES``, and the body's true size."""

    def __init__(self) -> None:
        super().__init__()
        self._kept = 0
        self._sizes = threading.local()  # (the entry ``exchange`` adds in this thread: set by ``_add``)

    def exchange_with(self, body: Body | None, content_type: str, **details: Any) -> None:
        """``Recorder.exchange(**details)`` with ``body``'s text; ``body`` None: no answer."""
        if body is None:
            super().exchange(body="", **details)
            return
        text, left_out = body.text(charset_of(content_type), ARCHIVE_BODIES - self._kept)
        self._kept += body.size - left_out
        self._sizes.value = (body.size, left_out, body.limit)
        try:
            super().exchange(body=text, **details)
        finally:
            self._sizes.value = None

    def _add(self, item: dict[str, Any]) -> None:
        sizes = getattr(self._sizes, "value", None)
        if sizes is not None:
            size, left_out, limit = sizes
            response = item["response"]
            response["content"]["size"] = size
            if response["status"]:
                response["bodySize"] = size
            if left_out:
                response["content"]["_truncated"] = left_out
                response["content"]["comment"] = (
                    f"{left_out} of {size} bytes left out: gatekit proxy keeps the first {limit} bytes of a body, "
                    f"and {ARCHIVE_BODIES // MIB} MiB of bodies per order"
                )
        super()._add(item)


__all__ = ["ARCHIVE_BODIES", "Body", "ProxyRecorder", "charset_of"]
