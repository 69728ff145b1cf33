"""Inline SVG charts for the HTML report.

Every chart carries a <title> and <desc> (named by aria-labelledby), axis labels, and a <title>
on each mark with its numbers, so it reads without sight and without hover; the report puts the
same numbers in a table beside it. Colours come from presentation attributes, never a style
attribute, which the report's Content-Security-Policy forbids. Every text is escaped here.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from html import escape
import hashlib
from typing import Sequence

from matcher.timerange import shifted

WIDTH = 900
# The narrowest mark drawn for a value that is there, however small (a 0 s gap).
MIN_MARK = 4.0
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")


def _svg(title: str, description: str, height: int, body: list[str]) -> str:
    # Derived from the content, so that rebuilding a report gives the same bytes.
    ident = "chart-" + hashlib.sha256(f"{title}\n{description}".encode("utf-8")).hexdigest()[:10]
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img"'
        f' aria-labelledby="{ident}-title {ident}-desc" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="{ident}-title">{escape(title)}</title><desc id="{ident}-desc">{escape(description)}</desc>'
        + "".join(body)
        + "</svg>"
    )


def _text(x: float, y: float, text: str, anchor: str = "start", cls: str = "") -> str:
    klass = f' class="{cls}"' if cls else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{klass}>{escape(text)}</text>'


def _rect(x: float, y: float, w: float, h: float, fill: str, title: str) -> str:
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0):.1f}" height="{h:.1f}" fill="{fill}">'
        f"<title>{escape(title)}</title></rect>"
    )


def _ticks(top: float) -> list[float]:
    """About five round tick values from 0 to at least `top`."""
    if top <= 0:
        return [0]
    raw = top / 5
    magnitude = 10 ** (len(str(int(raw))) - 1) if raw >= 1 else 1
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    ticks = [0.0]
    while ticks[-1] < top:
        ticks.append(ticks[-1] + step)
    return ticks


def _number(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:,.3g}"


def stacked_bars(
    title: str, rows: Sequence[tuple[str, Sequence[int]]], series: Sequence[tuple[str, str]], x_label: str
) -> str:
    """Horizontal bars, one per row, stacked by series (name, colour)."""
    label_width, bar_height, top = 260, 18, 40
    height = top + len(rows) * (bar_height + 6) + 50
    scale_max = max((sum(values) for _, values in rows), default=0)
    ticks = _ticks(scale_max)
    plot = WIDTH - label_width - 30
    unit = plot / ticks[-1] if ticks[-1] else 0
    body = [_legend(series, label_width, 16)]
    for i, (label, values) in enumerate(rows):
        y = top + i * (bar_height + 6)
        body.append(_text(label_width - 8, y + bar_height - 4, label, "end"))
        x = label_width
        for (name, colour), value in zip(series, values):
            if value:
                body.append(_rect(x, y, value * unit, bar_height, colour, f"{label}: {name} {value:,}"))
                x += value * unit
    body += _x_axis(ticks, label_width, unit, top + len(rows) * (bar_height + 6), x_label, _number)
    return _svg(title, f"{len(rows)} bars; the numbers are in the table below.", height, body)


def _legend(series: Sequence[tuple[str, str]], x: float, y: float) -> str:
    parts = []
    for name, colour in series:
        parts.append(f'<rect x="{x:.1f}" y="{y - 10:.1f}" width="12" height="12" fill="{colour}" stroke="#333333"/>')
        parts.append(_text(x + 16, y, name))
        x += 24 + 7.5 * len(name)
    return "".join(parts)


def _x_axis(ticks, left: float, unit: float, y: float, label: str, fmt) -> list[str]:
    parts = [f'<line x1="{left}" y1="{y:.1f}" x2="{left + ticks[-1] * unit:.1f}" y2="{y:.1f}" class="axis"/>']
    for tick in ticks:
        x = left + tick * unit
        parts.append(f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x:.1f}" y2="{y + 4:.1f}" class="axis"/>')
        parts.append(_text(x, y + 16, fmt(tick), "middle", "tick"))
    parts.append(_text(left + ticks[-1] * unit / 2, y + 34, label, "middle", "axis-label"))
    return parts


def timeline(
    title: str,
    starts: Sequence[datetime],
    size: timedelta,
    series: Sequence[tuple[str, str, Sequence[int]]],
    markers: Sequence[tuple[datetime, str]],
    y_label: str,
) -> str:
    """Stacked columns over time, one stack per bucket, with dashed lines at `markers`."""
    left, top, bottom, height = 70, 40, 60, 340
    plot_w, plot_h = WIDTH - left - 20, height - top - bottom
    totals = [sum(values[i] for _, _, values in series) for i in range(len(starts))]
    ticks = _ticks(max(totals, default=0))
    unit = plot_h / ticks[-1] if ticks[-1] else 0
    column = plot_w / max(len(starts), 1)
    body = [_legend([(name, colour) for name, colour, _ in series], left, 16)]
    base = top + plot_h
    for i, start in enumerate(starts):
        y = base
        for name, colour, values in series:
            if values[i]:
                h = values[i] * unit
                y -= h
                body.append(_rect(left + i * column, y, column * 0.9, h, colour, f"{start:%Y-%m-%d %H:%M}: {name} {values[i]:,}"))
    body.append(f'<line x1="{left}" y1="{base}" x2="{left + plot_w}" y2="{base}" class="axis"/>')
    body.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{base}" class="axis"/>')
    for tick in ticks:
        y = base - tick * unit
        body.append(_text(left - 6, y + 4, _number(tick), "end", "tick"))
    for i in range(0, len(starts), max(1, len(starts) // 6)):
        body.append(_text(left + (i + 0.5) * column, base + 16, f"{starts[i]:%m-%d %H:%M}", "middle", "tick"))
    if starts:
        end = shifted(starts[-1], size)  # the last bucket may end past 9999-12-31
        for moment, label in markers:
            if starts[0] <= moment <= end:
                x = left + (moment - starts[0]) / size * column
                body.append(
                    f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{base}" class="marker"><title>{escape(label)}</title></line>'
                )
    body.append(_text(left + plot_w / 2, height - 12, "time (UTC)", "middle", "axis-label"))
    body.append(
        f'<text x="16" y="{top + plot_h / 2:.1f}" text-anchor="middle" class="axis-label"'
        f' transform="rotate(-90 16 {top + plot_h / 2:.1f})">{escape(y_label)}</text>'
    )
    return _svg(title, f"{len(starts)} time buckets; dashed lines mark robots.txt changes.", height, body)


def gaps_against_delay(title: str, rows: Sequence[tuple[str, float, float | None]]) -> str:
    """Per row the Crawl-delay (outlined bar) and the smallest gap seen (filled bar), in seconds."""
    label_width, bar_height, top = 330, 20, 40
    height = top + len(rows) * (bar_height + 8) + 50
    top_value = max((max(delay, gap or 0) for _, delay, gap in rows), default=0)
    ticks = _ticks(top_value)
    unit = (WIDTH - label_width - 30) / ticks[-1] if ticks[-1] else 0
    body = [_legend([("Crawl-delay", "#ffffff"), ("smallest gap", "#d62728")], label_width, 16)]
    for i, (label, delay, gap) in enumerate(rows):
        y = top + i * (bar_height + 8)
        body.append(_text(label_width - 8, y + bar_height - 5, label, "end"))
        body.append(
            f'<rect x="{label_width}" y="{y:.1f}" width="{delay * unit:.1f}" height="{bar_height}" fill="#ffffff"'
            f' stroke="#333333"><title>{escape(f"{label}: Crawl-delay {delay:g} s")}</title></rect>'
        )
        if gap is not None:
            # A gap of 0 s, the worst there is, must not look like no bar at all.
            width = max(gap * unit, MIN_MARK)
            body.append(_rect(label_width, y + 5, width, bar_height - 10, "#d62728", f"{label}: smallest gap {gap:g} s"))
            body.append(_text(label_width + max(width, delay * unit) + 6, y + bar_height - 5, f"{gap:g} s", "start", "tick"))
    body += _x_axis(ticks, label_width, unit, top + len(rows) * (bar_height + 8), "seconds", _number)
    return _svg(title, f"{len(rows)} crawler and host pairs; the numbers are in the table below.", height, body)


def version_strip(
    title: str, start: datetime, end: datetime, versions: Sequence[tuple[datetime, str, str]]
) -> str:
    """One host's robots.txt versions as coloured spans on a time line: (effective_from, label,
    colour). Each span is numbered and set off from the next by a white gap, so two versions of
    the same colour read as two."""
    left, height, y = 20, 80, 20
    plot = WIDTH - 2 * left
    span = (end - start) or timedelta(hours=1)
    body = []
    for i, (moment, label, colour) in enumerate(versions):
        until = versions[i + 1][0] if i + 1 < len(versions) else end
        x = left + (moment - start) / span * plot
        w = (until - moment) / span * plot
        body.append(
            f'<rect x="{x:.1f}" y="{y}" width="{max(w, MIN_MARK):.1f}" height="24" fill="{colour}" stroke="#ffffff"'
            f' stroke-width="2" class="version"><title>{escape(f"version {i + 1}: {label}, from {moment:%Y-%m-%d %H:%M} UTC")}</title></rect>'
        )
        if w >= 16:
            body.append(_text(x + w / 2, y + 16, str(i + 1), "middle", "version-number"))
    body.append(_text(left, y + 44, f"{start:%Y-%m-%d %H:%M}", "start", "tick"))
    body.append(_text(WIDTH - left, y + 44, f"{end:%Y-%m-%d %H:%M}", "end", "tick"))
    body.append(_text(WIDTH / 2, y + 58, "time (UTC)", "middle", "axis-label"))
    return _svg(title, f"{len(versions)} versions; listed in the table below.", height, body)


def fetch_timeline(
    title: str,
    start: datetime,
    end: datetime,
    changes: Sequence[datetime],
    rows: Sequence[tuple[str, Sequence[datetime], Sequence[datetime]]],
) -> str:
    """One row per reader: (label, its robots.txt fetches, those that were its first after a
    change); dashed lines at the changes, the first fetches after them drawn larger."""
    left, top, row_h = 190, 20, 26
    plot = WIDTH - left - 20
    height = top + row_h * len(rows) + 50
    span = (end - start) or timedelta(hours=1)

    def x_of(moment: datetime) -> float:
        return left + (moment - start) / span * plot

    body = []
    for i, (label, fetches, firsts) in enumerate(rows):
        y = top + row_h * i + row_h / 2
        body.append(_text(left - 8, y + 4, label, "end", "tick"))
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot}" y2="{y:.1f}" class="axis"/>')
        for moment in fetches:
            first = moment in firsts
            body.append(
                f'<circle cx="{x_of(moment):.1f}" cy="{y:.1f}" r="{6 if first else 3}"'
                f' fill="{PALETTE[3] if first else PALETTE[0]}"><title>{escape(label)}:'
                f' {"first fetch after a change" if first else "fetch"} {moment:%Y-%m-%d %H:%M:%S} UTC</title></circle>'
            )
    bottom = top + row_h * len(rows)
    for moment in changes:
        x = x_of(moment)
        body.append(
            f'<line x1="{x:.1f}" y1="{top - 8}" x2="{x:.1f}" y2="{bottom:.1f}" class="marker">'
            f"<title>robots.txt changed {moment:%Y-%m-%d %H:%M:%S} UTC</title></line>"
        )
    body.append(_text(left, bottom + 18, f"{start:%Y-%m-%d %H:%M}", "start", "tick"))
    body.append(_text(WIDTH - 20, bottom + 18, f"{end:%Y-%m-%d %H:%M}", "end", "tick"))
    body.append(_text(left + plot / 2, bottom + 36, "time (UTC)", "middle", "axis-label"))
    return _svg(
        title,
        f"{len(rows)} readers, {len(changes)} robots.txt changes; dashed lines mark the changes, large red dots"
        " each reader's first fetch after one.",
        height,
        body,
    )
