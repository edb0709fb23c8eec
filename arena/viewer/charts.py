"""Charts for the report page as inline SVG: Elo ratings with their error bars, and the SPRT's
log-likelihood ratio between its bounds.

Drawn on the server as plain SVG so that the report shows them with scripts off, prints them,
and keeps them in a mailed file. Bot names are escaped: they are whatever a manifest said.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

_FONT = 'font-family="system-ui, sans-serif" font-size="12"'


def _ticks(lo: float, hi: float, target: int = 6) -> list[float]:
    """Round tick positions covering [lo, hi]."""
    span = max(hi - lo, 1e-9)
    raw = span / target
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    out = []
    t = first
    while t <= hi + 1e-9:
        out.append(round(t, 10))
        t += step
    return out


def elo_chart(players: Sequence[Mapping[str, Any]], title: str = "Elo") -> str:
    """One row per bot: its Elo as a dot, the 95% interval as a bar; unrated bots say so."""
    label_w, plot_w, row_h, top = 190, 440, 26, 30
    rated = [p for p in players if p.get("elo") is not None]
    lows = [p["elo"] - (p.get("ci95") or 0) for p in rated] or [-100.0]
    highs = [p["elo"] + (p.get("ci95") or 0) for p in rated] or [100.0]
    lo, hi = min(*lows, 0.0), max(*highs, 0.0)
    pad = max(10.0, (hi - lo) * 0.08)
    lo, hi = lo - pad, hi + pad
    height = top + row_h * len(players) + 28
    width = label_w + plot_w + 110

    def x(v: float) -> float:
        return label_w + (v - lo) / (hi - lo) * plot_w

    parts = [
        f'<text x="4" y="16" {_FONT} font-weight="600">{escape(title)}</text>',
    ]
    axis_y = top + row_h * len(players) + 4
    for t in _ticks(lo, hi):
        parts.append(
            f'<line x1="{x(t):.1f}" y1="{top - 6}" x2="{x(t):.1f}" y2="{axis_y}" '
            f'stroke="{"#888" if t == 0 else "#e3e3e8"}" stroke-width="1"/>'
            f'<text x="{x(t):.1f}" y="{axis_y + 15}" {_FONT} text-anchor="middle" '
            f'fill="#555">{"0" if t == 0 else f"{t:+g}"}</text>'
        )
    for i, p in enumerate(players):
        y = top + row_h * i + row_h / 2
        name = escape(str(p.get("bot", "")))
        parts.append(
            f'<text x="{label_w - 8}" y="{y + 4:.1f}" {_FONT} text-anchor="end">{name}</text>'
        )
        elo = p.get("elo")
        if elo is None:
            parts.append(
                f'<text x="{x(0) + 6:.1f}" y="{y + 4:.1f}" {_FONT} fill="#888">not rated</text>'
            )
            continue
        ci = p.get("ci95")
        if ci is not None:
            parts.append(
                f'<line x1="{x(elo - ci):.1f}" y1="{y:.1f}" x2="{x(elo + ci):.1f}" y2="{y:.1f}" '
                f'stroke="#1f77b4" stroke-width="3" stroke-linecap="round"/>'
            )
        text = f"{elo:+.0f}" + (f" ± {ci:.0f}" if ci is not None else "")
        parts.append(
            f'<circle cx="{x(elo):.1f}" cy="{y:.1f}" r="5" fill="#d62728"/>'
            f'<text x="{label_w + plot_w + 8}" y="{y + 4:.1f}" {_FONT}>{text}</text>'
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="arena-chart" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}">{"".join(parts)}</svg>'
    )


def llr_chart(history: Sequence[Mapping[str, Any]], lower: float, upper: float) -> str:
    """The SPRT's LLR after every completed game pair, between the bounds that decide it."""
    left, plot_w, plot_h, top = 48, 560, 180, 14
    width, height = left + plot_w + 20, top + plot_h + 34
    n = max(1, max((h["pairs"] for h in history), default=1))
    values = [h["llr"] for h in history]
    lo = min(lower, *values) if values else lower
    hi = max(upper, *values) if values else upper
    pad = (hi - lo) * 0.08 or 1.0
    lo, hi = lo - pad, hi + pad

    def x(pairs: float) -> float:
        return left + pairs / n * plot_w

    def y(v: float) -> float:
        return top + (hi - v) / (hi - lo) * plot_h

    parts = [
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fafafc" '
        f'stroke="#d9d9de"/>'
    ]
    for value, label, colour in ((upper, "H1", "#2ca02c"), (lower, "H0", "#d62728")):
        parts.append(
            f'<line x1="{left}" y1="{y(value):.1f}" x2="{left + plot_w}" y2="{y(value):.1f}" '
            f'stroke="{colour}" stroke-dasharray="5 4"/>'
            f'<text x="{left + 4}" y="{y(value) - 4:.1f}" {_FONT} '
            f'fill="{colour}">{label} {value:.2f}</text>'
        )
    parts.append(
        f'<line x1="{left}" y1="{y(0):.1f}" x2="{left + plot_w}" y2="{y(0):.1f}" stroke="#bbb"/>'
    )
    for t in _ticks(lo, hi, 5):
        parts.append(
            f'<text x="{left - 6}" y="{y(t) + 4:.1f}" {_FONT} text-anchor="end" '
            f'fill="#555">{t:g}</text>'
        )
    for t in _ticks(0, n, 6):
        if t == int(t):
            parts.append(
                f'<text x="{x(t):.1f}" y="{top + plot_h + 16}" {_FONT} text-anchor="middle" '
                f'fill="#555">{int(t)}</text>'
            )
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{height - 2}" {_FONT} text-anchor="middle" '
        f'fill="#555">game pairs</text>'
    )
    if history:
        points = " ".join(f"{x(h['pairs']):.1f},{y(h['llr']):.1f}" for h in history)
        points = f"{x(0):.1f},{y(0):.1f} " + points
        last = history[-1]
        parts.append(
            f'<polyline points="{points}" fill="none" stroke="#1f77b4" stroke-width="2"/>'
            f'<circle cx="{x(last["pairs"]):.1f}" cy="{y(last["llr"]):.1f}" r="4" '
            f'fill="#1f77b4"/>'
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="arena-chart" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="SPRT log-likelihood ratio">{"".join(parts)}</svg>'
    )


