"""Leaderboards: the metrics tables of several models turned into side-by-side tables, one board per benchmark.

A board has a summary table (the benchmark's headline numbers, plus the unmatched and failed row counts, which are
never hidden), an ability table (the per-ability metric the chart shows: MMBench L2 categories, MME subtasks, SEED
dimensions) and, for MMBench, a detail table of the L3 categories. Models are sorted by their first headline number.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from mmbatch.benchmarks.declaration import Headline, ReportView
from mmbatch.benchmarks.registry import find_benchmark

COUNT_METRICS = ("unmatched", "failed")
"""Row counts shown beside the headline numbers of every board."""
ROWS_COLUMN = "rows"
"""The summary's last column: rows each model was scored on (the ``n`` of its ``failed`` count), so a partial run
stands out beside full ones."""


@dataclass(frozen=True)
class Cell:
    """One number of a table, with its bootstrap interval when ``score --bootstrap`` computed one."""

    value: float | None
    """The metric's value; None when the model has no such metric."""
    ci_low: float | None = None
    """Lower end of the 95 % interval."""
    ci_high: float | None = None
    """Upper end of the 95 % interval."""
    n: int | None = None
    """Units the value is computed over (shown on hover)."""
    note: str | None = None
    """Said after the number (``of 2374, partial`` for a run scored on fewer rows than the board's largest)."""

    def text(self, *, count: bool = False) -> str:
        """``67.69``, ``67.69 [65.10, 70.27]`` with an interval, an integer for counts, ``–`` when missing."""
        if self.value is None:
            return "–"
        if count:
            return f"{self.value:.0f}" + (f" ({self.note})" if self.note else "")
        if self.ci_low is None or self.ci_high is None:
            return f"{self.value:.2f}"
        return f"{self.value:.2f} [{self.ci_low:.2f}, {self.ci_high:.2f}]"


@dataclass(frozen=True)
class ScoreTable:
    """Models (rows) by columns of one metric family."""

    title: str
    """What the table shows, e.g. ``Per ability (l2-category, circular_acc)``."""
    columns: tuple[str, ...]
    """Column titles (ability or headline names)."""
    rows: tuple[tuple[str, tuple[Cell, ...]], ...]
    """(model, one cell per column), in board order."""
    unit: str
    """``%`` for accuracies, ``points`` for MME scores."""
    counts: int = 0
    """How many trailing columns are row counts (unmatched, failed) rather than metric values."""

    def is_count(self, column: int) -> bool:
        """Whether column number ``column`` holds row counts."""
        return column >= len(self.columns) - self.counts


@dataclass(frozen=True)
class Board:
    """The leaderboard of one benchmark (and split)."""

    benchmark: str
    """Benchmark name."""
    split: str | None
    """Split, when the metrics have one (MMBench dev/test)."""
    summary: ScoreTable
    """Headline numbers and row counts."""
    abilities: ScoreTable | None
    """Per-ability numbers (what the chart shows), when the metrics have them."""
    detail: ScoreTable | None
    """A finer per-ability table, when the view has one."""
    headline: tuple[tuple[str, str, str], ...] = ()
    """(level, group, metric) of each headline column of the summary, in order."""
    notes: tuple[str, ...] = ()
    """What a reader must know before comparing the rows (runs scored on fewer rows than others)."""

    @property
    def name(self) -> str:
        """``benchmark`` or ``benchmark (split)``."""
        return f"{self.benchmark} ({self.split})" if self.split else self.benchmark

    @property
    def slug(self) -> str:
        """A file-name-safe name: ``mmbench_dev``."""
        raw = f"{self.benchmark}_{self.split}" if self.split else self.benchmark
        return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in raw)


def build_boards(metrics: pl.DataFrame) -> list[Board]:
    """One board per (benchmark, split), in order of first appearance."""
    keys = metrics.select("benchmark", "split").unique(maintain_order=True).iter_rows()
    boards = []
    for benchmark, split in keys:
        part = metrics.filter((pl.col("benchmark") == benchmark) & pl.col("split").eq_missing(split))
        boards.append(_board(str(benchmark), split, part))
    return boards


def _board(benchmark: str, split: str | None, part: pl.DataFrame) -> Board:
    declared = find_benchmark(benchmark)
    view = (declared.view if declared is not None else None) or ReportView(headline=tuple(
        ("overall", None, str(m), f"{{group}} {m}") for m in part.filter(pl.col("level") == "overall")["metric"]
        .unique(maintain_order=True) if m not in COUNT_METRICS))
    columns = _headline_columns(part, view.headline)
    models = _ranked_models(part, columns)
    cells = [[_cell(part, model, level, group, metric) for level, group, metric, _ in columns] for model in models]
    coverage = _coverage(part, models)
    counts = [[Cell(_count(part, model, metric)) for metric in COUNT_METRICS] + [coverage.cells[model]]
              for model in models]
    first_metric = columns[0][2] if columns else ""
    summary = ScoreTable("Summary", (*(title for *_, title in columns), *COUNT_METRICS, ROWS_COLUMN),
                         tuple((m, tuple(c + k)) for m, c, k in zip(models, cells, counts, strict=True)),
                         unit_of(first_metric), counts=len(COUNT_METRICS) + 1)
    return Board(benchmark, split, summary, _per_group(part, models, view.ability),
                 _per_group(part, models, view.detail), tuple((lv, g, m) for lv, g, m, _ in columns),
                 coverage.notes + _not_judged_notes(part, models))


