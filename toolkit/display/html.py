"""HTML building blocks for rich display in notebooks: escaped tables, sections, notes, one style, all masked.

JupyterLab styles output tables itself (cells right-aligned and centred vertically, more specific
than a class rule of ours), so every cell carries its style inline: left-aligned, top-aligned,
bordered.  Labels never break inside a word; long values (URLs, base strings, tokens) wrap where
they must.  ``page`` masks the finished HTML once more (``toolkit.masking``).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from toolkit.callbacks import mask_params
from toolkit.masking import mask_text

Tone = Literal["ok", "bad", "wait", "plain"]
COLOURS: dict[Tone, str] = {"ok": "#1b7f3b", "bad": "#b00020", "wait": "#946200", "plain": "#1d2430"}
_MONO = "font-family:var(--jp-code-font-family,SFMono-Regular,Menlo,Consolas,monospace)"
_CELL = (
    "text-align:left;vertical-align:top;border:1px solid #d8dce3;padding:2px 8px;font-size:12px;line-height:1.45;"
    + _MONO
)
LABEL = _CELL + ";white-space:nowrap;background:#f7f8fa"
VALUE = _CELL + ";white-space:pre-wrap;overflow-wrap:anywhere;word-break:normal;min-width:8em"
MIDDLE = _CELL + ";white-space:nowrap"
HEAD = _CELL.replace(_MONO, "font-family:inherit") + ";white-space:nowrap;background:#eef1f6;font-weight:600"
STYLE = (
    "<style>.gk table{border-collapse:collapse;margin:2px 0 8px 0;width:auto}"
    ".gk code{font-family:var(--jp-code-font-family,monospace);font-size:12px;background:none;padding:0}"
    ".gk h4{margin:8px 0 3px 0;font-size:13px}.gk p{margin:3px 0}"
    ".gk details>summary{cursor:pointer;color:#3b4252;font-size:12px;margin:3px 0}</style>"
)
_LONG = 240


def esc(value: object) -> str:
    return html.escape(str(value))


def shorten(value: str, limit: int = _LONG) -> str:
    return value if len(value) <= limit else value[:limit] + f"… ({len(value)} characters)"


def cell(value: object, style: str = VALUE, tag: str = "td") -> str:
    return f'<{tag} style="{style}">{esc(value)}</{tag}>'


def _style(index: int, width: int) -> str:
    """The first column is a label, the last a value that wraps where it must; those between never break."""
    if index == width - 1:
        return VALUE
    return LABEL if index == 0 else MIDDLE


def table(rows: Iterable[Sequence[object]], head: Sequence[str] = ()) -> str:
    """An HTML table of escaped cells: labels and short columns never broken, the last column wrapped."""
    header = "<tr>" + "".join(f'<th style="{HEAD}">{esc(h)}</th>' for h in head) + "</tr>" if head else ""
    body = "".join("<tr>" + "".join(cell(c, _style(i, len(row))) for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f'<table style="border-collapse:collapse;margin:2px 0 8px 0">{header}{body}</table>'


def section(title: str, content: str) -> str:
    return f"<h4>{esc(title)}</h4>{content}"


def folded(summary: str, content: str, *, open_: bool = False) -> str:
    """A ``<details>`` block: shown folded, opened with a click."""
    return f"<details{' open' if open_ else ''}><summary>{esc(summary)}</summary>{content}</details>"


def badge(text: str, tone: Tone) -> str:
    """A short coloured word (``approved`` green, ``declined`` red, ``processing`` amber)."""
    colour = COLOURS[tone]
    return (
        f'<span style="display:inline-block;padding:1px 8px;border-radius:9px;border:1px solid {colour};'
        f'color:{colour};font-weight:600;font-size:12px">{esc(text)}</span>'
    )


def line(text: str, tone: Tone = "plain", *, bold: bool = False) -> str:
    weight = ";font-weight:600" if bold or tone != "plain" else ""
    return f'<p style="color:{COLOURS[tone]}{weight}">{esc(text)}</p>'


def page(*parts: str) -> str:
    """Wrap parts in the styled container and mask the whole once more."""
    return mask_text(STYLE + '<div class="gk">' + "".join(parts) + "</div>")


def masked_items(fields: Mapping[str, str]) -> list[tuple[str, str]]:
    """Card data masked by name and in free text; a value masked already (``453897******6732``) stays."""
    masked = mask_params(dict(fields))
    return [(name, shorten(value if "*" in value else masked[name])) for name, value in fields.items()]


def text_lines(fields: Mapping[str, str]) -> str:
    return "\n".join(f"  {name} = {value}" for name, value in masked_items(fields))


def tone_of(status: str) -> Tone:
    """The colour of a gateway status: approved green; declined, filtered, error red; processing, unknown amber."""
    value = status.strip().lower()
    if value == "approved":
        return "ok"
    if value in ("declined", "filtered", "error"):
        return "bad"
    return "wait" if value in ("processing", "unknown") else "plain"
