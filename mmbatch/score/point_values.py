"""The point value of a plan's metrics in plain Python, bit for bit what the numpy estimator computes.

``score`` without ``--bootstrap`` needs one set of sums over a few hundred unit types: importing numpy for it cost
more than the rest of a small file's run (~0.1 s with the ``numpy.ma`` that polars pulls in for numpy input). The
sums here follow numpy's own order of addition (:func:`numpy_sum`), so a metric is the same float with or without a
bootstrap, and the same as every earlier release printed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl

from mmbatch.numpy_order import numpy_sum
from mmbatch.scoring.plan import UNITS, MetricSpec, ScorePlan, cell_stat, split_cell_stat


def _floats(series: pl.Series) -> list[float]:
    """A column as floats, null as NaN (what ``to_numpy`` gives)."""
    return [float("nan") if value is None else value for value in series.cast(pl.Float64).to_list()]


def observed_sums(plan: ScorePlan, names: Iterable[str]) -> tuple[list[str], list[float]]:
    """The observed sum of every cell statistic that some name of ``names`` needs, named and ordered as
    :class:`~mmbatch.score.cell_sums.CellSums` orders them (cell column by cell column, statistic by statistic, the
    groups in order of first appearance)."""
    wanted = {split_cell_stat(name) for name in names}
    wanted_levels = {level for level, _, _ in wanted}
    units = _floats(plan.types[UNITS])
    stats = {stat: _floats(plan.types[stat]) for stat in plan.stats}
    sum_names: list[str] = []
    sums: list[float] = []
    for cell in plan.cells:
        if cell.level not in wanted_levels:
            continue
        runs = _runs(plan.types[cell.column].cast(pl.String).to_list())
        for stat in plan.stats:
            names_here = [cell_stat(cell.level, group, stat) for group in runs]
            if not any(split_cell_stat(name) in wanted for name in names_here):
                continue
            values = stats[stat]
            sum_names += names_here
            sums += [numpy_sum([units[row] * values[row] for row in rows]) for rows in runs.values()]
    return sum_names, sums


def _runs(groups: list[str | None]) -> dict[str, list[int]]:
    """The unit types of each group, groups in order of first appearance, types in their order (nulls in none)."""
    runs: dict[str, list[int]] = {}
    for row, group in enumerate(groups):
        if group is not None:
            runs.setdefault(group, []).append(row)
    return runs


def metric_values(specs: Sequence[MetricSpec], sums: Sequence[float], index: dict[str, int]) -> list[float]:
    """Each spec's value from the observed sums, as :class:`~mmbatch.score.estimate.MetricCombination` computes it:
    ``weight * numerator / denominator`` per term (a plain sum divides by 1), the terms added in numpy's order."""
    values = []
    for spec in specs:
        terms = [term.weight * sums[index[term.numerator]]
                 / (sums[index[term.denominator]] if term.denominator is not None else 1.0) for term in spec.terms]
        values.append(numpy_sum(terms))
    return values
