"""The predictions file of an ``extract`` run: checked as a whole, then read and completed a batch at a time.

The checks that span rows run once over the columns they need (every ``index`` unique and present, every row's
benchmark known), before any batch is decided. A file in mmbatch's own layout is then completed batch by batch as
it is read (:func:`mmbatch.extract.input_adapter.completed` works row by row there); another tool's file
(VLMEvalKit's, LLaVA's: a benchmark-sized xlsx or TSV) is completed whole first, since its ``g_index`` can pair rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from mmbatch.errors import BadInputError
from mmbatch.extract.input_adapter import check_predictions, completed, input_format
from mmbatch.table_batches import BatchedTable, read_batched


@dataclass(frozen=True)
class Predictions:
    """The rows to extract, batch by batch, completed as an mmbatch ``infer`` output."""

    table: BatchedTable
    """The file as read (completed already when :attr:`input_format` is ``vlmevalkit``)."""
    input_format: str
    """``mmbatch`` (mmbatch's own layout) or ``vlmevalkit`` (another tool's, completed whole)."""
    benchmarks: tuple[str, ...]
    """The benchmarks of the rows, in order of first appearance."""
    index: pl.Series
    """Every row's ``index``, in order."""
    path: Path
    benchmark: str | None
    model_name: str | None

    @property
    def count(self) -> int:
        """How many batches."""
        return self.table.count

    @property
    def height(self) -> int:
        """How many rows."""
        return self.table.height

    def batch(self, k: int) -> pl.DataFrame:
        """Batch ``k``, completed."""
        frame = self.table.batch(k)
        if self.input_format != "mmbatch":
            return frame
        return completed(frame, path=self.path, benchmark=self.benchmark, model_name=self.model_name)

    def rows_with_index(self, indices: list[int]) -> pl.DataFrame:
        """The completed rows whose ``index`` is among ``indices``, in file order (every column)."""
        wanted = pl.Series(indices, dtype=self.index.dtype).implode()
        return pl.concat([self.batch(k).filter(pl.col("index").is_in(wanted)) for k in range(self.count)],
                         how="vertical")


def open_predictions(path: Path, *, benchmark: str | None, model_name: str | None) -> Predictions:
    """Open and check a predictions file (any format ``extract`` reads).

    Raises:
        BadInputError: an unreadable file, no ``index`` or ``prediction`` column, duplicate or empty indices, a row
            without a benchmark and no ``--benchmark``.
    """
    table = read_batched(path)
    columns = table.columns
    index = check_predictions(columns, table.select("index")["index"] if "index" in columns else None, path=path)
    layout = input_format(columns)
    if layout != "mmbatch":  # another tool's layout: completed whole (read whole: a TSV or xlsx is)
        whole = table.whole if table.whole is not None else table.select(*columns)
        frame = completed(whole, path=path, benchmark=benchmark, model_name=model_name)
        table = BatchedTable(table.path, table.metadata, frame.schema, frame.height, table.rows_per_batch, frame)
        names = frame["benchmark"]
    else:
        names = _benchmarks(table, index, benchmark, path)
    return Predictions(table, layout, tuple(names.unique(maintain_order=True).to_list()), index, path, benchmark,
                       model_name)


def _benchmarks(table: BatchedTable, index: pl.Series, benchmark: str | None, path: Path) -> pl.Series:
    """Every row's benchmark in a file of mmbatch's layout (``--benchmark`` filling empty cells)."""
    names = table.select("benchmark")["benchmark"].cast(pl.String)
    if benchmark is not None:
        names = names.fill_null(benchmark.lower())
    if names.has_nulls():
        raise BadInputError("empty benchmark; pass --benchmark", path=path, index=index.filter(names.is_null())[0],
                            column="benchmark")
    return names
