"""Print the metrics table as rich tables: one per (benchmark, model, split), one row per (level, group)."""

from __future__ import annotations

import math

import polars as pl
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from mmbatch.score.metrics_table import PARTITION

COUNT_METRICS = ("unmatched", "failed", "bad_images")
"""Metrics printed as counts under the table rather than as columns."""


def print_metrics(metrics: pl.DataFrame, console: Console) -> None:
    """Print every partition of ``metrics``: values with their 95 % interval when there is one."""
    for key, part in metrics.partition_by(list(PARTITION), as_dict=True, maintain_order=True).items():
        console.print(partition_table(part, key))
        counts = part.filter(pl.col("metric").is_in(COUNT_METRICS) & (pl.col("level") == "overall"))
        if counts.height:
            summary = ", ".join(f"{metric} {int(value)} of {n} rows" for metric, value, n in
                                counts.select("metric", "value", "n").iter_rows())
            console.print(f"  {summary}", highlight=False)


def partition_table(part: pl.DataFrame, key: tuple[object, ...]) -> Table:
    """The rich table of one partition: columns level, group, n, then one per metric in order of appearance."""
    benchmark, model, split = key
    title = f"{benchmark}" + (f" · {model}" if model else "") + (f" · split {split}" if split else "")
    values = part.filter(~pl.col("metric").is_in(COUNT_METRICS) | (pl.col("level") != "overall"))
    metric_names = list(dict.fromkeys(values["metric"].to_list()))
    # A title never wraps: a long model name under a narrow table would otherwise break over lines in logs.
    table = Table(title=title, title_justify="left", min_width=cell_len(title))
    table.add_column("level")
    table.add_column("group")
    table.add_column("n", justify="right")
    for name in metric_names:
        table.add_column(name, justify="right")
    rows = values.group_by("level", "group", maintain_order=True).agg(
        pl.col("metric"), pl.col("value"), pl.col("n").first(), pl.col("ci_low"), pl.col("ci_high"))
    for level, group, metrics, vals, n, lows, highs in rows.iter_rows():
        cell = {m: format_value(m, v, lo, hi) for m, v, lo, hi in zip(metrics, vals, lows, highs, strict=True)}
        table.add_row(level, group, str(n), *(cell.get(name, "") for name in metric_names))
    return table


def format_value(metric: str, value: float | None, low: float | None, high: float | None) -> str:
    """``67.69``, or with an interval ``67.69`` over ``[65.0, 70.5]`` (two lines, so tables stay narrow).

    Counts are integers; MME points get 4 decimals as the official tool's totals are quoted.
    """
    if value is None or math.isnan(value):
        return "-"
    if metric in COUNT_METRICS:
        return str(int(value))
    digits = 4 if metric == "score" else 2
    text = f"{value:.{digits}f}"
    if low is not None and high is not None:
        text += f"\n[{low:.{digits - 1}f}, {high:.{digits - 1}f}]"
    return text
