"""A stage file read a batch of rows at a time, so that a stage holds one batch of the table, not all of it.

A Parquet file is scanned: each batch reads only its own rows (polars skips the row groups before them). A file
that fits in one batch, and every TSV or xlsx file (read as a whole: their readers check the whole text), is read
once with :func:`mmbatch.tableio.read_table` and kept, so a small file costs what it always did. Either way batch
``k`` holds the same rows with the same types, and the batches in order are the file.

Batches are sized by cells rather than rows: polars holds each text cell as a 16-byte view (the characters of
repeated texts are shared), so a batch of :data:`BATCH_CELLS` cells is ~32 MB of views whatever the width; rows with
large cells (base64 payloads) get fewer rows per batch by :data:`BATCH_BYTES`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch.errors import BadInputError
from mmbatch.table_writing import Batches
from mmbatch.tableio import Table, file_format, read_metadata, read_table

BATCH_CELLS = 2_000_000
"""Cells per batch (rows x columns): 125,000 rows of a 16-column MMBench predictions file."""
BATCH_BYTES = 64 << 20
"""Most bytes per batch, as polars estimates them from the first rows (payload columns make a row large)."""
PROBE_ROWS = 1_000
"""Rows read to estimate a row's size."""


@dataclass
class BatchedTable:
    """A stage file, readable batch by batch (see the module docstring)."""

    path: Path
    """The file."""
    metadata: dict[str, Any]
    """Its mmbatch metadata."""
    schema: pl.Schema
    """Its columns and their types."""
    height: int
    """Its rows."""
    rows_per_batch: int
    """Rows in each batch but the last."""
    whole: pl.DataFrame | None = field(default=None, repr=False)
    """The table itself when it is held in memory (one batch, or a TSV/xlsx file); None when batches are scanned."""
    version: tuple[int, int, int] | None = field(default=None, repr=False)
    """The scanned file's size, modification time and inode when it was opened: a batch is read only from that file
    (the batches of a file replaced or written to meanwhile would not be one table)."""

    @property
    def columns(self) -> list[str]:
        """The column names, in order."""
        return list(self.schema)

    @property
    def count(self) -> int:
        """How many batches (at least one, which may have no rows)."""
        return max(1, -(-self.height // self.rows_per_batch))

    def batch(self, k: int, columns: Sequence[str] | None = None) -> pl.DataFrame:
        """Batch ``k``: rows ``k * rows_per_batch`` onwards, ``rows_per_batch`` of them (fewer in the last); only
        ``columns`` when given (in that order)."""
        offset = k * self.rows_per_batch
        if self.whole is not None:
            rows = self.whole.slice(offset, self.rows_per_batch)
            return rows if columns is None else rows.select(columns)
        scan = _scan(self.path)
        return self._collect((scan if columns is None else scan.select(columns)).slice(offset, self.rows_per_batch))

    def batches(self) -> Iterator[pl.DataFrame]:
        """Every batch, in order."""
        return (self.batch(k) for k in range(self.count))

    def as_batches(self) -> Batches:
        """The file as :class:`~mmbatch.table_writing.Batches` (batch ``k`` read when asked for)."""
        return Batches(self.count, self.batch)

    def select(self, *names: str) -> pl.DataFrame:
        """Whole columns (those present among ``names``), read without the others."""
        present = [name for name in names if name in self.schema]
        if self.whole is not None:
            return self.whole.select(present)
        return self._collect(_scan(self.path).select(present))

    def select_contiguous(self, *names: str) -> pl.DataFrame:
        """:meth:`select`, each column in one piece, for a frame that will be changed column by column.

        A column read from Parquet comes in one chunk per row group, and once a frame holds columns chunked
        differently (a column made since beside those read), polars puts every column into one chunk, copying all of
        them, at the next change of the frame: +177 MiB for the scored columns of a million MMBench rows. Put in one
        piece here, column after column as they are read, the copy is made once, before any other work (its peak,
        twice the columns, stays below the stage's later one: a million TextVQA rows, 314 MiB against 449 MiB).
        """
        read = self.select(*names)
        return pl.DataFrame([read.drop_in_place(name).rechunk() for name in list(read.columns)])

    def _collect(self, query: pl.LazyFrame) -> pl.DataFrame:
        if self.version is not None and _version(self.path) != self.version:
            raise BadInputError("the file changed while it was being read (replaced or written to by something "
                                "else): run again once nothing writes it", path=self.path)
        try:
            return query.collect()
        except Exception as exc:  # polars raises many types for a damaged file
            raise BadInputError(f"not a readable Parquet file ({str(exc).strip().splitlines()[0]})",
                                path=self.path) from exc


def read_ahead(make: Callable[[int], pl.DataFrame], count: int) -> Iterator[pl.DataFrame]:
    """``make(0)``, ``make(1)``, ... ``make(count - 1)``, each made in a worker thread while the caller works on the one
    before: polars reads and decodes without the GIL, so the next batch's reading overlaps this one's work (one batch
    more is held). ``make`` runs outside the caller's context (its context variables are not set there): reading a
    batch needs none."""
    if count <= 1:
        yield from (make(k) for k in range(count))
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mmbatch-read") as pool:
        coming = pool.submit(make, 0)
        for k in range(count):
            batch = coming.result()
            if k + 1 < count:
                coming = pool.submit(make, k + 1)
            yield batch


def read_batched(path: str | Path, *, cells: int | None = None) -> BatchedTable:
    """Open a stage file for reading by batches of about ``cells`` cells (default :data:`BATCH_CELLS`).

    Raises:
        BadInputError: as :func:`mmbatch.tableio.read_table` (missing, empty, unreadable, badly typed).
    """
    path = Path(path)
    cells = BATCH_CELLS if cells is None else cells
    if file_format(path) != ".parquet" or not path.is_file() or path.stat().st_size == 0:
        return _held(read_table(path), path, cells)  # read_table says what is wrong with a missing or empty file
    version = _version(path)
    scan = _scan(path)
    try:
        schema = scan.collect_schema()
        height = int(scan.select(pl.len()).collect().item())
    except Exception as exc:  # polars raises many types for a damaged file
        raise BadInputError(f"not a readable Parquet file ({str(exc).strip().splitlines()[0]})", path=path) from exc
    if height <= _rows_per_batch(len(schema), None, cells):  # one batch: read once, as stages always read
        return _held(read_table(path), path, cells)
    rows = _rows_per_batch(len(schema), scan.head(PROBE_ROWS).collect(), cells)
    if height <= rows:
        return _held(read_table(path), path, cells)
    return BatchedTable(path, read_metadata(path), schema, height, rows, version=version)


def _held(table: Table, path: Path, cells: int) -> BatchedTable:
    frame = table.frame
    rows = _rows_per_batch(frame.width, frame.head(PROBE_ROWS), cells)
    return BatchedTable(path, table.metadata, frame.schema, frame.height, rows, whole=frame)


def _rows_per_batch(width: int, probe: pl.DataFrame | None, cells: int) -> int:
    rows = max(1, cells // max(width, 1))
    if probe is not None and probe.height:
        row_bytes = probe.estimated_size() / probe.height
        rows = min(rows, max(1, int(BATCH_BYTES / max(row_bytes, 1))))
    return rows


def _version(path: Path) -> tuple[int, int, int]:
    try:
        found = path.stat()
    except OSError as exc:
        raise BadInputError(f"the file went away while it was being read ({exc.strerror or exc})", path=path) from exc
    return found.st_size, found.st_mtime_ns, found.st_ino


def _scan(path: Path) -> pl.LazyFrame:
    return pl.scan_parquet(path, glob=False)  # a path is a name: "x[12].parquet" must not match x1.parquet
