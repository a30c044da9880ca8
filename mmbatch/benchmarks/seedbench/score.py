"""SEED-Bench-1 and -2 scoring: accuracy per dimension, per data type, overall and macro (docs/rules.md §7).

- ``dimension``: accuracy of each evaluation dimension (``category``, else the official name of
  ``question_type_id``).
- ``data_type``: question-weighted accuracy per media kind (SEED-1: image = dims 1-9, video = dims 10-12).
- ``overall``: ``acc`` over all questions and ``acc_macro``, the plain mean of the dimension accuracies.
- SEED-2 only: ``level`` L1/L2/L3 (cumulative: dims 1-22, 1-24, 1-27) and ``part`` (e.g. "Single-Image & Text
  Comprehension"), each with ``acc`` (question-weighted) and ``acc_macro`` (mean of its dimensions).

Rows that lack a dimension (e.g. an imported result file that only has question ids) are still counted in
``overall`` and ``data_type``. The bootstrap resamples rows within their dimension.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from mmbatch.benchmarks.seedbench.dimensions import SEED1_DIMENSIONS, SEED1_VIDEO_DIMENSIONS, SEED2_LEVELS, SEED2_PARTS
from mmbatch.benchmarks.seedbench.dimensions import SEED2_DIMENSION_NAMES as SEED2_DIMENSIONS
from mmbatch.scoring.plan import (
    STRATUM,
    CellLevel,
    MetricSpec,
    ScorePlan,
    accuracy,
    collapse_units,
    count,
    groups_in_order,
    macro_mean,
)

STATS = ("questions", "right", "unmatched", "failed")


class SeedScorer:
    """Scores SEED-Bench-1 (``second=False``) or SEED-Bench-2 rows."""

    def __init__(self, *, second: bool) -> None:
        self.second = second
        self.dimensions = SEED2_DIMENSIONS if second else SEED1_DIMENSIONS

    def plan(self, rows: pl.DataFrame) -> ScorePlan:
        """One unit per row; cells each dimension, data type, overall, and for SEED-2 each level and part."""
        units = self.row_units(rows)
        keys = [STRATUM, "dimension", "dim_id", "data_type", "part", *(name for name, _, _ in SEED2_LEVELS),
                "overall", *STATS]
        types = collapse_units(units, keys)
        dim_order = {name: int(dim) if dim is not None else 1 << 30 for name, dim in
                     types.group_by("dimension").agg(pl.col("dim_id").min()).iter_rows()}
        dimensions = groups_in_order(types, "dimension", dim_order)
        metrics = [accuracy("dimension", d, "acc", "right", "questions") for d in dimensions]

        # image and video first (SEED-1), then SEED-2's kinds in the order of their first dimension.
        first_dim = types.group_by("data_type").agg(pl.col("dim_id").min()).drop_nulls("data_type")
        type_order = {kind: (dim if dim is not None else 1 << 30) + 2 for kind, dim in first_dim.iter_rows()}
        data_types = groups_in_order(types, "data_type", type_order | {"image": 0, "video": 1})
        metrics += [accuracy("data_type", t, "acc", "right", "questions") for t in data_types]

        if self.second:
            metrics += self._grouped_levels(types, dimensions)

        metrics.append(accuracy("overall", "Overall", "acc", "right", "questions"))
        if dimensions:
            metrics.append(macro_mean("overall", "Overall", "acc_macro",
                                      [("dimension", d) for d in dimensions], "right", "questions"))
        metrics += [count("overall", "Overall", name, name, "questions") for name in ("unmatched", "failed")]
        cells = (CellLevel("dimension", "dimension"), CellLevel("data_type", "data_type"),
                 *(CellLevel("level", level) for level, _, _ in SEED2_LEVELS), CellLevel("part", "part"),
                 CellLevel("overall", "overall"))
        return ScorePlan(types, cells, STATS, tuple(metrics))

    def row_units(self, rows: pl.DataFrame) -> pl.DataFrame:
        """Each row with its dimension (name and number), data type, SEED-2 part and levels, and statistics."""
        dim_id = _dimension_number(rows, self.dimensions, second=self.second)
        frame = rows.with_columns(dim_id.alias("dim_id"))
        name = pl.col("dim_id").replace_strict(self.dimensions, default=None, return_dtype=pl.String)
        if "category" in rows.columns:
            name = pl.coalesce(pl.col("category").cast(pl.String), name)
        frame = frame.with_columns(
            name.alias("dimension"),
            _data_type(rows, second=self.second).alias("data_type"),
            _part(rows, second=self.second).alias("part"),
            *(pl.when(pl.col("dim_id") <= last).then(pl.lit(level)).otherwise(None).alias(level)
              if self.second else pl.lit(None, dtype=pl.String).alias(level) for level, _, last in SEED2_LEVELS),
            pl.lit("Overall").alias("overall"),
            pl.lit(1, dtype=pl.Int64).alias("questions"),
            pl.col("hit").alias("right"),
        )
        return frame.with_columns(
            pl.coalesce(pl.col("dimension"), pl.col("data_type"), pl.lit("")).alias(STRATUM))

    def _grouped_levels(self, types: pl.DataFrame, dimensions: Sequence[str]) -> list[MetricSpec]:
        """SEED-2 ``level`` and ``part`` cells: question-weighted ``acc`` and ``acc_macro`` of their dimensions."""
        metrics: list[MetricSpec] = []
        present = set(types["dim_id"].drop_nulls().to_list())
        for level, first, last in SEED2_LEVELS:
            # A level is reported only when the file has a dimension that this level adds.
            if not any(first <= dim <= last for dim in present):
                continue
            members = _dimensions_where(types, dimensions, pl.col(level) == level)
            metrics += _acc_and_macro("level", level, members)
        part_order = {name: i for i, (name, _) in enumerate(SEED2_PARTS)}
        for part in groups_in_order(types, "part", part_order):
            metrics += _acc_and_macro("part", part, _dimensions_where(types, dimensions, pl.col("part") == part))
        return metrics


def _acc_and_macro(level: str, group: str, dimensions: Sequence[str]) -> list[MetricSpec]:
    metrics = [accuracy(level, group, "acc", "right", "questions")]
    if dimensions:
        metrics.append(macro_mean(level, group, "acc_macro", [("dimension", d) for d in dimensions], "right",
                                  "questions"))
    return metrics


def _dimensions_where(types: pl.DataFrame, dimensions: Sequence[str], condition: pl.Expr) -> list[str]:
    """The dimensions (in display order) of the types meeting ``condition``."""
    inside = set(types.filter(condition)["dimension"].drop_nulls().to_list())
    return [d for d in dimensions if d in inside]


def _dimension_number(rows: pl.DataFrame, names: dict[int, str], *, second: bool) -> pl.Expr:
    """``question_type_id``, else (SEED-2) the ``<dim>`` of a ``<dim>_<n>`` question id, else the number of the
    official name in ``category``."""
    candidates: list[pl.Expr] = []
    if "question_type_id" in rows.columns:
        candidates.append(pl.col("question_type_id").cast(pl.Int64, strict=False))
    if second and "question_id" in rows.columns:
        candidates.append(pl.col("question_id").cast(pl.String).str.extract(r"^(\d+)_\d+$").cast(pl.Int64))
    if "category" in rows.columns:
        by_name = {name: number for number, name in names.items()}
        candidates.append(pl.col("category").cast(pl.String).replace_strict(by_name, default=None,
                                                                            return_dtype=pl.Int64))
    return pl.coalesce(candidates) if candidates else pl.lit(None, dtype=pl.Int64)


def _data_type(rows: pl.DataFrame, *, second: bool) -> pl.Expr:
    """``data_type``; for SEED-1 rows without one: video for dims 10-12 or ids starting with ``v``, else image."""
    given = pl.col("data_type").cast(pl.String) if "data_type" in rows.columns else pl.lit(None, dtype=pl.String)
    if second:
        return given
    video = pl.col("dim_id").is_in(SEED1_VIDEO_DIMENSIONS).fill_null(False)
    if "question_id" in rows.columns:
        video = video | pl.col("question_id").cast(pl.String).str.starts_with("v").fill_null(False)
    return pl.coalesce(given, pl.when(video).then(pl.lit("video")).otherwise(pl.lit("image")))


def _part(rows: pl.DataFrame, *, second: bool) -> pl.Expr:
    """SEED-2 part: ``l2-category`` when given, else the official subpart of the dimension; null for SEED-1."""
    if not second:
        return pl.lit(None, dtype=pl.String)
    by_dimension = {dim: name for name, dims in SEED2_PARTS for dim in dims}
    official = pl.col("dim_id").replace_strict(by_dimension, default=None, return_dtype=pl.String)
    if "l2-category" in rows.columns:
        return pl.coalesce(pl.col("l2-category").cast(pl.String), official)
    return official


SCORER = SeedScorer(second=False)
SCORER_V2 = SeedScorer(second=True)
