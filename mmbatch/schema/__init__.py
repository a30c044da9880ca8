"""The one declaration of the stage files' columns, and what is derived from it."""

from mmbatch.schema.columns import (
    OPTION_LETTERS,
    STAGES,
    Column,
    Stage,
    column_dtype,
    option_columns,
)

__all__ = ["OPTION_LETTERS", "STAGES", "Column", "Stage", "column_dtype", "option_columns"]
