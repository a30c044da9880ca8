"""The scorer of each benchmark: how its hits are compared and how its rows become a :class:`ScorePlan`.

A scorer lives in its benchmark's package (``mmbatch/benchmarks/<name>/score.py``) and is registered here by name;
modules are imported only when a file holds that benchmark.
"""

from __future__ import annotations

import importlib
from typing import Protocol

import polars as pl

from mmbatch.errors import BadInputError
from mmbatch.score.plan import ScorePlan

SCORERS: dict[str, str] = {
    "mmbench": "mmbatch.benchmarks.mmbench.score:SCORER",
    "ccbench": "mmbatch.benchmarks.mmbench.score:SCORER",
    "mme": "mmbatch.benchmarks.mme.score:SCORER",
    "seedbench": "mmbatch.benchmarks.seedbench.score:SCORER",
    "seedbench2": "mmbatch.benchmarks.seedbench.score:SCORER_V2",
}
"""Benchmark name (lower case) -> ``module:attribute`` of its :class:`Scorer`."""


class Scorer(Protocol):
    """Scores the rows of one benchmark."""

    case_insensitive: bool
    """Whether ``extracted`` and ``answer`` are compared ignoring case (MME's Yes/No)."""
    submission_format: str
    """``mmbatch export --format`` that turns a file without answers into an official submission."""

    def group_key(self, frame: pl.DataFrame) -> pl.Expr:
        """The resampling group of a row when the file has no ``g_index`` column."""
        ...

    def plan(self, rows: pl.DataFrame) -> ScorePlan:
        """The unit types and metrics of one (benchmark, model, split) partition.

        ``rows`` carry the input columns plus ``hit``, ``unmatched``, ``failed`` (0/1) and ``g_index``.
        """
        ...


def get_scorer(benchmark: str) -> Scorer:
    """The scorer registered for ``benchmark`` (case-insensitive).

    Raises:
        BadInputError: no scorer has that name.
    """
    target = SCORERS.get(benchmark.lower())
    if target is None:
        raise BadInputError(
            f"no scorer for benchmark {benchmark!r}; known: {', '.join(SCORERS)} "
            "(an MMBench-style MCQ file is scored with --benchmark mmbench)",
            column="benchmark",
        )
    module_name, attribute = target.split(":")
    scorer: Scorer = getattr(importlib.import_module(module_name), attribute)
    return scorer
