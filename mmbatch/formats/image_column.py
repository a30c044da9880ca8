"""An ``image`` column stored as bytes, as Hugging Face datasets store images, turned into the prepared text form.

A prepared file holds each image as base64 text (docs/rules.md §1). Parquet files from elsewhere hold them
as bytes: a plain ``Binary`` column, the ``datasets`` ``Image`` feature (a struct of ``bytes`` and ``path``), or a
list of either for rows with several images. These are encoded to base64 (a list as the JSON list-string of several
payloads), so every later check and the infer stage see the one form they know. Row references stored as integers
become their text.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from mmbatch.errors import BadInputError

IMAGE = "image"


def image_column_as_text(frame: pl.DataFrame, source: Path) -> pl.DataFrame:
    """``frame`` with its ``image`` column as text (unchanged when it is text already or absent).

    Raises:
        BadInputError: an ``image`` column of another type (a struct without ``bytes``, floats, booleans), naming
            the type.
    """
    if IMAGE not in frame.columns or frame.schema[IMAGE] == pl.String:
        return frame
    dtype = frame.schema[IMAGE]
    if isinstance(dtype, pl.List):
        stored = dtype.inner if isinstance(dtype.inner, pl.DataType) else dtype.inner()  # a class: no parameters
        inner = _payload(pl.element(), stored, source)
        items = pl.col(IMAGE).list.eval(inner)
        text = pl.when(items.list.len() > 0).then(
            pl.concat_str(pl.lit('["'), items.list.join('", "'), pl.lit('"]')))
        return frame.with_columns(text.alias(IMAGE))
    return frame.with_columns(_payload(pl.col(IMAGE), dtype, source).alias(IMAGE))


def _payload(column: pl.Expr, dtype: pl.DataType, source: Path) -> pl.Expr:
    """One image as base64 text, from the stored type ``dtype`` of ``column``."""
    if dtype == pl.Binary:
        return column.bin.encode("base64")
    if isinstance(dtype, pl.Struct) and any(field.name == "bytes" and field.dtype == pl.Binary
                                            for field in dtype.fields):
        # datasets' Image feature: {"bytes", "path"}; a row with a path but no bytes names a file we do not have,
        # so it is left empty and refused as a row without an image.
        return column.struct.field("bytes").bin.encode("base64")
    if dtype == pl.String:
        return column
    if dtype.is_integer():
        return column.cast(pl.String)  # a reference to another row's index
    raise BadInputError(f"the image column holds {dtype} values; expected base64 text, image bytes (Binary), a "
                        "Hugging Face Image struct {bytes, path}, or a list of these", path=source, column=IMAGE)
