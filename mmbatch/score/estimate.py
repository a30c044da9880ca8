"""Evaluate a :class:`~mmbatch.scoring.plan.ScorePlan`: point values, and bootstrap intervals when asked.

The point value and every replicate go through the same arithmetic: type weights (the observed type counts, or a
replicate's) give the cell sums (:class:`~mmbatch.score.cell_sums.CellSums`), and each metric is a weighted sum of
ratios of those sums. Replicates are processed in blocks so memory stays bounded whatever ``--bootstrap`` is. The
point value is computed in plain Python (:mod:`mmbatch.score.point_values`, the same floats): numpy is imported for
replicates only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import polars as pl

from mmbatch.score.point_values import metric_values, observed_sums
from mmbatch.scoring.plan import STRATUM, UNITS, MetricSpec, ScorePlan

if TYPE_CHECKING:
    import numpy as np

ESTIMATE_SCHEMA: dict[str, pl.DataType] = {
    "level": pl.String(),
    "group": pl.String(),
    "metric": pl.String(),
    "value": pl.Float64(),
    "n": pl.Int64(),
    "ci_low": pl.Float64(),
    "ci_high": pl.Float64(),
}
REPLICATE_BLOCK = 256
"""Replicates drawn and summed at once: bounds the (block x types) weight arrays."""


def estimate(plan: ScorePlan, *, replicates: int = 0, rng: np.random.Generator | None = None) -> pl.DataFrame:
    """The metrics of ``plan`` as rows ``level, group, metric, value, n, ci_low, ci_high``.

    A metric with an empty denominator (e.g. no circ-0 row in a category) is left out rather than reported as
    0 or NaN. Intervals are null without ``replicates``, and for counts.

    Args:
        plan: the unit types and metric specifications of one partition.
        replicates: number of bootstrap replicates (0: no intervals).
        rng: generator for the replicates (required when ``replicates`` > 0).
    """
    names = {name for spec in plan.metrics for term in spec.terms
             for name in (term.numerator, term.denominator) if name is not None}
    names |= {spec.n for spec in plan.metrics if isinstance(spec.n, str)}
    sum_names, observed = observed_sums(plan, names)
    index = {name: i for i, name in enumerate(sum_names)}
    specs = [spec for spec in plan.metrics if is_defined(spec, observed, index)]
    if not specs:
        return pl.DataFrame(schema=ESTIMATE_SCHEMA)
    values = metric_values(specs, observed, index)
    low: list[float | None] = [None] * len(specs)
    high: list[float | None] = [None] * len(specs)
    if replicates > 0:
        if rng is None:
            raise ValueError("a bootstrap needs a random generator")
        low, high = _intervals(plan, names, specs, index, replicates, rng)
    n = [spec.n if isinstance(spec.n, int) else round(observed[index[spec.n]]) for spec in specs]
    return pl.DataFrame(
        {
            "level": [s.level for s in specs],
            "group": [s.group for s in specs],
            "metric": [s.metric for s in specs],
            "value": values,
            "n": n,
            "ci_low": low,
            "ci_high": high,
        },
        schema=ESTIMATE_SCHEMA,
    ).with_columns(pl.col("ci_low", "ci_high").fill_nan(None))


def _intervals(plan: ScorePlan, names: set[str], specs: list[MetricSpec], index: dict[str, int], replicates: int,
               rng: np.random.Generator) -> tuple[list[float | None], list[float | None]]:
    """The percentile interval of each spec over ``replicates`` bootstrap replicates (None where it has none)."""
    import numpy as np

    from mmbatch.score.bootstrap import percentile_interval, resample_type_counts
    from mmbatch.score.cell_sums import CellSums

    sums = CellSums(plan, names)
    if sums.index != index:  # both number the sums alike: a mismatch would pair values with the wrong cells
        raise RuntimeError("the bootstrap's cell sums are not those of the point values")
    combine = MetricCombination(specs, index)
    counts = plan.types[UNITS].cast(pl.Float64).to_numpy()
    strata = plan.types[STRATUM].cast(pl.String).fill_null("").to_numpy()
    blocks = []
    for start in range(0, replicates, REPLICATE_BLOCK):
        size = min(REPLICATE_BLOCK, replicates - start)
        blocks.append(combine(sums(resample_type_counts(counts, strata, size, rng))))
    low, high = percentile_interval(np.concatenate(blocks, axis=0))
    with_interval = np.array([spec.interval for spec in specs])
    low[~with_interval], high[~with_interval] = np.nan, np.nan
    return low.tolist(), high.tolist()  # lists: polars reads numpy input through numpy.ma, another 0.07 s import


def is_defined(spec: MetricSpec, observed: Sequence[float] | np.ndarray, column_of: dict[str, int]) -> bool:
    """Whether every sum the spec needs exists and every denominator is positive in the observed data."""
    if not spec.terms or (isinstance(spec.n, str) and spec.n not in column_of):
        return False
    for term in spec.terms:
        if term.numerator not in column_of:
            return False
        if term.denominator is not None and (
            term.denominator not in column_of or observed[column_of[term.denominator]] <= 0
        ):
            return False
    return True


class MetricCombination:
    """Maps sums of shape ``(B, S)`` to metric values of shape ``(B, M)`` for a fixed list of specs."""

    def __init__(self, specs: list[MetricSpec], column_of: dict[str, int]) -> None:
        import numpy as np

        terms = [term for spec in specs for term in spec.terms]
        self.numerators = np.array([column_of[t.numerator] for t in terms], dtype=np.int64)
        # A plain sum divides by 1: the index -1 points at a column of ones appended to the sums.
        self.denominators = np.array(
            [column_of[t.denominator] if t.denominator is not None else -1 for t in terms], dtype=np.int64)
        self.weights = np.array([t.weight for t in terms], dtype=np.float64)
        # Terms are listed spec by spec, so each spec's terms form one run starting here.
        self.starts = np.cumsum([0] + [len(spec.terms) for spec in specs[:-1]])

    def __call__(self, sums: np.ndarray) -> np.ndarray:
        import numpy as np

        padded = np.concatenate([sums, np.ones((sums.shape[0], 1))], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = self.weights * padded[:, self.numerators] / padded[:, self.denominators]
        # A NaN term (an empty denominator in a replicate) makes its metric NaN for that replicate.
        return np.add.reduceat(ratios, self.starts, axis=1)
