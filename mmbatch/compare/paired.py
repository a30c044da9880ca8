"""Paired estimates: both models' metrics on the same bootstrap draws of the benchmark's units, and a paired test.

The benchmark's own scorer builds each model's plan with one type per unit (:func:`types_per_unit`), the two are
joined unit by unit, and every replicate draws the units once and weighs both models' statistics with that same
draw. The interval of the difference is then paired: a question both models get right or both get wrong moves
both values together and adds no spread, unlike two independent intervals.

The test of each metric (:func:`_paired_test`) is McNemar's exact test where each unit has a right-or-wrong verdict
(a 0/1 answer kind), the exact sign test where the rows' scores are graded (VQA accuracy, ANLS, a judge's grade:
``hit`` is null), and none where the metric does not compare the same units in both files (MMMU's ``matched_acc``:
right among the rows each model's answer could be read, two different sets of rows) or is no plain accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from mmbatch.compare.mcnemar import mcnemar_exact_p
from mmbatch.errors import BadInputError
from mmbatch.score.bootstrap import percentile_interval, resample_type_counts
from mmbatch.score.cell_sums import CellSums
from mmbatch.score.estimate import REPLICATE_BLOCK, MetricCombination, is_defined
from mmbatch.scoring.plan import (
    PERCENT,
    STRATUM,
    UNIT_ID,
    UNITS,
    MetricSpec,
    ScorePlan,
    split_cell_stat,
    types_per_unit,
)
from mmbatch.scoring.scorer import Scorer

B_SUFFIX = "\x1fb"
"""Suffix of model B's statistic columns in the joined unit frame."""

COMPARISON_SCHEMA: dict[str, pl.DataType] = {
    "level": pl.String(), "group": pl.String(), "metric": pl.String(), "value_a": pl.Float64(),
    "value_b": pl.Float64(), "diff": pl.Float64(), "ci_low": pl.Float64(), "ci_high": pl.Float64(),
    "n": pl.Int64(), "a_only": pl.Int64(), "b_only": pl.Int64(), "p_value": pl.Float64(), "test": pl.String(),
}
"""One row per metric: both values, ``diff = value_b - value_a`` with its paired interval, and the paired test
(``test``: :data:`MCNEMAR`, :data:`SIGN_TEST` or null; ``a_only``/``b_only``: the units where A, resp. B, did
better)."""

MCNEMAR = "mcnemar-exact"
"""McNemar's exact test on the units one model got right and the other wrong (0/1 answer kinds)."""
SIGN_TEST = "sign-exact"
"""The exact sign test on the units where one model scored higher than the other (graded answer kinds)."""

_NO_TEST: tuple[int | None, int | None, float | None, str | None] = (None, None, None, None)


@dataclass(frozen=True)
class _Draws:
    """How bootstrap draws map onto the rows of the joined types."""

    counts: np.ndarray
    """Units per resampling block (a type of interchangeable units, or one unit)."""
    strata: np.ndarray
    """Stratum of each block."""
    block_of_row: np.ndarray
    """Block of each joined row."""
    per_row: np.ndarray
    """Multiplier of a row's weight per drawn unit of its block."""

    def weights(self, draws: np.ndarray) -> np.ndarray:
        """Row weights ``(B, rows)`` for block draws ``(B, blocks)``."""
        return draws[:, self.block_of_row] * self.per_row


