"""The scorer of each benchmark: how its rows become a :class:`ScorePlan`.

A scorer lives in its benchmark's package (``mmbatch/benchmarks/<name>/score.py``) and its benchmark's declaration
names it; modules are imported only when a file holds that benchmark.
"""

from __future__ import annotations

from typing import Protocol

import polars as pl

from mmbatch.benchmarks.declaration import load
from mmbatch.benchmarks.registry import benchmark_names, find_benchmark
from mmbatch.errors import BadInputError
from mmbatch.score.plan import ScorePlan


class Scorer(Protocol):
    """Scores the rows of one benchmark."""

    def plan(self, rows: pl.DataFrame) -> ScorePlan:
        """The unit types and metrics of one (benchmark, model, split) partition.

        ``rows`` carry the input columns plus ``hit``, ``unmatched``, ``failed`` (0/1) and ``g_index``.
        """
        ...


def get_scorer(benchmark: str) -> Scorer:
    """The scorer of ``benchmark`` (a name or alias, any case).

    Raises:
        BadInputError: no benchmark has that name.
    """
    declared = find_benchmark(benchmark)
    if declared is None:
        raise BadInputError(
            f"no scorer for benchmark {benchmark!r}; known: {', '.join(benchmark_names())} "
            "(an MMBench-style MCQ file is scored with --benchmark mmbench)",
            column="benchmark",
        )
    scorer: Scorer = load(declared.scorer)
    return scorer
