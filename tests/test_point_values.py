"""The plain-Python point values equal, bit for bit, what the numpy estimator computes (the sums of ``score``
without --bootstrap are the floats every earlier release printed)."""

from __future__ import annotations

import random

import numpy as np
import polars as pl
import pytest

from mmbatch.numpy_order import numpy_mean, numpy_sum
from mmbatch.score.cell_sums import CellSums
from mmbatch.score.estimate import MetricCombination, is_defined
from mmbatch.score.point_values import metric_values, observed_sums
from mmbatch.scoring.plan import STRATUM, UNITS, CellLevel, MetricSpec, Ratio, ScorePlan, cell_stat


@pytest.mark.parametrize("size", [1, 2, 7, 8, 9, 16, 17, 127, 128, 129, 130, 257, 1000, 1537])
def test_numpy_sum_adds_in_numpys_order(size):
    rng = random.Random(size)
    for _ in range(40):
        values = [rng.random() * rng.choice([1.0, 1e-3, 1e7]) / 3 for _ in range(size)]
        # a segment of reduceat along the rows of a 2-D array, as the estimator sums a cell and a metric's terms
        matrix = np.array([values + values, values[::-1] + values])
        assert numpy_sum(values) == np.add.reduceat(matrix, [0, size], axis=1)[0, 0]
        assert numpy_sum(values[::-1]) == np.add.reduceat(matrix, [0, size], axis=1)[1, 0]



@pytest.mark.parametrize("size", [1, 2, 4, 7, 8, 9, 10, 16, 17, 127, 128, 129, 130, 257, 1000])
def test_numpy_mean_is_numpys_mean_of_a_list(size):
    """np.mean of a list sums its one-dimensional array pairwise from zero, unlike reduceat's segments."""
    rng = random.Random(size)
    for _ in range(40):
        values = [rng.random() * rng.choice([1.0, 1e-3, 1e7]) / 3 for _ in range(size)]
        assert numpy_mean(values) == float(np.mean(values))


def random_plan(seed: int, types: int) -> ScorePlan:
    """Unit types with fractional statistics (VQA-style scores) in uneven groups, with nulls in a cell column."""
    rng = random.Random(seed)
    groups = [f"g{rng.randrange(7)}" if rng.random() > 0.1 else None for _ in range(types)]
    frame = pl.DataFrame({
        UNITS: [rng.randrange(1, 50) for _ in range(types)], STRATUM: groups,
        "cat": groups, "overall": ["Overall"] * types,
        "score": [rng.choice([0.0, 1 / 3, 2 / 3, 1.0, 0.1]) for _ in range(types)],
        "questions": [1.0] * types,
    })
    cats = sorted({g for g in groups if g is not None})
    metrics = [MetricSpec("category", c, "acc", (Ratio(cell_stat("category", c, "score"),
                                                       cell_stat("category", c, "questions")),),
                          n=cell_stat("category", c, "questions")) for c in [*cats, "absent"]]
    metrics.append(MetricSpec("overall", "Overall", "macro", tuple(
        Ratio(cell_stat("category", c, "score"), cell_stat("category", c, "questions"), 100 / len(cats))
        for c in cats), n=len(cats)))
    metrics.append(MetricSpec("overall", "Overall", "total", (Ratio(cell_stat("overall", "Overall", "score"),
                                                                    None, 1.0),), n=7, interval=False))
    return ScorePlan(frame, (CellLevel("category", "cat"), CellLevel("overall", "overall")), ("score", "questions"),
                     tuple(metrics))


@pytest.mark.parametrize("seed, types", [(0, 5), (1, 40), (2, 300), (3, 2000)])
def test_point_values_equal_the_numpy_estimator(seed, types):
    plan = random_plan(seed, types)
    names = {n for spec in plan.metrics for t in spec.terms for n in (t.numerator, t.denominator) if n is not None}
    sums = CellSums(plan, names)
    observed = sums(plan.types[UNITS].cast(pl.Float64).to_numpy()[np.newaxis, :])[0]
    sum_names, plain = observed_sums(plan, names)
    assert sum_names == sums.names
    assert plain == observed.tolist()
    index = {name: i for i, name in enumerate(sum_names)}
    specs = [spec for spec in plan.metrics if is_defined(spec, observed, sums.index)]
    assert [s.group for s in specs if s.level == "category"] != [] and "absent" not in [s.group for s in specs]
    combined = MetricCombination(specs, sums.index)(observed[np.newaxis, :])[0]
    assert metric_values(specs, plain, index) == combined.tolist()
