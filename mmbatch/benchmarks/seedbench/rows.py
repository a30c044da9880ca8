"""Prepared SEED rows (dicts) -> a typed frame: declared columns get their declared type, the rest is text."""

from __future__ import annotations

from typing import Any

import polars as pl

from mmbatch.schema.columns import column_dtype
from mmbatch.schema.types import polars_type

FIRST_COLUMNS = (
    "index", "g_index", "benchmark", "question", "A", "B", "C", "D", "answer", "category", "l2-category",
    "image_path", "video_path", "question_id", "question_type_id", "data_type", "segment",
    "option_image_paths", "generation_prompt",
)
"""Column order of a prepared SEED file; extra source fields follow, in the order first met."""


def rows_to_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """A frame of ``rows`` with every column typed; a column no row fills is left out.

    Columns in :data:`FIRST_COLUMNS` come first; other keys follow in the order they first appear.
    """
    names: list[str] = []
    for row in rows:
        names += [key for key in row if key not in names]
    present = [c for c in FIRST_COLUMNS if c in names] + [c for c in names if c not in FIRST_COLUMNS]
    columns = {}
    for name in present:
        values = [row.get(name) for row in rows]
        if all(value is None for value in values):
            continue
        dtype = column_dtype(name) if name not in ("A", "B", "C", "D") else "string"
        columns[name] = pl.Series(name, values, dtype=polars_type(dtype or "string"))
    return pl.DataFrame(columns)
