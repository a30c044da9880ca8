"""Charts as self-contained SVG text (no plotting library): grouped bars, or a model x ability heatmap.

Few abilities (MMBench's 6 L2 categories) read best as bars grouped by ability, one colour per model; many
(MME's 14 subtasks, SEED's 12 or 27 dimensions) as a heatmap with the value written in each cell, as in the
SEED-Bench paper's figures. The same SVG is embedded in the HTML report and written beside the Markdown one.
"""

from __future__ import annotations

import math
from html import escape

from mmbatch.report.leaderboard import Board, ScoreTable

PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac")
"""Model colours (Tableau 10), reused in order when there are more models."""

MAX_BAR_GROUPS = 8
"""Up to this many abilities a bar chart is drawn; more make a heatmap."""

SHORT_NAMES = {
    "attribute_reasoning": "AR", "coarse_perception": "CP", "finegrained_perception (cross-instance)": "FP-C",
    "finegrained_perception (instance-level)": "FP-S", "logic_reasoning": "LR", "relation_reasoning": "RR",
}
"""VLMEvalKit's abbreviations of the MMBench L2 categories (docs/rules.md §5)."""

FONT = 'font-family="Helvetica, Arial, sans-serif"'
CHAR_WIDTH = 6.5
"""Approximate width of one 11-px character, to size margins without measuring text."""


def chart_table(board: Board) -> ScoreTable:
    """What a board's chart shows: its abilities, else its headline numbers (without the row counts)."""
    if board.abilities is not None:
        return board.abilities
    summary = board.summary
    keep = len(summary.columns) - summary.counts
    return ScoreTable(summary.title, summary.columns[:keep],
                      tuple((model, cells[:keep]) for model, cells in summary.rows), summary.unit)


def render_chart(board: Board) -> str:
    """The board's chart as one ``<svg>`` element."""
    table = chart_table(board)
    title = f"{board.name}: {table.title.lower()}"
    if len(table.columns) > MAX_BAR_GROUPS:
        return heatmap(table, title)
    return grouped_bars(table, title)


def render_detail_chart(board: Board) -> str | None:
    """A heatmap of the board's finer table (MMBench's L3 categories), when it has one."""
    if board.detail is None:
        return None
    return heatmap(board.detail, f"{board.name}: {board.detail.title.lower()}")


def axis_max(table: ScoreTable) -> float:
    """100 for percentages; for points the next multiple of 100 above the largest value (MME subtask max 200)."""
    values = [c.value for _, cells in table.rows for c in cells if c.value is not None]
    top = max(values, default=0.0)
    return 100.0 if table.unit == "%" and top <= 100 else max(100.0, math.ceil(top / 100) * 100)


def _label(name: str) -> str:
    return SHORT_NAMES.get(name, name if len(name) <= 28 else name[:26] + "…")


def grouped_bars(table: ScoreTable, title: str) -> str:
    """Bars grouped by column (ability), one bar per model, a legend of models and a labelled y axis."""
    models = [model for model, _ in table.rows]
    bar, gap, top, plot_h = 22, 26, 40, 300
    group_w = max(1, len(models)) * bar + gap
    labels = [_label(c) for c in table.columns]
    # Rotated labels reach down and to the left of their group: leave room for the longest one.
    reach = CHAR_WIDTH * max((len(label) for label in labels), default=0)
    left = max(56.0, 0.82 * CHAR_WIDTH * len(labels[0]) - group_w / 2 + 12) if labels else 56.0
    bottom = 24 + 0.57 * reach
    legend_w = 40 + CHAR_WIDTH * max((len(m) for m in models), default=0)
    width = max(left + len(table.columns) * group_w + 20, 24 + CHAR_WIDTH * 1.2 * len(title), left + legend_w)
    height = top + plot_h + bottom + 18 * len(models) + 10
    scale = axis_max(table)
    parts = [_svg_open(width, height, title), _text(16, 22, title, size=14, weight="bold")]
    show_values = len(models) * len(table.columns) <= 32
    for tick in range(0, 5):
        tick_value = scale * tick / 4
        y = top + plot_h - plot_h * tick / 4
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - 10}" y2="{y:.1f}" stroke="#ddd"/>')
        parts.append(_text(left - 6, y + 4, f"{tick_value:g}", anchor="end"))
    parts.append(_text(14, top + plot_h / 2, table.unit, anchor="middle"))
    for g, column in enumerate(table.columns):
        x0 = left + g * group_w + gap / 2
        for m, (model, cells) in enumerate(table.rows):
            value = cells[g].value
            if value is None:
                continue
            h = plot_h * max(0.0, min(value, scale)) / scale
            x, y = x0 + m * bar, top + plot_h - h
            parts.append(f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{bar - 2}" height="{h:.1f}" '
                         f'fill="{PALETTE[m % len(PALETTE)]}"><title>{escape(model)}, {escape(column)}: '
                         f'{value:.2f}</title></rect>')
            if show_values:
                parts.append(_text(x + (bar - 2) / 2, y - 3, f"{value:.1f}", anchor="middle", size=9))
        cx = x0 + len(models) * bar / 2
        label_y = top + plot_h + 14
        parts.append(_text(cx, label_y, labels[g], anchor="end",
                           transform=f"rotate(-35 {cx:.1f} {label_y})"))
    for m, model in enumerate(models):
        y = top + plot_h + bottom + 18 * m
        colour = PALETTE[m % len(PALETTE)]
        parts.append(f'<rect x="{left:.1f}" y="{y - 10:.1f}" width="12" height="12" fill="{colour}"/>')
        parts.append(_text(left + 18, y, model))
    parts.append("</svg>")
    return "\n".join(parts)


