"""The Markdown report: a section per board with its tables, and its chart as an SVG file beside the report."""

from __future__ import annotations

from mmbatch.report.leaderboard import Board, ScoreTable


def markdown_table(table: ScoreTable) -> str:
    """A pipe table: one row per model, numbers right-aligned."""
    header = "| model | " + " | ".join(_cell_text(c) for c in table.columns) + " |"
    rule = "|---|" + "---:|" * len(table.columns)
    lines = [header, rule]
    for model, cells in table.rows:
        values = [cell.text(count=table.is_count(i)) for i, cell in enumerate(cells)]
        lines.append(f"| {_cell_text(model)} | " + " | ".join(values) + " |")
    return "\n".join(lines)


def _cell_text(text: str) -> str:
    """Pipes would split a cell."""
    return text.replace("|", "\\|")


def render_markdown(boards: list[Board], chart_files: dict[str, str], sources: list[str]) -> str:
    """The whole report; ``chart_files`` maps a board's slug to its SVG file name (relative to the report)."""
    lines = ["# mmbatch report", "", "Metrics from: " + ", ".join(f"`{s}`" for s in sources), ""]
    lines += ["Values are percentages (accuracy) except MME scores (points); `[low, high]` is the 95 % bootstrap "
              "interval when `mmbatch score --bootstrap` computed one. `unmatched` and `failed` count rows.", ""]
    for board in boards:
        lines += [f"## {board.name}", "", markdown_table(board.summary), ""]
        if board.slug in chart_files:
            lines += [f"![{board.name} chart]({chart_files[board.slug]})", ""]
        for table in (board.abilities, board.detail):
            if table is not None:
                lines += [f"### {table.title}", "", markdown_table(table), ""]
    return "\n".join(lines)
