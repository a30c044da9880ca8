"""The Markdown report: a section per board with its tables, and its chart as an SVG file beside the report.

Every text that comes from a file or an option (benchmark, split, model and baseline names, ``--label`` values,
file names) goes through :func:`markdown_text`: a Markdown renderer passes raw HTML through, so an unescaped name
could load an image or run a script in the reader's viewer. Chart links are percent-encoded.
"""

from __future__ import annotations

import html
import re
import urllib.parse

from mmbatch.report.baseline import LEGEND, BaselineDeltas
from mmbatch.report.leaderboard import Board, ScoreTable
from mmbatch.report.provenance import FIELDS, Provenance


def markdown_table(table: ScoreTable) -> str:
    """A pipe table: one row per model, numbers right-aligned."""
    header = "| model | " + " | ".join(_cell_text(c) for c in table.columns) + " |"
    rule = "|---|" + "---:|" * len(table.columns)
    lines = [header, rule]
    for model, cells in table.rows:
        values = [cell.text(count=table.is_count(i)) for i, cell in enumerate(cells)]
        lines.append(f"| {_cell_text(model)} | " + " | ".join(values) + " |")
    return "\n".join(lines)


_MARKDOWN_SYNTAX = re.compile(r"([\\`*_\[\]#|])")
"""Characters that start Markdown syntax inside a line: emphasis, code spans, links and images (``[``), headings,
table cells; each is backslash-escaped. ``(`` and ``!`` mean nothing without ``[``."""


def markdown_text(text: str) -> str:
    """``text`` as plain text in Markdown: on one line (a line break could start a block), Markdown syntax
    backslash-escaped, and ``<``, ``>``, ``&`` as HTML entities, so it is never markup, HTML or a link."""
    flat = " ".join(str(text).split())
    return html.escape(_MARKDOWN_SYNTAX.sub(r"\\\1", flat), quote=False)


def _cell_text(text: str) -> str:
    return markdown_text(text)


def _link(target: str) -> str:
    """A relative link to a file beside the report, percent-encoded (a ``)`` or a space cannot end it)."""
    return urllib.parse.quote(target)


def provenance_table(origins: list[Provenance]) -> str:
    """One column per metrics file: what made its numbers."""
    lines = ["| | " + " | ".join(_cell_text(o.label) for o in origins) + " |", "|---|" + "---|" * len(origins)]
    lines += [f"| {name} | " + " | ".join(_cell_text(o.values.get(name, "–")) for o in origins) + " |"
              for name in FIELDS]
    return "\n".join(lines)


def comparison_table(board: Board, deltas: BaselineDeltas) -> str:
    """Each model's delta on every headline metric against the baseline."""
    titles = board.summary.columns[:len(board.headline)]
    lines = [f"| vs {_cell_text(deltas.baseline)} | " + " | ".join(f"Δ {_cell_text(t)}" for t in titles) + " |",
             "|---|" + "---:|" * len(titles)]
    lines += [f"| {_cell_text(model)} | " + " | ".join(d.text() if d else "–" for d in row) + " |"
              for model, row in deltas.deltas.items()]
    return "\n".join(lines)


def render_markdown(boards: list[Board], chart_files: dict[str, str], sources: list[str],
                    origins: list[Provenance], deltas: dict[str, BaselineDeltas]) -> str:
    """The whole report; ``chart_files`` maps a board's slug (and ``slug_detail``) to its SVG file name."""
    lines = ["# mmbatch report", "", "Metrics from: " + ", ".join(markdown_text(s) for s in sources), ""]
    lines += ["Values are percentages (accuracy) except MME scores (points); `[low, high]` is the 95 % bootstrap "
              "interval when `mmbatch score --bootstrap` computed one. `unmatched` and `failed` count rows; `rows` "
              "is how many rows each run was scored on.", ""]
    lines += ["## Provenance", "", provenance_table(origins), ""]
    for board in boards:
        name = markdown_text(board.name)
        lines += [f"## {name}", "", markdown_table(board.summary), ""]
        lines += [line for note in board.notes for line in (f"**Note:** {markdown_text(note)}", "")]
        mine = deltas.get(board.slug)
        if mine is not None:
            lines += [f"### Paired comparison with {markdown_text(mine.baseline)}", "", comparison_table(board, mine),
                      "", LEGEND, ""]
        if board.slug in chart_files:
            lines += [f"![{name} chart]({_link(chart_files[board.slug])})", ""]
        for table, chart in ((board.abilities, None), (board.detail, chart_files.get(f"{board.slug}_detail"))):
            if table is not None:
                lines += [f"### {markdown_text(table.title)}", "", markdown_table(table), ""]
                if chart is not None:
                    lines += [f"![{name} {markdown_text(table.title)}]({_link(chart)})", ""]
    return "\n".join(lines)
