"""Scoring of VLMEvalKit's open-answer VQA benchmarks as its ``ImageVQADataset.evaluate`` tabulates them.

The per-row score (:mod:`mmbatch.answers`: VQA accuracy, ANLS, relaxed accuracy, exact match) is averaged, times
100: ``Overall``; then, as in VLMEvalKit's ``_acc.csv``, per ``split`` when the file has splits (ChartQA's
``test_human`` and ``test_augmented``), else per ``category`` when it has categories (OCRVQA's genres, in name order).
A row is a unit; the bootstrap resamples rows within their split or category. ``unmatched`` counts rows with no
answer (they score 0), ``failed`` rows that failed upstream (also 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from mmbatch.scoring.plan import (
    STRATUM,
    UNIT_ID,
    CellLevel,
    ScorePlan,
    accuracy,
    collapse_units,
    count,
    groups_in_order,
)

STATS = ("questions", "points", "unmatched", "failed")
LEVELS = ("split", "category")
"""The per-group levels VLMEvalKit's table may show, in its order of preference (only the first present is used)."""


@dataclass(frozen=True)
class VqaTableScorer:
    """Mean per-row score overall and per split (or category)."""

    metric: str = "acc"
    """The metric's name in the metrics table (``acc``; ``anls`` for DocVQA and InfoVQA)."""

    def plan(self, rows: pl.DataFrame) -> ScorePlan:
        """One unit per row; cells overall and each group of the first level the rows have."""
        level = next((name for name in LEVELS if name in rows.columns and rows[name].drop_nulls().len()), None)
        group = pl.col(level).cast(pl.String) if level is not None else pl.lit(None, dtype=pl.String)
        units = rows.select(
            group.fill_null("").alias(STRATUM),
            group.alias("group"),
            pl.col("score").fill_null(0.0).alias("points"),
            pl.col("unmatched"), pl.col("failed"), pl.col(UNIT_ID),
        )
        # every row has the same overall cell and counts one question: added to the few types, not to every row
        # (two columns of a million rows grouped on for nothing)
        types = collapse_units(units, [STRATUM, "group", "points", "unmatched", "failed"]).select(
            STRATUM, "group", pl.lit("Overall").alias("overall"), pl.lit(1, dtype=pl.Int64).alias("questions"),
            "points", "unmatched", "failed", pl.all().exclude(STRATUM, "group", "points", "unmatched", "failed"))
        metrics = [accuracy("overall", "Overall", self.metric, "points", "questions")]
        cells = [CellLevel("overall", "overall")]
        if level is not None:
            metrics += [accuracy(level, name, self.metric, "points", "questions")
                        for name in groups_in_order(types, "group")]
            cells.insert(0, CellLevel(level, "group"))
        metrics += [count("overall", "Overall", name, name, "questions") for name in ("unmatched", "failed")]
        return ScorePlan(types, tuple(cells), STATS, tuple(metrics))


SCORER = VqaTableScorer()
"""TextVQA's, OCRVQA's, GQA's and ChartQA's scorer (mean score in percent, ``acc``)."""
ANLS_SCORER = VqaTableScorer(metric="anls")
"""DocVQA's and InfoVQA's scorer (mean ANLS in percent)."""
