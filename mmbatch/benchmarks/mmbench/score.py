"""MMBench (and CCBench, and any MMBench-style MCQ file) scoring: CircularEval and vanilla (docs/rules.md §5).

- ``circular_acc``: a question (circular group) is right only if every row present in its group is right; a group
  whose circ-0 row (``index == g_index``) is absent is left out, as in VLMEvalKit.
- ``vanilla_acc``: every row on its own; ``circ0_acc``: the circ-0 rows only (the questions as first asked).
- Rows ``extract`` did not send to the judge because their group had already failed (``--skip-failed-groups``, the
  default) have no verdict: ``circular_acc`` is exact without them (their group is wrong either way), but a row
  accuracy counting them as wrong is not the model's (3.79 % instead of 6.51 % on one real file). In a cell holding
  such rows, ``vanilla_acc`` (and ``circ0_acc`` when a circ-0 row is one of them) is not reported, the ``overall``
  level gets a ``not_judged`` count, and a warning says how to get them (``extract --no-skip-failed-groups``).

Reported per split at the levels ``overall`` (``Overall``), ``l2-category`` (VLMEvalKit's abbreviations) and
``category``; the resampling unit of the bootstrap is the circular group, within its category.
"""

from __future__ import annotations

import polars as pl

from mmbatch.answers.frames import columns_as_they_lie
from mmbatch.row_facts import GROUP_FAILED_NOTE
from mmbatch.scoring.plan import (
    STRATUM,
    UNITS,
    CellLevel,
    MetricSpec,
    ScorePlan,
    accuracy,
    collapse_units,
    count,
    groups_in_order,
)

L2_ABBREVIATIONS: dict[str, str] = {
    "attribute_reasoning": "AR",
    "coarse_perception": "CP",
    "finegrained_perception (cross-instance)": "FP-C",
    "finegrained_perception (instance-level)": "FP-S",
    "logic_reasoning": "LR",
    "relation_reasoning": "RR",
}
"""VLMEvalKit's short names of the six MMBench L2 abilities; other L2 names are reported as they are."""

STATS = ("rows", "row_hits", "groups", "group_hits", "circ0", "circ0_hits", "unmatched", "failed", "not_judged",
         "circ0_not_judged")
"""Per-group statistics: rows and right rows, whether the group counts (circ-0 present) and is right, the
circ-0 row and whether it is right, unmatched and failed rows, rows left without a verdict by the judge's group
skipping (and whether the circ-0 row is one)."""

LEVELS = (("overall", "overall_group"), ("l2-category", "l2_group"), ("category", "category_group"))
"""(level name, column of the group frame holding the group's cell at that level)."""

METRICS = (
    ("circular_acc", "group_hits", "groups"),
    ("vanilla_acc", "row_hits", "rows"),
    ("circ0_acc", "circ0_hits", "circ0"),
)
"""(metric, numerator statistic, denominator statistic) reported for every cell."""
UNDECIDED_BY = {"vanilla_acc": "not_judged", "circ0_acc": "circ0_not_judged"}
"""Row accuracies and the statistic counting rows without a verdict that make them meaningless in a cell."""


class MmbenchScorer:
    """Scores MMBench-style MCQ files."""

    text_columns = ("extract_note",)
    """Read besides the scored columns: the note of rows the judge was not asked about (``not_judged``)."""

    def plan(self, rows: pl.DataFrame) -> ScorePlan:
        """One unit per circular group; cells Overall, each L2 ability and each category."""
        groups = circular_groups(rows)
        keys = [STRATUM, *(column for _, column in LEVELS), *STATS]
        types = collapse_units(groups, keys)
        metrics: list[MetricSpec] = []
        for level, column in LEVELS:
            for group in groups_in_order(types, column):
                undecided = _cell_sums(types, column, group)
                metrics += [accuracy(level, group, name, hits, total) for name, hits, total in METRICS
                            if not undecided.get(UNDECIDED_BY.get(name, ""), 0)]
                if level == "overall":
                    metrics += [count(level, group, name, name, "rows") for name in ("unmatched", "failed")]
                    if undecided["not_judged"]:
                        metrics.append(count(level, group, "not_judged", "not_judged", "rows"))
        cells = tuple(CellLevel(level, column) for level, column in LEVELS)
        return ScorePlan(types, cells, STATS, tuple(metrics), _not_judged_warnings(types))


def _cell_sums(types: pl.DataFrame, column: str, group: str) -> dict[str, int]:
    """The rows without a verdict in one cell (:data:`UNDECIDED_BY`'s statistics, summed over its units)."""
    cell = types.filter(pl.col(column) == group)
    return {stat: int((cell[stat] * cell[UNITS]).sum()) for stat in set(UNDECIDED_BY.values())}


def _not_judged_warnings(types: pl.DataFrame) -> tuple[str, ...]:
    rows = int((types["not_judged"] * types[UNITS]).sum())
    if not rows:
        return ()
    return (f"{rows} rows were not sent to the judge because another row of their circular group was already "
            "wrong (extract --skip-failed-groups, the default): circular_acc is exact, but vanilla_acc (and "
            "circ0_acc where a circ-0 row is among them) is left out of every cell holding such rows, since they "
            "have no verdict; rerun extract with --no-skip-failed-groups to have them judged",)


def circular_groups(rows: pl.DataFrame) -> pl.DataFrame:
    """One row per circular group with its statistics (:data:`STATS`) and its cells at each level.

    A group's category is its circ-0 row's (its first row's when the circ-0 row is absent).
    """
    is_circ0 = pl.col("index") == pl.col("g_index")
    not_judged = (pl.col("extract_note") == GROUP_FAILED_NOTE).fill_null(False) if "extract_note" in rows.columns \
        else pl.lit(False)

    def label(column: str) -> pl.Expr:
        if column not in rows.columns:
            return pl.lit(None, dtype=pl.String)
        text = pl.col(column).cast(pl.String)
        return pl.coalesce(text.filter(is_circ0).first(), text.first())

    read = [name for name in ("index", "g_index", "hit", "unmatched", "failed", "extract_note", "l2-category",
                              "category") if name in rows.columns]
    # grouped over the columns it reads: a group_by over the whole frame made one chunk of each of its columns first
    groups = columns_as_they_lie(rows, read).group_by("g_index").agg(
        pl.len().cast(pl.Int64).alias("rows"),
        pl.col("hit").sum().alias("row_hits"),
        is_circ0.any().cast(pl.Int64).alias("circ0"),
        (pl.col("hit") * is_circ0.cast(pl.Int64)).sum().alias("circ0_hits"),
        pl.col("unmatched").sum(),
        pl.col("failed").sum(),
        not_judged.sum().cast(pl.Int64).alias("not_judged"),
        (not_judged & is_circ0).sum().cast(pl.Int64).alias("circ0_not_judged"),
        label("l2-category").alias("l2_group"),
        label("category").alias("category_group"),
    )
    return groups.with_columns(
        pl.col("circ0").alias("groups"),
        ((pl.col("row_hits") == pl.col("rows")) & (pl.col("circ0") == 1)).cast(pl.Int64).alias("group_hits"),
        pl.lit("Overall").alias("overall_group"),
        pl.col("l2_group").replace(L2_ABBREVIATIONS),
        pl.col("category_group").fill_null("").alias(STRATUM),
    )


SCORER = MmbenchScorer()
