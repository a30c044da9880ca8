"""The point value of a plan's metrics in plain Python, bit for bit what the numpy estimator computes.

``score`` without ``--bootstrap`` needs one set of sums over a few hundred unit types: importing numpy for it cost
more than the rest of a small file's run (~0.1 s with the ``numpy.ma`` that polars pulls in for numpy input). The
sums here follow numpy's own order of addition (:func:`numpy_sum`), so a metric is the same float with or without a
bootstrap, and the same as every earlier release printed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl

from mmbatch.scoring.plan import UNITS, MetricSpec, ScorePlan, cell_stat, split_cell_stat

_UNROLL = 8
"""numpy adds runs of up to :data:`_BLOCK` values with this many accumulators."""
_BLOCK = 128
"""Longest run numpy adds without splitting it in two (``PW_BLOCKSIZE``)."""


def numpy_sum(values: Sequence[float]) -> float:
    """``values`` summed as ``numpy.add.reduce`` (and each segment of ``reduceat``) sums float64: the first value,
    plus numpy's pairwise sum of the rest."""
    if not values:
        return 0.0
    return values[0] + _pairwise(values, 1, len(values) - 1) if len(values) > 1 else values[0]


def _pairwise(values: Sequence[float], start: int, count: int) -> float:
    """numpy's pairwise summation of ``values[start:start + count]``: short runs in order, runs up to a block with
    eight accumulators, longer ones split in two at a multiple of eight."""
    if count < _UNROLL:
        total = -0.0
        for position in range(start, start + count):
            total += values[position]
        return total
    if count <= _BLOCK:
        lanes = list(values[start:start + _UNROLL])
        whole = count - count % _UNROLL
        for offset in range(_UNROLL, whole, _UNROLL):
            for lane in range(_UNROLL):
                lanes[lane] += values[start + offset + lane]
        total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
        for position in range(start + whole, start + count):
            total += values[position]
        return total
    half = count // 2
    half -= half % _UNROLL
    return _pairwise(values, start, half) + _pairwise(values, start + half, count - half)


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
