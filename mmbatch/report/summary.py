"""The report's first table: one row per model, one column per benchmark headline, each with its interval.

Each board (benchmark and split) gives its first headline number, the one its board ranks by (MMBench's circular
accuracy, MME's perception score, SEED-Bench's overall accuracy, POPE's F1). Models are ranked by their mean
position across the columns they have; the same table is what ``report --output x.csv`` (or ``.tsv``) writes, as
numbers with their bounds in columns of their own.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from mmbatch.report.leaderboard import Board, Cell, ScoreTable
from mmbatch.tableio import atomic_path

SUMMARY_NOTE = ("One row per model, one column per benchmark: the number its board ranks by, with its 95 % interval "
                "when score --bootstrap computed one; models ordered by their mean rank over the columns they have.")
SUMMARY_FORMATS = {".csv": ",", ".tsv": "\t"}
"""Report outputs that hold the summary table only, with their field separators."""


def summary_table(boards: list[Board]) -> ScoreTable:
    """Models by boards: each board's first headline value (with its interval) for each model, "–" where absent."""
    columns = [(board, 0) for board in boards if board.headline]
    titles = tuple(f"{board.name}: {board.summary.columns[position]}" for board, position in columns)
    models = _ranked_models(columns)
    rows = tuple((model, tuple(_cell(board, position, model) for board, position in columns)) for model in models)
    units = {board.summary.unit for board, _ in columns}
    return ScoreTable("Summary", titles, rows, units.pop() if len(units) == 1 else "mixed")


def summary_frame(table: ScoreTable) -> pl.DataFrame:
    """The summary as a data table: ``model``, then each column's value, ``ci_low`` and ``ci_high`` (null: none)."""
    data: dict[str, list[object]] = {"model": [model for model, _ in table.rows]}
    for position, title in enumerate(table.columns):
        cells = [cells[position] for _, cells in table.rows]
        data[title] = [cell.value for cell in cells]
        data[f"{title} ci_low"] = [cell.ci_low for cell in cells]
        data[f"{title} ci_high"] = [cell.ci_high for cell in cells]
    schema = {name: (pl.String if name == "model" else pl.Float64) for name in data}
    return pl.DataFrame(data, schema=schema)


def write_summary_file(table: ScoreTable, output: Path) -> None:
    """Write the summary as CSV or TSV (by ``output``'s extension), atomically."""
    separator = SUMMARY_FORMATS[output.suffix.lower()]
    with atomic_path(output) as tmp:
        summary_frame(table).write_csv(tmp, separator=separator, float_precision=4)


def _cell(board: Board, position: int, model: str) -> Cell:
    for name, cells in board.summary.rows:
        if name == model:
            return cells[position]
    return Cell(None)


def _ranked_models(columns: list[tuple[Board, int]]) -> list[str]:
    """Models by their mean rank over the columns they have (1 = best in a column), then by name."""
    ranks: dict[str, list[int]] = {}
    for board, position in columns:
        valued = [(model, cells[position].value) for model, cells in board.summary.rows]
        ordered = sorted(((model, value) for model, value in valued if value is not None),
                         key=lambda pair: (-pair[1], pair[0]))
        for rank, (model, _) in enumerate(ordered, start=1):
            ranks.setdefault(model, []).append(rank)
        for model, value in valued:
            if value is None:
                ranks.setdefault(model, [])
    return sorted(ranks, key=lambda model: (sum(ranks[model]) / len(ranks[model]) if ranks[model] else float("inf"),
                                            model))