#: colours of a line chart's series, in order (the legend repeats them)
SERIES_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2")


def line_chart(
    series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    *,
    title: str,
    x_label: str,
    width: int = 720,
) -> str:
    """Lines through each series' (x, y) points, one colour per series, with a legend: the
    league's ratings over games. Series names are escaped (bot names, variants).

    The text is 12 px at the drawing's own `width`: a page shrinks the drawing to its box, so
    it draws a narrow one (`width` under 600: fewer ticks, the legend in one column) for a
    phone, where the wide one's text would shrink to half and be unreadable."""
    narrow = width < 600
    left, right, top, plot_h = (44, 10, 30, 180) if narrow else (52, 16, 30, 200)
    columns = 1 if narrow else 3
    legend_h = 18 * ((len(series) + columns - 1) // columns)
    plot_w = width - left - right
    height = top + plot_h + 40 + legend_h
    xs = [p[0] for _, pts in series for p in pts] or [0.0, 1.0]
    ys = [p[1] for _, pts in series for p in pts] or [0.0, 1.0]
    x_lo, x_hi = min(xs), max(xs)
    if x_hi == x_lo:
        x_hi = x_lo + 1
    y_lo, y_hi = min(ys), max(ys)
    pad = (y_hi - y_lo) * 0.08 or 1.0
    y_lo, y_hi = y_lo - pad, y_hi + pad

    def x(v: float) -> float:
        return left + (v - x_lo) / (x_hi - x_lo) * plot_w

    def y(v: float) -> float:
        return top + (y_hi - v) / (y_hi - y_lo) * plot_h

    parts = [
        f'<text x="4" y="16" {_FONT} font-weight="600">{escape(title)}</text>',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fafafc" '
        f'stroke="#d9d9de"/>',
    ]
    for t in _ticks(y_lo, y_hi, 4 if narrow else 5):
        parts.append(
            f'<line x1="{left}" y1="{y(t):.1f}" x2="{left + plot_w}" y2="{y(t):.1f}" '
            f'stroke="#e3e3e8"/><text x="{left - 6}" y="{y(t) + 4:.1f}" {_FONT} '
            f'text-anchor="end" fill="#555">{t:g}</text>'
        )
    for t in _ticks(x_lo, x_hi, 4 if narrow else 6):
        if t == int(t):
            parts.append(
                f'<text x="{x(t):.1f}" y="{top + plot_h + 16}" {_FONT} text-anchor="middle" '
                f'fill="#555">{int(t)}</text>'
            )
    parts.append(
        f'<text x="{(left + plot_w / 2) if not narrow else width / 2}" y="{top + plot_h + 32}" '
        f'{_FONT} text-anchor="middle" fill="#555">{escape(x_label)}</text>'
    )
    if not any(pts for _, pts in series):
        parts.append(
            f'<text x="{left + plot_w / 2}" y="{top + plot_h / 2}" {_FONT} '
            f'text-anchor="middle" fill="#888">no rated games yet</text>'
        )
    for i, (name, pts) in enumerate(series):
        colour = SERIES_COLOURS[i % len(SERIES_COLOURS)]
        if len(pts) == 1:
            parts.append(
                f'<circle cx="{x(pts[0][0]):.1f}" cy="{y(pts[0][1]):.1f}" r="3" fill="{colour}"/>'
            )
        elif pts:
            line = " ".join(f"{x(a):.1f},{y(b):.1f}" for a, b in pts)
            parts.append(
                f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2" '
                f'stroke-linejoin="round"/>'
            )
        lx = left + (i % columns) * (plot_w / columns)
        ly = top + plot_h + 50 + 18 * (i // columns)
        parts.append(
            f'<rect x="{lx:.1f}" y="{ly - 9}" width="12" height="4" fill="{colour}"/>'
            f'<text x="{lx + 18:.1f}" y="{ly - 3}" {_FONT}>{escape(name)}</text>'
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="arena-chart" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}">{"".join(parts)}</svg>'
    )
