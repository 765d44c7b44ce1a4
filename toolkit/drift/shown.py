"""A value that comes from a recording (a scenario's name, an operation, a field, an answer's words), as each of
drift's outputs shows it.

A recording is read, not trusted: its text may hold card data (a recording made by hand, or by another tool),
escape sequences that retitle or clear a terminal (``\\x1b]0;...\\x07``, ``\\x1b[2J``, ``\\x9b``), Markdown or HTML
that would become a link or a tag in a CI summary, or a message of megabytes.  ``value`` masks card data and
cuts it; ``terminal``, ``markdown_code`` and ``html_text`` then escape it for where it goes.
"""

from __future__ import annotations

import html
import re

from toolkit.masking import mask_text
from toolkit.terminal import printable

LIMIT = 500  # characters of one value that a report shows (the JSON report included)
_BACKTICKS = re.compile("`+")


def value(text: object, limit: int = LIMIT) -> str:
    """``text`` with card data masked, cut at ``limit`` characters (a number cut in two is left out whole: its half
    would not be masked)."""
    text = str(text)
    if len(text) > limit:
        text = f"{text[:limit].rstrip('0123456789 -')}... ({len(text)} characters)"
    return mask_text(text)


def terminal(text: object, limit: int = LIMIT) -> str:
    """For a terminal: masked, cut, every control character written as an escape (``\\x1b``)."""
    return printable(value(text, limit))


def markdown_code(text: object) -> str:
    """For a Markdown table cell: a code span (nothing in it is a link, a tag or emphasis), with a fence longer
    than any run of backticks in it, pipes escaped (GFM tables), control characters escaped; "" stays ""."""
    shown = terminal(text).replace("|", "\\|")
    if not shown:
        return ""
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(shown)), default=0) + 1)
    pad = " " if shown[0] in "` " or shown[-1] in "` " else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def markdown_fence(lines: list[str]) -> str:
    """A fence for a Markdown code block holding ``lines``: longer than any run of backticks in them."""
    longest = max((len(run) for line in lines for run in _BACKTICKS.findall(line)), default=0)
    return "`" * max(3, longest + 1)


def html_text(text: object) -> str:
    """For HTML: masked, cut, control characters escaped, then ``<>&"'`` escaped."""
    return html.escape(terminal(text))
