"""Declared logical column types as polars types, and text columns given their declared types.

This is the bottom layer of reading: :mod:`mmbatch.tableio` types what it reads with :func:`restore_types`, and
:mod:`mmbatch.schema.validate` checks frames against :func:`polars_type`; neither of them is imported here.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from mmbatch.errors import BadInputError
from mmbatch.schema.columns import column_dtype

_POLARS_TYPES: dict[str, pl.DataType] = {
    "int64": pl.Int64(),
    "float64": pl.Float64(),
    "string": pl.String(),
    "list[float64]": pl.List(pl.Float64()),
    "list[int64]": pl.List(pl.Int64()),
}


def polars_type(dtype: str) -> pl.DataType:
    """The polars type of a declared logical type."""
    return _POLARS_TYPES[dtype]


def restore_types(frame: pl.DataFrame, *, path: str | Path | None = None) -> pl.DataFrame:
    """Give text columns their declared types; empty text becomes null.

    Raises:
        BadInputError: naming the first row ``index`` and column whose value does not fit the declared type.
    """
    frame = frame.with_columns(pl.col(pl.String).replace("", None))
    casts = []
    for name in frame.columns:
        dtype = column_dtype(name)
        if dtype is None or dtype == "string" or frame.schema[name] != pl.String:
            continue
        casts.append(_cast_column(frame, name, dtype, path))
    return frame.with_columns(casts) if casts else frame


def _cast_column(frame: pl.DataFrame, name: str, dtype: str, path: str | Path | None) -> pl.Series:
    text = frame[name]
    if dtype.startswith("list["):
        cast = text.str.json_decode(polars_type(dtype)) if text.null_count() < len(text) else text.cast(
            polars_type(dtype))
        return cast
    stripped = text.str.strip_chars()
    if dtype == "int64":
        # Integers written by pandas/xlsx may come as "12.0".
        cast = stripped.str.replace(r"\.0+$", "").cast(pl.Int64, strict=False)
    else:
        cast = stripped.cast(pl.Float64, strict=False)
    bad = cast.is_null() & text.is_not_null()
    if bad.any():
        row = int(bad.arg_max() or 0)
        index = frame["index"][row] if "index" in frame.columns and name != "index" else f"#{row}"
        raise BadInputError(f"'{text[row]}' is not a valid {dtype} value", path=path, index=index, column=name)
    return cast
