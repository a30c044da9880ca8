"""Every row's decision between ``extract``'s two passes over its file, held batch by batch and compactly.

What the rules, the judge and CLIP decided for each row (the columns of :data:`mmbatch.extract.decisions.SCHEMA` but
``index``) is all ``extract`` holds of a file between reading it to decide and reading it again to write. A batch
keeps only the columns it has a value in: a column of nulls still costs polars 16 bytes a row, and a run without a
judge has no ``judge_model``, ``judge_raw``, ``error`` or ``choice_similarities`` value at all (~55 MiB at a million
rows, more than the decisions themselves).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from mmbatch.answers.frames import nulls
from mmbatch.extract.decisions import SCHEMA, with_updates

DECIDED = {name: dtype for name, dtype in SCHEMA.items() if name != "index"}
"""The columns of a decision, in order."""


class HeldDecisions:
    """The decisions of a file's rows, batch ``k`` of them for batch ``k`` of the file."""

    def __init__(self, batches: Sequence[pl.DataFrame]) -> None:
        """``batches``: each batch's decisions (every column of :data:`DECIDED`), in file order."""
        self._batches = [_without_empty_columns(batch) for batch in batches]

    def append(self, batch: pl.DataFrame) -> None:
        """Hold the decisions of the file's next batch (every column of :data:`DECIDED`)."""
        self._batches.append(_without_empty_columns(batch))

    @property
    def height(self) -> int:
        """Rows decided."""
        return sum(batch.height for batch in self._batches)

    def batch(self, k: int) -> pl.DataFrame:
        """Batch ``k``'s decisions with every column of :data:`DECIDED`."""
        held = self._batches[k]
        return pl.DataFrame([held[name] if name in held.columns else nulls(name, held.height, dtype)
                             for name, dtype in DECIDED.items()])

    def column(self, name: str) -> pl.Series:
        """One column over every row (chunked by batch: nothing is copied)."""
        dtype = DECIDED[name]
        parts = [held[name] if name in held.columns else nulls(name, held.height, dtype) for held in self._batches]
        return pl.concat(parts) if parts else pl.Series(name, [], dtype=dtype)

    def has_values_in(self, name: str) -> bool:
        """Whether some row has a value in the column ``name``."""
        return any(name in held.columns for held in self._batches)

    def updated(self, index: pl.Series, updates: pl.DataFrame) -> HeldDecisions:
        """These decisions with the rows of ``updates`` (keyed by ``index``, :func:`with_updates`) put in their place;
        ``index``: every row's ``index``, in file order."""
        if updates.height == 0:
            return self
        changed, offset = [], 0
        for k, held in enumerate(self._batches):
            rows = index.slice(offset, held.height)
            offset += held.height
            changed.append(with_updates(self.batch(k), rows, updates) if rows.is_in(updates["index"].implode()).any()
                           else held)
        return HeldDecisions(changed)


def _without_empty_columns(batch: pl.DataFrame) -> pl.DataFrame:
    # extract_method is always kept: a frame of no columns has no rows, and the batch's height must stay
    return batch.select(name for name in batch.columns
                        if name == "extract_method" or batch[name].null_count() < batch.height)