def heatmap(table: ScoreTable, title: str) -> str:
    """Models (rows) x columns, each cell shaded by its value and labelled with it."""
    cell_w, cell_h, top, header = 56, 26, 40, 150
    left = 16 + CHAR_WIDTH * max((len(model) for model, _ in table.rows), default=5)
    # Column labels lean right at 55 degrees: the last one reaches past the grid.
    overhang = 0.57 * CHAR_WIDTH * max((len(_label(c)) for c in table.columns), default=0)
    width = max(left + cell_w * len(table.columns) + overhang, 24 + CHAR_WIDTH * 1.2 * len(title))
    height = top + header + cell_h * len(table.rows) + 20
    scale = axis_max(table)
    parts = [_svg_open(width, height, title), _text(16, 22, title, size=14, weight="bold")]
    grid_top = top + header
    for c, column in enumerate(table.columns):
        cx = left + c * cell_w + cell_w / 2
        parts.append(_text(cx, grid_top - 6, _label(column), anchor="start",
                           transform=f"rotate(-55 {cx:.1f} {grid_top - 6})"))
    for r, (model, cells) in enumerate(table.rows):
        y = grid_top + r * cell_h
        parts.append(_text(left - 8, y + cell_h / 2 + 4, model, anchor="end"))
        for c, cell in enumerate(cells):
            x = left + c * cell_w
            fill, ink = _shade(cell.value, scale)
            shown = "–" if cell.value is None else f"{cell.value:.1f}"
            parts.append(f'<rect class="cell" x="{x:.1f}" y="{y}" width="{cell_w - 1}" height="{cell_h - 1}" '
                         f'fill="{fill}"><title>{escape(model)}, {escape(table.columns[c])}: {shown}</title></rect>')
            parts.append(_text(x + cell_w / 2, y + cell_h / 2 + 4, shown, anchor="middle", fill=ink))
    parts.append("</svg>")
    return "\n".join(parts)


def _shade(value: float | None, scale: float) -> tuple[str, str]:
    """White to dark blue by value/scale; white text on dark cells."""
    if value is None:
        return "#f2f2f2", "#666"
    t = max(0.0, min(1.0, value / scale))
    low, high = (247, 251, 255), (8, 48, 107)
    rgb = tuple(round(a + (b - a) * t) for a, b in zip(low, high, strict=True))
    return "#{:02x}{:02x}{:02x}".format(*rgb), "#fff" if t > 0.55 else "#222"


def _svg_open(width: float, height: float, title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{escape(title)}">'
            f'<rect width="100%" height="100%" fill="#fff"/>')


def _text(x: float, y: float, text: str, *, anchor: str = "start", size: int = 11, weight: str = "normal",
          fill: str = "#222", transform: str | None = None) -> str:
    extra = f' transform="{transform}"' if transform else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" {FONT} font-size="{size}" font-weight="{weight}" fill="{fill}" '
            f'text-anchor="{anchor}"{extra}>{escape(text)}</text>')
