"""Facts about rows that several stages need, each defined once: circular offsets and ``g_index`` derivations.

Every stage that has to know which rows form a group (``extract`` for a foreign file, ``import``, ``score`` for a
file without ``g_index``) calls :func:`group_index` with the rule its benchmark declares
(:attr:`mmbatch.benchmarks.declaration.Benchmark.group_rule`), so the three can never disagree.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from mmbatch.benchmarks.declaration import GroupRule
from mmbatch.errors import BadInputError

CIRCULAR_OFFSET = 1_000_000
"""Circular copy k of question i has index i + k * 1e6 (protocols.md §1)."""
IMAGE_COLUMNS = ("image_path", "image_name")
"""Columns that name a row's image, in order of preference, for the ``image-pair`` rule."""


def group_index(columns: list[str], rule: GroupRule, *, path: Path | None = None) -> pl.Expr:
    """The ``g_index`` of a frame with these ``columns`` under ``rule`` (an Int64 expression named ``g_index``).

    Raises:
        BadInputError: ``image-pair`` rows without an image column, naming the file.
    """
    if rule == "circular-offset":
        expression = pl.col("index") % CIRCULAR_OFFSET
    elif rule == "row":
        expression = pl.col("index")
    else:
        image = next((name for name in IMAGE_COLUMNS if name in columns), None)
        if image is None:
            raise BadInputError("rows of a yes/no benchmark need `image_path` or `image_name` (or `g_index`) to pair "
                                "the questions of each image", path=path, column="g_index")
        keys = [name for name in ("category", image) if name in columns]
        expression = pl.col("index").min().over(keys)
    return expression.cast(pl.Int64).alias("g_index")


def circular_copy(index: int) -> int:
    """Which circular copy a row is: 0 for the original question, k for ``index = question + k * 1e6``."""
    return index // CIRCULAR_OFFSET
