"""The scorer a benchmark declares: how one partition of its scored rows becomes a :class:`ScorePlan`.

A scorer lives in its benchmark's package (``mmbatch/benchmarks/<name>/score.py``) and builds its plan from the
vocabulary of :mod:`mmbatch.scoring.plan`; the ``score`` and ``compare`` stages evaluate the plan.
"""

from __future__ import annotations

from typing import Protocol

import polars as pl

from mmbatch.scoring.plan import ScorePlan


class Scorer(Protocol):
    """Scores the rows of one benchmark."""

    def plan(self, rows: pl.DataFrame) -> ScorePlan:
        """The unit types and metrics of one (benchmark, model, split) partition.

        ``rows`` carry the input columns plus ``score`` (Float64 in [0, 1]), ``hit`` (Int64 0/1 for binary answer
        kinds, null for graded ones), ``unmatched``, ``failed`` (0/1) and ``g_index``; but not the rows' texts
        (:data:`mmbatch.score.hits_file.UNSCORED_TEXTS`: prompt, question, options, prediction, the judge's reply,
        ``extract_note``), which ``score`` copies into the hits file without reading them. A scorer that reads one
        names it in a ``text_columns`` attribute (a tuple of column names).
        """
        ...
