"""The HTML report: one self-contained page, each board's chart embedded as inline SVG."""

from __future__ import annotations

from html import escape

from mmbatch.report.leaderboard import Board, ScoreTable

STYLE = """
body { font-family: Helvetica, Arial, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f4f6f8; }
section.board { margin-bottom: 3em; }
figure { margin: 0; overflow-x: auto; }
"""


def html_table(table: ScoreTable, css_class: str) -> str:
    """A ``<table>`` with a ``<thead>`` of column names and a ``<tbody>`` row per model."""
    head = "".join(f"<th>{escape(c)}</th>" for c in ("model", *table.columns))
    body = []
    for model, cells in table.rows:
        values = "".join(f'<td class="num">{escape(cell.text(count=table.is_count(i)))}</td>'
                         for i, cell in enumerate(cells))
        body.append(f'<tr><th scope="row">{escape(model)}</th>{values}</tr>')
    return (f'<table class="{css_class}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def render_html(boards: list[Board], charts: dict[str, str], sources: list[str]) -> str:
    """The whole page; ``charts`` maps a board's slug to its SVG text."""
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', "<title>mmbatch report</title>",
             f"<style>{STYLE}</style></head><body>", "<h1>mmbatch report</h1>",
             "<p>Metrics from: " + ", ".join(f"<code>{escape(s)}</code>" for s in sources) + "</p>",
             "<p>Values are percentages (accuracy) except MME scores (points); [low, high] is the 95 % bootstrap "
             "interval when <code>mmbatch score --bootstrap</code> computed one. <em>unmatched</em> and "
             "<em>failed</em> count rows.</p>"]
    for board in boards:
        parts.append(f'<section class="board" id="{escape(board.slug)}" data-benchmark="{escape(board.benchmark)}">')
        parts.append(f"<h2>{escape(board.name)}</h2>")
        parts.append(html_table(board.summary, "summary"))
        if board.slug in charts:
            parts.append(f"<figure>{charts[board.slug]}</figure>")
        for table, css_class in ((board.abilities, "abilities"), (board.detail, "detail")):
            if table is not None:
                parts.append(f"<h3>{escape(table.title)}</h3>")
                parts.append(html_table(table, css_class))
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
