"""A short load run from a notebook, and its charts (notebook ``07-load``).

    run = run_load(users=10, seconds=8, weights="sale=3,threeds=1")   # gatekit load --headless, a subprocess
    run.summary          # summary.md (Markdown); run.results: results.json as a dict
    run.latency_chart()  # p50 and p95 of the flows, second by second (SVG)
    run.mix_chart()      # flows run, by flow, failed ones apart (SVG)

Locust runs in its own process (it patches the standard library for gevent, which a kernel must not get).
"""

from __future__ import annotations

import csv
import html
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WIDTH, HEIGHT, MARGIN, LEGEND = 720, 260, 48, 150  # pixels (LEGEND: the room right of the plot for names)
COLOURS = ("#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b7791f", "#c53030", "#2c7a7b")


@dataclass(frozen=True)
class Svg:
    """An SVG picture that Jupyter shows as itself."""

    text: str

    def _repr_svg_(self) -> str:
        return self.text


@dataclass(frozen=True)
class LoadRun:
    folder: Path
    output: str
    returncode: int

    @property
    def results(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.folder / "results.json").read_text())
        return data

    @property
    def summary(self) -> str:
        return (self.folder / "summary.md").read_text()

    def history(self) -> dict[str, list[tuple[float, float, float]]]:
        """Flow name -> (seconds since the start, p50 ms, p95 ms), from Locust's per-second history."""
        rows = list(csv.DictReader((self.folder / "load_stats_history.csv").open()))
        start = min((int(row["Timestamp"]) for row in rows), default=0)
        series: dict[str, list[tuple[float, float, float]]] = {}
        for row in rows:
            if row["Type"] != "flow" or row["50%"] in ("N/A", "0"):
                continue
            point = (int(row["Timestamp"]) - start, float(row["50%"]), float(row["95%"]))
            series.setdefault(row["Name"], []).append(point)
        return series

    def latency_chart(self) -> Svg:
        """p50 (solid) and p95 (dashed) of each flow over the run."""
        series = self.history()
        points = [p for values in series.values() for p in values]
        if not points:
            return Svg(_svg([_frame("no flow finished yet")]))
        t_max = max(p[0] for p in points) or 1
        ms_max = max(p[2] for p in points) or 1

        def x(t: float) -> float:
            return MARGIN + (WIDTH - MARGIN - LEGEND) * t / t_max

        def y(ms: float) -> float:
            return HEIGHT - MARGIN + (2 * MARGIN - HEIGHT) * ms / ms_max

        parts = [_frame("flow latency over the run: p50 solid, p95 dashed")]
        parts += _axes(x, y, t_max, ms_max)
        for index, (name, values) in enumerate(sorted(series.items())):
            colour = COLOURS[index % len(COLOURS)]
            for column, dash in ((1, ""), (2, ' stroke-dasharray="4 3"')):
                line = " ".join(f"{x(p[0]):.1f},{y(p[column]):.1f}" for p in values)
                parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5"{dash} points="{line}"/>')
            parts.append(f'<text x="{WIDTH - LEGEND + 12}" y="{MARGIN + 14 * index}" font-size="11" '
                         f'fill="{colour}">{html.escape(name)}</text>')  # fmt: skip
        return Svg(_svg(parts))

    def mix_chart(self) -> Svg:
        """How many of each flow ran (failed ones in red)."""
        flows = sorted((row for row in self.results["rows"] if row["type"] == "flow"), key=lambda r: -r["requests"])
        most = max((row["requests"] for row in flows), default=1) or 1
        parts = [_frame("flows run (failed in red)")]
        bar = (HEIGHT - 2 * MARGIN) / max(len(flows), 1)
        labels = 150  # (the names, right-aligned, left of the bars)
        for index, row in enumerate(flows):
            top, span = MARGIN + index * bar, (WIDTH - labels - MARGIN) / most
            done, failed = row["requests"] - row["failures"], row["failures"]
            parts.append(f'<rect x="{labels}" y="{top + 2:.1f}" width="{span * done:.1f}" height="{bar - 4:.1f}" '
                         f'fill="#2b6cb0"/>')  # fmt: skip
            parts.append(f'<rect x="{labels + span * done:.1f}" y="{top + 2:.1f}" width="{span * failed:.1f}" '
                         f'height="{bar - 4:.1f}" fill="#c53030"/>')  # fmt: skip
            parts.append(f'<text x="{labels - 6}" y="{top + bar / 2 + 4:.1f}" font-size="11" text-anchor="end">'
                         f'{html.escape(row["name"])} ({row["requests"]})</text>')  # fmt: skip
        return Svg(_svg(parts))


def _axes(x: Any, y: Any, t_max: float, ms_max: float) -> list[str]:
    """The axes with three labels each: seconds since the start, milliseconds."""
    left, bottom, right, top = x(0), y(0), x(t_max), y(ms_max)
    parts = [f'<path d="M{left:.1f},{top:.1f} V{bottom:.1f} H{right:.1f}" fill="none" stroke="#888"/>']
    for share in (0.0, 0.5, 1.0):
        parts.append(f'<text x="{left - 4:.1f}" y="{y(ms_max * share) + 4:.1f}" font-size="10" text-anchor="end">'
                     f"{ms_max * share:.0f} ms</text>")  # fmt: skip
        parts.append(f'<text x="{x(t_max * share):.1f}" y="{bottom + 14:.1f}" font-size="10" text-anchor="middle">'
                     f"{t_max * share:.0f} s</text>")  # fmt: skip
    return parts


def _frame(title: str) -> str:
    return (f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white" stroke="#ccc"/>'
            f'<text x="{MARGIN}" y="18" font-size="12">{html.escape(title)}</text>')  # fmt: skip


def _svg(parts: list[str]) -> str:
    head = f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif">'
    return head + "".join(parts) + "</svg>"


def run_load(users: int = 10, seconds: int = 8, weights: str | None = None, think: str = "0,0.5",
             folder: Path | None = None, extra: tuple[str, ...] = ()) -> LoadRun:  # fmt: skip
    """``gatekit load --headless`` against an embedded simulator, in a subprocess; its reports in ``folder``."""
    folder = folder or Path(tempfile.mkdtemp(prefix="gatekit-load-"))
    command = [sys.executable, "-m", "toolkit.cli", "load", "--headless", "-u", str(users), "-r", str(users),
               "-t", f"{seconds}s", "--think", think, "--reports", str(folder), *extra]  # fmt: skip
    if weights:
        command += ["--weights", weights]
    done = subprocess.run([*command, "--", "--only-summary"], capture_output=True, text=True, timeout=seconds + 120)
    return LoadRun(folder, done.stdout + done.stderr, done.returncode)
