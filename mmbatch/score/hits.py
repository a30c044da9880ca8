"""Per-row outcome of scoring: ``hit``, and whether the row was ``unmatched`` or ``failed``.

A row is right when its extracted answer equals its ground truth after stripping whitespace (SEED-Bench-2's
result file has 19 answers with a stray space); MME's Yes/No compare ignoring case. Unmatched rows (nothing was
extracted) and failed rows (an ``error`` from ``infer``, or ``extract_method == "error"``) are wrong, and counted.
"""

from __future__ import annotations

from collections.abc import Collection

import polars as pl

HIT = "hit"
UNMATCHED = "unmatched"
FAILED = "failed"


def failed_expr(columns: Collection[str]) -> pl.Expr:
    """True for rows that failed in ``infer`` (an ``error``) or in ``extract`` (method ``error``)."""
    failed = pl.lit(False)
    if "error" in columns:
        failed = failed | pl.col("error").is_not_null()
    if "extract_method" in columns:
        failed = failed | (pl.col("extract_method") == "error").fill_null(False)
    return failed


def add_hits(frame: pl.DataFrame, case_insensitive: Collection[str]) -> pl.DataFrame:
    """``frame`` with ``hit``, ``unmatched`` and ``failed`` (int64 0/1) added.

    Args:
        frame: extracted rows with ``benchmark``, ``extracted`` and ``answer``.
        case_insensitive: benchmarks whose answers compare ignoring case.
    """
    extracted = pl.col("extracted").cast(pl.String).str.strip_chars()
    extracted = pl.when(extracted == "").then(None).otherwise(extracted)
    answer = pl.col("answer").cast(pl.String).str.strip_chars()
    ignore_case = pl.col("benchmark").is_in(list(case_insensitive))
    equal = pl.when(ignore_case).then(extracted.str.to_lowercase() == answer.str.to_lowercase()).otherwise(
        extracted == answer)
    failed = failed_expr(frame.columns)
    return frame.with_columns(
        (equal.fill_null(False) & ~failed).cast(pl.Int64).alias(HIT),
        (extracted.is_null() & ~failed).cast(pl.Int64).alias(UNMATCHED),
        failed.cast(pl.Int64).alias(FAILED),
    )
