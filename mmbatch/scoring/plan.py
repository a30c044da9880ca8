"""What a benchmark scorer hands to the estimator: unit types, their statistics per cell, and the metrics.

Every metric of every benchmark is a weighted sum of ratios of sums over resampling units (a circular group, an
MME image, a SEED row): ``value = sum(weight * sum(numerator) / sum(denominator))``. Accuracy is one ratio, MME's
score two (acc + acc+), an MME total twenty, a macro mean one per dimension with weight ``100 / K``. Because
units with the same statistics are interchangeable, a scorer collapses its units into *unit types* (a few hundred
rows even for a million questions) and the estimator works on those, for the point value and every bootstrap
replicate alike.

A *cell* is one (level, group) of the metrics table, e.g. (``category``, ``image_emotion``): the unit types whose
cell column (:class:`CellLevel`) holds that group. Metric terms name a statistic of a cell with :func:`cell_stat`;
the estimator sums it over the cell's types, without ever building a (types x cells) matrix, so files with
thousands of categories cost no more than the number of types.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import polars as pl

UNITS = "units"
"""Column of the unit-type frame: how many units have this type."""
STRATUM = "stratum"
"""Column of the unit-type frame: the stratum within which the bootstrap resamples units."""
PERCENT = 100.0
_SEPARATOR = "\x1f"


@dataclass(frozen=True)
class Ratio:
    """One term of a metric: ``weight * sum(numerator) / sum(denominator)`` over the (resampled) units."""

    numerator: str
    """Cell statistic (a :func:`cell_stat` name) summed for the numerator."""
    denominator: str | None = None
    """Cell statistic summed for the denominator; None for a plain (weighted) sum such as a count."""
    weight: float = PERCENT
    """Factor applied to the ratio: 100 for a percentage, ``100 / K`` for one of K terms of a macro mean."""


@dataclass(frozen=True)
class MetricSpec:
    """One row of the metrics table, before it is evaluated."""

    level: str
    """Aggregation level (``overall``, ``category``, ``subtask``, ``dimension``, ...)."""
    group: str
    """Group within the level (``Overall``, a category name, ...)."""
    metric: str
    """Metric name (``circular_acc``, ``acc``, ``score``, ``unmatched``, ...)."""
    terms: tuple[Ratio, ...]
    """The value is the sum of these terms."""
    n: str | int
    """Units the value is computed over: a cell statistic (its observed sum) or a fixed count."""
    interval: bool = True
    """Whether a bootstrap interval is meaningful (False for counts such as ``unmatched``)."""


@dataclass(frozen=True)
class CellLevel:
    """A column of the unit-type frame whose values are the groups of a level."""

    level: str
    """Level name in the metrics table (``category``, ``total``, ...)."""
    column: str
    """Column of the unit-type frame holding each type's group at this level; null: in no group."""


@dataclass(frozen=True)
class ScorePlan:
    """Everything the estimator needs for one (benchmark, model, split) partition."""

    types: pl.DataFrame
    """One row per unit type: :data:`UNITS`, :data:`STRATUM`, the cell columns and the statistics."""
    cells: tuple[CellLevel, ...]
    """The cell columns; two of them may share a level name if their groups differ (SEED-2's L1, L2, L3)."""
    stats: tuple[str, ...]
    """The numeric statistic columns of ``types``, per unit."""
    metrics: tuple[MetricSpec, ...]
    """The rows of the metrics table, in display order."""
    warnings: tuple[str, ...] = field(default=())
    """Problems the user must see (printed and recorded in the metadata)."""


def cell_stat(level: str, group: str, stat: str) -> str:
    """Name of statistic ``stat`` of the cell (``level``, ``group``), as metric terms refer to it."""
    return _SEPARATOR.join((level, group, stat))


def split_cell_stat(name: str) -> tuple[str, str, str]:
    """(level, group, stat) of a :func:`cell_stat` name."""
    level, group, stat = name.split(_SEPARATOR)
    return level, group, stat


UNIT_ID = "g_index"
"""The column every unit frame carries: the group whose rows are resampled together (circular group, image, row)."""

_keep_units: ContextVar[bool] = ContextVar("keep_units", default=False)


@contextmanager
def types_per_unit() -> Iterator[None]:
    """Within this block, :func:`collapse_units` keeps :data:`UNIT_ID` among its keys.

    A paired comparison of two models must draw the same units for both, so it needs each unit's statistics rather
    than anonymous types. Switching the collapse here, instead of in every scorer, keeps scorers unaware of it: a new
    benchmark's scorer works with ``mmbatch compare`` as soon as its unit frame keeps ``g_index`` (all do).
    """
    token = _keep_units.set(True)
    try:
        yield
    finally:
        _keep_units.reset(token)


def collapse_units(units: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Count the units per distinct combination of ``keys`` (stratum, cell columns and statistics)."""
    keys = [*keys, UNIT_ID] if _keep_units.get() and UNIT_ID not in keys else list(keys)
    # the keys alone: a group_by over a whole frame makes one chunk of each of its columns (a copy of the file)
    return units.select(keys).group_by(keys).agg(pl.len().cast(pl.Int64).alias(UNITS)).sort(keys, nulls_last=True)


def groups_in_order(types: pl.DataFrame, column: str, order: dict[str, int] | None = None) -> list[str]:
    """The distinct non-null values of ``column``, in ``order`` (unknown ones after, alphabetically)."""
    values = [v for v in types[column].unique().to_list() if v is not None]
    rank = order or {}
    after = max(rank.values(), default=0) + 1
    return sorted(values, key=lambda v: (rank.get(v, after), v))


def accuracy(level: str, group: str, metric: str, hits: str, total: str) -> MetricSpec:
    """``100 * hits / total`` of one cell, over ``total`` units."""
    numerator, denominator = cell_stat(level, group, hits), cell_stat(level, group, total)
    return MetricSpec(level, group, metric, (Ratio(numerator, denominator),), n=denominator)


def count(level: str, group: str, metric: str, stat: str, total: str) -> MetricSpec:
    """A plain count of one cell (``unmatched``, ``failed``), with ``n`` the cell's ``total``."""
    return MetricSpec(level, group, metric, (Ratio(cell_stat(level, group, stat), None, 1.0),),
                      n=cell_stat(level, group, total), interval=False)


def macro_mean(level: str, group: str, metric: str, cells: Sequence[tuple[str, str]], hits: str,
               total: str) -> MetricSpec:
    """The plain mean of the accuracies of ``cells`` (each a (level, group)), over ``len(cells)`` cells."""
    weight = PERCENT / len(cells)
    terms = tuple(Ratio(cell_stat(lv, gr, hits), cell_stat(lv, gr, total), weight) for lv, gr in cells)
    return MetricSpec(level, group, metric, terms, n=len(cells))
