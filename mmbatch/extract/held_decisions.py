"""Every row's decision between ``extract``'s two passes over its file, held batch by batch and compactly.

What the rules, the judge and CLIP decided for each row (the columns of :data:`mmbatch.extract.decisions.SCHEMA` but
``index``) is all ``extract`` holds of a file between reading it to decide and reading it again to write. A batch
keeps only the columns it has a value in: a column of nulls still costs polars 16 bytes a row, and a run without a
judge has no ``judge_model``, ``judge_raw``, ``error`` or ``choice_similarities`` value at all (~55 MiB at a million
rows, more than the decisions themselves).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import accumulate, pairwise

import polars as pl

from mmbatch.answers.frames import nulls
from mmbatch.extract.decisions import SCHEMA, last_per_index, with_updates

_ROW, _AT = "\x1frow", "\x1fat"
"""Columns ``updated`` makes while it works: an update's row in the file, and in the updates."""
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
        """These decisions with the rows of ``updates`` (keyed by ``index``, the later copy of an index winning) put
        in their place; ``index``: every row's ``index``, in file order."""
        if updates.height == 0:
            return self
        updates = last_per_index(updates)
        changed, offset = [], 0
        batches = _by_batch(index, updates, [held.height for held in self._batches])
        for k, (held, mine) in enumerate(zip(self._batches, batches, strict=True)):
            if mine.height:
                held = _without_empty_columns(with_updates(self.batch(k), index.slice(offset, held.height), mine))
            changed.append(held)
            offset += held.height
        return HeldDecisions(changed)


def _by_batch(index: pl.Series, updates: pl.DataFrame, heights: Sequence[int]) -> Iterator[pl.DataFrame]:
    """The rows of ``updates`` (one per index) that fall in each batch of ``heights`` rows of ``index``, in turn.

    Each update is placed once (matching all of them against each batch in turn took 5 s when a million rows were
    updated); updates of every row in the file's order (a rerun over the finished output of a file whose rows are all
    the judge's, as ``extract`` writes them) need no join (one over a million rows held ~100 MiB more).
    """
    offsets = list(accumulate(heights, initial=0))
    if updates["index"].equals(index):
        yield from (updates.slice(start, end - start) for start, end in pairwise(offsets))
        return
    # where each update goes (its row in the file) and where it is (its row in ``updates``): two small columns,
    # not a copy of the updates in file order
    located = index.to_frame("index").with_row_index(_ROW).join(
        updates.select("index").with_row_index(_AT), on="index", how="inner", maintain_order="left")
    for start, end in pairwise(offsets):
        first, last = (int(located[_ROW].search_sorted(bound, side="left")) for bound in (start, end))
        yield updates[located[_AT].slice(first, last - first)]


def _without_empty_columns(batch: pl.DataFrame) -> pl.DataFrame:
    # extract_method is always kept: a frame of no columns has no rows, and the batch's height must stay
    return batch.select(name for name in batch.columns
                        if name == "extract_method" or batch[name].null_count() < batch.height)
