"""The HTML report: one self-contained page, each board's chart embedded as inline SVG.

Tables sit in boxes that scroll sideways with the model column kept in view; a table with many columns and few
models (MME's 14 subtasks, SEED-2's 27 dimensions) is transposed so it reads down the page. Every number shows the
units it was computed over on hover.
"""

from __future__ import annotations

from html import escape

from mmbatch.report.baseline import LEGEND, BaselineDeltas
from mmbatch.report.leaderboard import Board, Cell, ScoreTable
from mmbatch.report.provenance import FIELDS, Provenance

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1400px; padding: 0 1.5em; color: #222; }
.scroll { overflow-x: auto; max-width: 100%; margin: 0.5em 0 1.5em; border: 1px solid #e3e6ea; border-radius: 4px; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #d5d9de; padding: 0.3em 0.6em; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f4f6f8; }
.scroll tr > :first-child { position: sticky; left: 0; z-index: 1; background: #f4f6f8; }
section.board { margin-bottom: 3em; }
figure { margin: 0.5em 0 1.5em; }
figure svg { max-width: 100%; height: auto; }
td.delta { font-weight: 600; }
p.legend, p.note { color: #555; font-size: 0.85em; }
"""

TRANSPOSE_COLUMNS = 10
"""A table with more columns than this (and no more models than :data:`TRANSPOSE_MODELS`) is transposed."""
TRANSPOSE_MODELS = 8


def _cell_html(cell: Cell, count: bool) -> str:
    hover = f' title="n = {cell.n}"' if cell.n is not None else ""
    return f'<td class="num"{hover}>{escape(cell.text(count=count))}</td>'


def html_table(table: ScoreTable, css_class: str, extra: tuple[str, list[str]] | None = None) -> str:
    """A table in a sideways-scrolling box: a row per model, or a row per column when wide (transposed).

    ``extra`` is an added (title, one text per model) column, e.g. the deltas against a baseline.
    """
    if len(table.columns) > TRANSPOSE_COLUMNS and len(table.rows) <= TRANSPOSE_MODELS and extra is None:
        head = "".join(f"<th>{escape(c)}</th>" for c in ("", *(model for model, _ in table.rows)))
        body = [f'<tr><th scope="row">{escape(column)}</th>'
                + "".join(_cell_html(cells[i], table.is_count(i)) for _, cells in table.rows) + "</tr>"
                for i, column in enumerate(table.columns)]
        inner = f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
        return f'<div class="scroll"><table class="{css_class} transposed">{inner}</table></div>'
    titles = ("model", *table.columns, *((extra[0],) if extra else ()))
    head = "".join(f"<th>{escape(c)}</th>" for c in titles)
    body = []
    for m, (model, cells) in enumerate(table.rows):
        values = "".join(_cell_html(cell, table.is_count(i)) for i, cell in enumerate(cells))
        if extra:
            values += f'<td class="num delta">{escape(extra[1][m])}</td>'
        body.append(f'<tr><th scope="row">{escape(model)}</th>{values}</tr>')
    inner = f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
    return f'<div class="scroll"><table class="{css_class}">{inner}</table></div>'


def provenance_table(origins: list[Provenance]) -> str:
    """One column per metrics file: what made its numbers."""
    head = "".join(f"<th>{escape(o.label)}</th>" for o in origins)
    body = "".join(f'<tr><th scope="row">{escape(name)}</th>'
                   + "".join(f"<td>{escape(o.values.get(name, '–'))}</td>" for o in origins) + "</tr>"
                   for name in FIELDS)
    return (f'<div class="scroll"><table class="provenance"><thead><tr><th>metrics file</th>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def delta_column(board: Board, deltas: BaselineDeltas | None) -> tuple[str, list[str]] | None:
    """The summary's added column: each model's delta on the first headline metric, ``baseline`` for the baseline."""
    if deltas is None or not board.summary.columns:
        return None
    texts = []
    for model, _ in board.summary.rows:
        if model == deltas.baseline:
            texts.append("baseline")
        elif model in deltas.deltas and deltas.deltas[model] and deltas.deltas[model][0] is not None:
            first = deltas.deltas[model][0]
            texts.append(first.text(interval=False) if first else "–")
        else:
            texts.append("–")
    return f"Δ {board.summary.columns[0]} vs {deltas.baseline}", texts


def comparison_table(board: Board, deltas: BaselineDeltas) -> str:
    """Every headline metric's delta (with its paired interval and marker) for each model against the baseline."""
    titles = board.summary.columns[:len(board.headline)]
    head = "".join(f"<th>Δ {escape(t)}</th>" for t in titles)
    body = "".join(f'<tr><th scope="row">{escape(model)}</th>'
                   + "".join(f'<td class="num">{escape(d.text()) if d else "–"}</td>' for d in row) + "</tr>"
                   for model, row in deltas.deltas.items())
    return (f'<div class="scroll"><table class="comparison"><thead><tr><th>vs {escape(deltas.baseline)}</th>{head}'
            f"</tr></thead><tbody>{body}</tbody></table></div><p class=\"legend\">{escape(LEGEND)}</p>")


def render_html(boards: list[Board], charts: dict[str, str], sources: list[str], origins: list[Provenance],
                deltas: dict[str, BaselineDeltas]) -> str:
    """The whole page; ``charts`` maps a board's slug (and ``slug_detail``) to its SVG text."""
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">', "<title>mmbatch report</title>",
             f"<style>{STYLE}</style></head><body>", "<h1>mmbatch report</h1>",
             "<p>Metrics from: " + ", ".join(f"<code>{escape(s)}</code>" for s in sources) + "</p>",
             "<p class=\"note\">Values are percentages (accuracy) except MME scores (points); [low, high] is the 95 % "
             "bootstrap interval when <code>mmbatch score --bootstrap</code> computed one; hover a number for its "
             "n. <em>unmatched</em> and <em>failed</em> count rows; <em>rows</em> is how many rows each run was scored "
             "on.</p>",
             "<h2>Provenance</h2>", provenance_table(origins)]
    for board in boards:
        mine = deltas.get(board.slug)
        parts.append(f'<section class="board" id="{escape(board.slug)}" data-benchmark="{escape(board.benchmark)}">')
        parts.append(f"<h2>{escape(board.name)}</h2>")
        parts.append(html_table(board.summary, "summary", delta_column(board, mine)))
        parts += [f'<p class="note partial">{escape(note)}</p>' for note in board.notes]
        if mine is not None:
            parts.append(f"<h3>Paired comparison with {escape(mine.baseline)}</h3>")
            parts.append(comparison_table(board, mine))
        if board.slug in charts:
            parts.append(f"<figure>{charts[board.slug]}</figure>")
        for table, css_class, chart in ((board.abilities, "abilities", None),
                                        (board.detail, "detail", charts.get(f"{board.slug}_detail"))):
            if table is not None:
                parts.append(f"<h3>{escape(table.title)}</h3>")
                parts.append(html_table(table, css_class))
                if chart is not None:
                    parts.append(f"<figure>{chart}</figure>")
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