def compare_partition(scorer: Scorer, rows_a: pl.DataFrame, rows_b: pl.DataFrame, *, replicates: int,
                      rng: np.random.Generator | None, graded: bool = False) -> pl.DataFrame:
    """Every metric both models have on these rows, paired (columns of :data:`COMPARISON_SCHEMA`).

    Args:
        scorer: the benchmark's scorer.
        rows_a: model A's scored rows (``hit``, ``unmatched``, ``failed``, ``g_index``), the same rows as ``rows_b``.
        rows_b: model B's.
        replicates: bootstrap replicates (0: no intervals).
        rng: the generator of the replicates.
        graded: whether the rows' scores are graded (``hit`` null): the sign test instead of McNemar's.

    Raises:
        BadInputError: the two files group the shared rows into different units or cells.
    """
    with types_per_unit():
        plan_a, plan_b = scorer.plan(rows_a), scorer.plan(rows_b)
    joined, draws = _join_units(plan_a, plan_b)
    stats = plan_a.stats
    view_a = joined.select(pl.exclude([f"{s}{B_SUFFIX}" for s in stats]))
    view_b = joined.drop(list(stats)).rename({f"{s}{B_SUFFIX}": s for s in stats})
    wanted = {(s.level, s.group, s.metric) for s in plan_b.metrics}
    candidates = [spec for spec in plan_a.metrics if (spec.level, spec.group, spec.metric) in wanted]
    plans = [ScorePlan(view, plan_a.cells, stats, tuple(candidates)) for view in (view_a, view_b)]
    names = {name for spec in candidates for t in spec.terms for name in (t.numerator, t.denominator) if name}
    names |= {spec.n for spec in candidates if isinstance(spec.n, str)}
    sums = [CellSums(plan, names) for plan in plans]
    observed_weights = draws.weights(draws.counts[np.newaxis, :])
    observed = [s(observed_weights)[0] for s in sums]
    specs = [spec for spec in candidates
             if all(is_defined(spec, o, s.index) for o, s in zip(observed, sums, strict=True))]
    if not specs:
        return pl.DataFrame(schema=COMPARISON_SCHEMA)
    combine = [MetricCombination(specs, s.index) for s in sums]
    value_a, value_b = (c(o[np.newaxis, :])[0] for c, o in zip(combine, observed, strict=True))
    low, high = np.full(len(specs), np.nan), np.full(len(specs), np.nan)
    if replicates > 0:
        if rng is None:
            raise ValueError("a bootstrap needs a random generator")
        blocks = []
        for start in range(0, replicates, REPLICATE_BLOCK):
            weights = draws.weights(resample_type_counts(draws.counts, draws.strata,
                                                         min(REPLICATE_BLOCK, replicates - start), rng))
            blocks.append(combine[1](sums[1](weights)) - combine[0](sums[0](weights)))
        low, high = percentile_interval(np.concatenate(blocks, axis=0))
        no_interval = np.array([not spec.interval for spec in specs])
        low[no_interval], high[no_interval] = np.nan, np.nan
    tests = [_paired_test(spec, joined, plan_a, observed_weights[0], graded) for spec in specs]
    n = [spec.n if isinstance(spec.n, int) else round(float(observed[0][sums[0].index[spec.n]])) for spec in specs]
    return pl.DataFrame({
        "level": [s.level for s in specs], "group": [s.group for s in specs], "metric": [s.metric for s in specs],
        "value_a": value_a, "value_b": value_b, "diff": value_b - value_a, "ci_low": low, "ci_high": high, "n": n,
        "a_only": [t[0] for t in tests], "b_only": [t[1] for t in tests], "p_value": [t[2] for t in tests],
        "test": [t[3] for t in tests],
    }, schema=COMPARISON_SCHEMA).with_columns(pl.col("ci_low", "ci_high").fill_nan(None))


def _join_units(plan_a: ScorePlan, plan_b: ScorePlan) -> tuple[pl.DataFrame, _Draws]:
    """Both plans' per-unit types side by side, and how bootstrap draws weigh them."""
    cell_columns = list(dict.fromkeys(cell.column for cell in plan_a.cells))
    keys = [UNIT_ID, STRATUM, *cell_columns]
    stats = list(plan_a.stats)
    side_b = plan_b.types.select(*keys, *(pl.col(s).alias(f"{s}{B_SUFFIX}") for s in stats),
                                 pl.col(UNITS).alias(f"{UNITS}{B_SUFFIX}"))
    joined = plan_a.types.join(side_b, on=keys, how="inner", nulls_equal=True)
    if not (joined.height == plan_a.types.height == plan_b.types.height) or not joined[UNITS].equals(
            joined[f"{UNITS}{B_SUFFIX}"], check_names=False):
        raise BadInputError("the two files group their shared rows differently (g_index or category columns "
                            "differ for the same index): they are not the same benchmark rows", column="g_index")
    joined = joined.drop(f"{UNITS}{B_SUFFIX}")
    if joined[UNIT_ID].is_unique().all():
        # One row per unit: units with equal statistics in both models are interchangeable, so collapse them into
        # types and draw type counts (the same multinomial shortcut as score's bootstrap).
        columns = [STRATUM, *cell_columns, *stats, *(f"{s}{B_SUFFIX}" for s in stats)]
        types = joined.group_by(columns).agg(pl.col(UNITS).sum()).sort(columns, nulls_last=True)
        strata = types[STRATUM].cast(pl.String).fill_null("").to_numpy()
        counts = types[UNITS].cast(pl.Float64).to_numpy()
        rows = np.arange(types.height)
        return types, _Draws(counts, strata, rows, np.ones(types.height))
    # A unit spread over several rows (POPE's row in two splits): draw units, each row weighs its unit's draw.
    joined = joined.sort(UNIT_ID, STRATUM, nulls_last=True)
    units = joined.select(UNIT_ID, STRATUM).unique(UNIT_ID, keep="first", maintain_order=True)
    position = {unit: i for i, unit in enumerate(units[UNIT_ID].to_list())}
    block_of_row = np.array([position[u] for u in joined[UNIT_ID].to_list()], dtype=np.int64)
    strata = units[STRATUM].cast(pl.String).fill_null("").to_numpy()
    return joined, _Draws(np.ones(units.height), strata, block_of_row, joined[UNITS].cast(pl.Float64).to_numpy())