def _not_judged_notes(part: pl.DataFrame, models: list[str]) -> tuple[str, ...]:
    """Why a model's row accuracies are missing: ``score`` leaves them out where the judge skipped rows."""
    notes = []
    for model in models:
        rows = _count(part, model, "not_judged")
        if rows:
            notes.append(f"{model}: {rows:.0f} rows were not sent to the judge because their circular group had "
                         "already failed (extract --skip-failed-groups, the default), so they have no verdict; "
                         "row accuracies (vanilla, circ-0) are not shown where they would count them as wrong. "
                         "Rerun extract with --no-skip-failed-groups to have them judged.")
    return tuple(notes)


@dataclass(frozen=True)
class _Coverage:
    cells: dict[str, Cell]
    """Each model's rows cell."""
    notes: tuple[str, ...]
    """One line per partial run."""


def _coverage(part: pl.DataFrame, models: list[str]) -> _Coverage:
    """Rows each model was scored on; a run with fewer rows than the board's largest is marked partial.

    The count is the ``n`` of the overall ``failed`` metric, which ``score`` writes over every row it read. The
    largest run on the board is the reference: mmbatch does not assume a benchmark's size (files are subsets,
    splits, or other versions), but a run that covers fewer rows than another of the same board is not comparable
    with it, and the reader is told so.
    """
    rows = {model: _rows_scored(part, model) for model in models}
    known = [n for n in rows.values() if n is not None]
    largest = max(known, default=None)
    cells, notes = {}, []
    for model in models:
        n = rows[model]
        if n is None or largest is None or n >= largest:
            cells[model] = Cell(None if n is None else float(n), n=n)
            continue
        cells[model] = Cell(float(n), n=n, note=f"of {largest}, partial")
        notes.append(f"{model} was scored on {n:,} rows, {largest - n:,} fewer than the largest run here "
                         f"({largest:,}): a partial run, its numbers are not comparable with the others'.")
    return _Coverage(cells, tuple(notes))


def _rows_scored(part: pl.DataFrame, model: str) -> int | None:
    hit = part.filter((pl.col("model") == model) & (pl.col("metric") == "failed") & (pl.col("level") == "overall")
                      & pl.col("n").is_not_null())
    return int(hit["n"].max()) if hit.height else None  # type: ignore[arg-type]


def _headline_columns(part: pl.DataFrame, headline: tuple[Headline, ...]) -> list[tuple[str, str, str, str]]:
    columns = []
    for level, group, metric, title in headline:
        rows = part.filter((pl.col("level") == level) & (pl.col("metric") == metric) & pl.col("value").is_not_null())
        groups = [group] if group is not None else rows["group"].unique(maintain_order=True).to_list()
        for name in groups:
            if rows.filter(pl.col("group") == name).height:
                columns.append((level, str(name), metric, title.replace("{group}", str(name))))
    return columns


def _ranked_models(part: pl.DataFrame, columns: list[tuple[str, str, str, str]]) -> list[str]:
    """Models by their first headline value, best first; ties and missing values by name."""
    models = sorted(str(m) for m in part["model"].unique())
    if not columns:
        return models
    level, group, metric, _ = columns[0]

    def key(model: str) -> tuple[float, str]:
        value = _cell(part, model, level, group, metric).value
        return (-value if value is not None else float("inf"), model)

    return sorted(models, key=key)


def _per_group(part: pl.DataFrame, models: list[str], spec: tuple[str, str] | None) -> ScoreTable | None:
    if spec is None:
        return None
    level, metric = spec
    rows = part.filter((pl.col("level") == level) & (pl.col("metric") == metric))
    if rows.height == 0:
        return None
    groups = [str(g) for g in rows["group"].unique(maintain_order=True)]
    table_rows = tuple((model, tuple(_cell(rows, model, level, g, metric) for g in groups)) for model in models)
    return ScoreTable(f"Per {level} ({metric})", tuple(groups), table_rows, unit_of(metric))


def _cell(part: pl.DataFrame, model: str, level: str, group: str, metric: str) -> Cell:
    hit = part.filter((pl.col("model") == model) & (pl.col("level") == level) & (pl.col("group") == group)
                      & (pl.col("metric") == metric))
    if hit.height == 0:
        return Cell(None)
    row = hit.row(0, named=True)
    return Cell(row["value"], row["ci_low"], row["ci_high"], row["n"])


def _count(part: pl.DataFrame, model: str, metric: str) -> float | None:
    hit = part.filter((pl.col("model") == model) & (pl.col("metric") == metric) & (pl.col("level") == "overall"))
    return float(hit["value"].sum()) if hit.height else None


def unit_of(metric: str) -> str:
    """``points`` for MME scores, ``%`` for every accuracy."""
    return "points" if metric == "score" else "%"
