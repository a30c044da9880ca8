"""MathVision's table as VLMEvalKit's ``MATH_V_acc`` writes it: ``Subject`` (``Overall`` and each ``category``),
``tot`` (questions), ``prefetch`` (decided by the rules, without the judge), ``hit`` (right), ``prefetch_rate`` and
``acc`` (both in percent of ``tot``), rows sorted by ``Subject`` as pandas sorts text (by code point: ``Overall``
before the lower-case subjects). The bootstrap resamples rows within their subject."""

from __future__ import annotations

import polars as pl

from mmbatch.scoring.plan import STRATUM, CellLevel, MetricSpec, ScorePlan, accuracy, collapse_units, count

OVERALL = "Overall"
PREFETCH_METHOD = "rule"
"""``extract_method`` of a row the rules decided (VLMEvalKit's ``Prefetch succeed``)."""
STATS = ("tot", "hit", "prefetch", "unmatched", "failed")


def _metrics(level: str, group: str) -> list[MetricSpec]:
    """``acc`` and ``prefetch_rate`` (percent of ``tot``) and the counts ``hit`` and ``prefetch`` of one table row."""
    return [accuracy(level, group, "acc", "hit", "tot"), accuracy(level, group, "prefetch_rate", "prefetch", "tot"),
            count(level, group, "hit", "hit", "tot"), count(level, group, "prefetch", "prefetch", "tot")]


class MathVisionScorer:
    """Scores MathVision rows from their ``score`` (0 or 1) and how they were decided."""

    def plan(self, rows: pl.DataFrame) -> ScorePlan:
        """One unit per row; cells overall and per subject, listed in VLMEvalKit's order."""
        subject = pl.col("category").cast(pl.String) if "category" in rows.columns else pl.lit(None, pl.String)
        units = rows.select(
            subject.alias("subject"), pl.lit(OVERALL).alias("overall"), pl.lit(1, dtype=pl.Int64).alias("tot"),
            pl.col("score").fill_null(0.0).cast(pl.Int64).alias("hit"),
            (pl.col("extract_method") == PREFETCH_METHOD).fill_null(False).cast(pl.Int64).alias("prefetch"),
            "unmatched", "failed",
        ).with_columns(pl.col("subject").fill_null("").alias(STRATUM))
        types = collapse_units(units, [STRATUM, "subject", "overall", *STATS])
        subjects = [name for name in types["subject"].unique().to_list() if name is not None]
        metrics: list[MetricSpec] = []
        for name in sorted({OVERALL, *subjects}):
            if name == OVERALL:
                metrics += _metrics("overall", OVERALL)
            if name in subjects:
                metrics += _metrics("subject", name)
        metrics += [count("overall", OVERALL, name, name, "tot") for name in ("unmatched", "failed")]
        return ScorePlan(types, (CellLevel("subject", "subject"), CellLevel("overall", "overall")), STATS,
                         tuple(metrics))


SCORER = MathVisionScorer()
"""The scorer of ``mathvision``."""
