"""Print a comparison as rich tables: one per (benchmark, split), one row per metric."""

from __future__ import annotations

import polars as pl
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from mmbatch.compare.paired import SIGN_TEST
from mmbatch.compare.stage import CompareResult
from mmbatch.score.tables import COUNT_METRICS

SIGNIFICANCE = ((0.001, "***"), (0.01, "**"), (0.05, "*"))
"""p-value thresholds (McNemar's or the sign test's) and their markers."""


def significance_marker(p_value: float | None) -> str:
    """``***``, ``**``, ``*`` or an empty string."""
    if p_value is None:
        return ""
    return next((marker for limit, marker in SIGNIFICANCE if p_value < limit), "")


def print_comparison(result: CompareResult, console: Console) -> None:
    """The coverage line and the table of each partition."""
    for row in result.coverage.iter_rows(named=True):
        title = f"{row['benchmark']}" + (f" · split {row['split']}" if row["split"] else "")
        console.print(f"{title}: {row['rows_both']} rows in both files; only in A ({row['model_a']}): "
                      f"{row['rows_only_a']}; only in B ({row['model_b']}): {row['rows_only_b']}",
                      highlight=False, markup=False, soft_wrap=True)
        part = result.comparisons.filter((pl.col("benchmark") == row["benchmark"])
                                         & pl.col("split").eq_missing(row["split"]))
        if part.height:
            console.print(partition_table(part, title, row["model_a"], row["model_b"]))


def partition_table(part: pl.DataFrame, title: str, model_a: str, model_b: str) -> Table:
    """level, group, metric, n, A, B, B - A [95 % interval], A better / B better, paired p (``sign``: the sign test
    of graded scores; else McNemar's)."""
    heading = f"{title}: A = {model_a}, B = {model_b}"
    table = Table(title=heading, title_justify="left", min_width=cell_len(heading))
    for name, justify in (("level", "left"), ("group", "left"), ("metric", "left"), ("n", "right"), ("A", "right"),
                          ("B", "right"), ("B - A [95% CI]", "right"), ("A only / B only", "right"),
                          ("paired p", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for row in part.iter_rows(named=True):
        digits = 4 if row["metric"] == "score" else 0 if row["metric"] in COUNT_METRICS else 2
        interval = (f" [{row['ci_low']:+.{digits}f}, {row['ci_high']:+.{digits}f}]"
                    if row["ci_low"] is not None and row["ci_high"] is not None else "")
        discordant = f"{row['a_only']} / {row['b_only']}" if row["a_only"] is not None else ""
        p_value = "" if row["p_value"] is None else f"{row['p_value']:.3g} {significance_marker(row['p_value'])}"
        if row.get("test") == SIGN_TEST:
            p_value = f"{p_value.strip()} sign"
        table.add_row(row["level"], row["group"], row["metric"], str(row["n"]), f"{row['value_a']:.{digits}f}",
                      f"{row['value_b']:.{digits}f}", f"{row['diff']:+.{digits}f}{interval}", discordant,
                      p_value.strip())
    return table
