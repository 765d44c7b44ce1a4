"""Draw arrows as an SVG sequence diagram: plain SVG text, no browser and no library needed.

Each lane is a box with a dashed life line; each arrow a row: the time since the first arrow on the
left, the label above the line, the outcome and its duration below, coloured by the outcome.  Every
arrow is a ``<g class="arrow">`` with ``data-from``, ``data-to``, ``data-label`` and ``data-outcome``
(tests and tools read them), and a ``<title>`` with the whole text (a tooltip in a browser).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from toolkit.diagram.model import LANES, Arrow, Lane, Tone, lanes_of
from toolkit.masking import mask_text

LEFT = 78  # the time column
LANE_WIDTH = 172
TOP = 74  # below the title and the lane boxes
ROW = 46
CHAR = 6.3  # average width of a 12 px sans-serif character
COLOURS: dict[Tone, str] = {"ok": "#1b7f3b", "bad": "#b00020", "wait": "#946200", "plain": "#3b4252"}
FONT = "font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif"
HALO = 'paint-order="stroke" stroke="#fff" stroke-width="4" stroke-linejoin="round"'  # texts readable over life lines


def _attr(value: object) -> str:
    return escape(str(value), quote=True)


def _fit(text: str, width: float) -> str:
    """The text cut to the pixels it may take (an ellipsis marks the cut; the tooltip keeps it whole)."""
    most = max(8, int(width / CHAR))
    return text if len(text) <= most else text[: most - 1] + "…"


def _offset(arrow: Arrow, start: float | None) -> str:
    if arrow.at is None or start is None:
        return ""
    seconds = arrow.at.timestamp() - start
    return f"+{seconds * 1000:.0f} ms" if seconds < 1 else f"+{seconds:.2f} s"


def _head(x: float, y: float, leftwards: bool, colour: str) -> str:
    """An arrowhead drawn where the line ends (no ``<marker>``: ids would clash between diagrams on one page)."""
    back = 9 if not leftwards else -9
    return f'<path d="M{x:.0f},{y} L{x - back:.0f},{y - 5} L{x - back:.0f},{y + 5} z" fill="{colour}"/>'


def _lane_box(index: int, lane: Lane, bottom: float) -> str:
    x = LEFT + index * LANE_WIDTH + LANE_WIDTH / 2
    words = LANES[lane].split(" ")
    lines = [" ".join(words[:2]), " ".join(words[2:])] if len(LANES[lane]) > 22 else [LANES[lane]]
    texts = "".join(
        f'<tspan x="{x:.0f}" dy="{0 if i == 0 else 14}">{escape(line)}</tspan>' for i, line in enumerate(lines)
    )
    first = 38 if len(lines) == 1 else 31
    return (
        f'<g class="lane" data-lane="{lane}"><rect x="{x - 78:.0f}" y="18" width="156" height="38" rx="6" '
        f'fill="#eef1f6" stroke="#9aa5b8"/><text x="{x:.0f}" y="{first}" text-anchor="middle" '
        f'font-size="12" font-weight="600" fill="#1d2430">{texts}</text>'
        f'<line x1="{x:.0f}" y1="56" x2="{x:.0f}" y2="{bottom:.0f}" stroke="#b8bfca" stroke-dasharray="4 4"/></g>'
    )


def _placed(text: str, middle: float, width: float) -> tuple[str, float]:
    """The text (cut to the row's width) and where to centre it: over the arrow, kept inside the drawing."""
    shown = _fit(text, width - LEFT - 16)
    half = len(shown) * CHAR / 2
    return shown, min(max(middle, LEFT + half), width - 8 - half)


def _arrow_row(row: int, arrow: Arrow, columns: dict[Lane, float], start: float | None, width: float) -> str:
    """One row: a row holds one arrow, so its texts may run past the arrow's ends, never past the drawing's."""
    y = TOP + row * ROW + 24
    x1, x2 = columns[arrow.source], columns[arrow.target]
    middle = (x1 + x2) / 2
    colour = COLOURS[arrow.tone]
    timing = arrow.timing + (" in all" if arrow.count > 1 and arrow.timing else "")
    below = " · ".join(part for part in (arrow.outcome, timing) if part)
    end = x2 - 8 if x2 > x1 else x2 + 8
    whole = mask_text(f"{arrow.title}: {below}")
    label, label_x = _placed(arrow.title, middle, width)
    outcome, outcome_x = _placed(below, middle, width)
    return (
        f'<g class="arrow" data-from="{arrow.source}" data-to="{arrow.target}" data-label="{_attr(arrow.title)}" '
        f'data-outcome="{_attr(arrow.outcome)}" data-tone="{arrow.tone}"><title>{escape(whole)}</title>'
        f'<text x="8" y="{y + 4}" font-size="11" fill="#5b6472">{escape(_offset(arrow, start))}</text>'
        f'<line x1="{x1:.0f}" y1="{y}" x2="{end:.0f}" y2="{y}" stroke="{colour}" stroke-width="1.6"/>'
        + _head(x2, y, x2 < x1, colour)
        + f'<text x="{label_x:.0f}" y="{y - 6}" text-anchor="middle" font-size="12" font-weight="600" '
        f'fill="{colour}" {HALO}>{escape(label)}</text>'
        f'<text x="{outcome_x:.0f}" y="{y + 15}" text-anchor="middle" font-size="11" '
        f'fill="{colour}" {HALO}>{escape(outcome)}</text></g>'
    )


def render(arrows: Sequence[Arrow], title: str = "") -> str:
    """The SVG document of a sequence diagram (masked once more as a whole)."""
    arrows = list(arrows)
    lanes = lanes_of(arrows)
    columns = {lane: LEFT + i * LANE_WIDTH + LANE_WIDTH / 2 for i, lane in enumerate(lanes)}
    width = LEFT + len(lanes) * LANE_WIDTH + 10
    height = TOP + max(len(arrows), 1) * ROW + 30
    times = [arrow.at.timestamp() for arrow in arrows if arrow.at is not None]
    start = min(times) if times else None
    body = [_lane_box(i, lane, height - 24) for i, lane in enumerate(lanes)]
    body += [_arrow_row(row, arrow, columns, start, width) for row, arrow in enumerate(arrows)]
    if not arrows:
        body.append(f'<text x="{width / 2:.0f}" y="{TOP + 28}" text-anchor="middle" fill="#5b6472">nothing yet</text>')
    foot = "times from the first exchange · card data masked"
    return mask_text(
        f'<svg xmlns="http://www.w3.org/2000/svg" class="gk-sequence" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_attr(title or "sequence diagram")}" '
        f'style="background:#fff;{FONT}">'
        f'<text x="8" y="12" font-size="12" font-weight="700" fill="#1d2430">{escape(title)}</text>'
        + "".join(body)
        + f'<text x="8" y="{height - 8}" font-size="10" fill="#8a93a3">{foot}</text></svg>'
    )
