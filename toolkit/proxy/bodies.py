"""What the proxy keeps of an answer's body: its first ``kept_body`` bytes (for the checks and the recording) and its
true size.  The rest is passed on to the client and counted, never held: a 300 MB answer costs the proxy a
megabyte, not 300.

A recording (``toolkit.proxy.recording``) keeps the kept part masked and says what it left out: the record's
``body_size`` and ``left_out`` (HAR: ``content.size`` and ``bodySize`` the true sizes, ``content._truncated``
the bytes left out, ``content.comment`` why).  A cut can fall inside a card number, which masking would then
not know for one: the digits and separators the kept part ends with are left out too.  An order's recording
keeps ``ARCHIVE_BODIES`` bytes of bodies in all (it is held in memory and written again as it grows); bodies
after that are left out the same way.
"""

from __future__ import annotations

import re

from toolkit.proxy.limits import MIB

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


__all__ = ["ARCHIVE_BODIES", "Body", "charset_of"]