def _paired_test(spec: MetricSpec, joined: pl.DataFrame, plan: ScorePlan, weights: np.ndarray,
                 graded: bool) -> tuple[int | None, int | None, float | None, str | None]:
    """(units A did better on, units B did better on, exact two-sided p, the test's name) over the cell's units, for
    a plain accuracy; all None where no paired test applies.

    The metric must be one ratio whose denominator counts each unit once or not at all, the same unit in both files.
    Then, with 0/1 per-unit statistics (circular accuracy per question, SEED accuracy per row, MME acc+ per image),
    McNemar's test on the units one model got right and the other wrong; with graded scores, the sign test on the
    units where one model's score is higher. Both are the same binomial on those units (McNemar's is the sign test of
    0/1 verdicts), which is why a graded score never feeds McNemar's: a pair (0.3, 0.6) is no right-or-wrong pair.
    Vanilla accuracy over a group's four rows, MME score, macro means, counts, and a ratio over rows that differ by
    model (MMMU's ``matched_acc``) get none.
    """
    if len(spec.terms) != 1 or spec.terms[0].weight != PERCENT or spec.terms[0].denominator is None:
        return _NO_TEST
    _, _, numerator = split_cell_stat(spec.terms[0].numerator)
    _, _, denominator = split_cell_stat(spec.terms[0].denominator)
    counts = joined[denominator].cast(pl.Float64)
    if not counts.is_in([0.0, 1.0]).all() or not counts.equals(
            joined[f"{denominator}{B_SUFFIX}"].cast(pl.Float64), check_names=False):
        return _NO_TEST  # not the same units in both files: each model's own rows (matched_acc), or weighted ones
    verdicts = all(joined[c].cast(pl.Float64).is_in([0.0, 1.0]).all() for c in (numerator, f"{numerator}{B_SUFFIX}"))
    if not graded and not verdicts:
        return _NO_TEST  # a count per unit (MME acc over an image's two rows): no verdict per unit
    member = pl.lit(False)
    for cell in plan.cells:
        if cell.level == spec.level:
            member = member | (pl.col(cell.column).cast(pl.String) == spec.group).fill_null(False)
    counted = joined.with_columns(pl.Series("_w", weights)).filter(member & (pl.col(denominator) == 1))
    if UNITS in counted.columns and counted.height and not _one_row_per_unit(counted):
        return _NO_TEST
    a_only = int(counted.filter(pl.col(numerator) > pl.col(f"{numerator}{B_SUFFIX}"))["_w"].sum())
    b_only = int(counted.filter(pl.col(numerator) < pl.col(f"{numerator}{B_SUFFIX}"))["_w"].sum())
    return a_only, b_only, mcnemar_exact_p(a_only, b_only), SIGN_TEST if graded else MCNEMAR


def _one_row_per_unit(rows: pl.DataFrame) -> bool:
    """Whether each unit is counted once (collapsed types have no unit column; exploded units must not repeat)."""
    return UNIT_ID not in rows.columns or bool(rows[UNIT_ID].is_unique().all())
