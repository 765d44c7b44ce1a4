"""Text for a terminal or a log line: every control character written as an escape.

A request path, a header or a field value comes from whoever sent it; printed raw, ``\\x1b]0;...\\x07`` retitles
the operator's terminal and ``\\r\\n`` forges a log line.  ``printable`` writes C0 and C1 controls, DEL, the
Unicode line and paragraph separators and the format characters (bidirectional overrides) as ``\\xNN`` or
``\\uNNNN``, and leaves everything else as it is.
"""

from __future__ import annotations

import re
import unicodedata

_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with its control characters escaped (the rest unchanged); a backslash stays a backslash."""
    if text.isprintable():
        return text
    escaped = _UNSAFE.sub(_escape, text)
    if escaped.isprintable():
        return escaped
    return "".join(ch if ch.isprintable() or ch == " " else _escape_char(ch) for ch in escaped)


def _escape_char(ch: str) -> str:
    category = unicodedata.category(ch)
    if category.startswith("Z") and ch != "\u2028" and ch != "\u2029":
        return ch  # (other spaces print as spaces)
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
