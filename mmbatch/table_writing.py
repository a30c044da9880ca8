"""How :mod:`mmbatch.tableio` writes a stage file: from batches made on demand, so that a stage holds one batch of
its output at a time, never the whole table; and how other work runs while a file is written.

polars writes the file itself (pyarrow's writer cost as much CPU here, and its import alone 0.3-0.5 s of every
command). The batches go to its streaming writer as deferred frames (``pl.defer``): it asks for each when it is ready
for it, in order, and writes row groups of ~16 MB as they fill. The mmbatch metadata is the Parquet file's key-value
metadata under :data:`METADATA_KEY`, asked for once every batch is written (a stage records totals it learns while
making the batches: the digest of the row scores). polars releases the GIL while it writes, so a caller's Python work
(``prepare``'s image checks) can run meanwhile: :func:`while_writing`.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal

import polars as pl

METADATA_KEY = "mmbatch"
"""Key of the Parquet file's key-value metadata that holds the mmbatch metadata (JSON)."""
ROW_GROUP_BYTES = 16 << 20
"""Target in-memory size of one Parquet row group. polars' writer keeps several groups in flight: on a 425 MB
MMBench file its peak grew by ~370 MB with 64 MB groups, ~120 MB with 16 MB ones."""
PAYLOAD_COLUMNS = ("image",)
"""Columns of base64 payloads: a file holding one is written uncompressed rather than with zstd (see
:func:`write_parquet`)."""
ZSTD_LEVEL = 1
"""zstd's fastest level: against polars' default (3) it took 15 % less CPU to write a million extracted MMBench rows
and 26 % less for TextVQA's (1.15 vs 1.35 s, 2.17 vs 2.93 s) for files 5-9 % larger."""
_OS_ERROR = re.compile(r"\(os error (\d+)\)")


@dataclass(frozen=True)
class Batches:
    """A table to write as ``count`` frames, batch ``k`` made by ``make(k)`` when the writer gets to it.

    Every batch has the columns and types of batch 0, and the rows are batch 0's, then batch 1's, and so on.
    ``make`` is called once per batch (the writer checks it), from the writer's threads: a stage may total what it sees
    in the batches, under a lock and in any order.
    """

    count: int
    """How many batches (at least 1; a batch may have no rows)."""
    make: Callable[[int], pl.DataFrame]
    """Batch ``k``, for ``k`` in ``range(count)``."""

    @staticmethod
    def of(frame: pl.DataFrame) -> Batches:
        """A frame already in memory, as one batch."""
        return Batches(1, lambda _: frame)

    def each(self, change: Callable[[pl.DataFrame], pl.DataFrame]) -> Batches:
        """These batches with ``change`` applied to each as it is made."""
        return Batches(self.count, lambda k: change(self.make(k)))


@dataclass(frozen=True)
class _Stream:
    """Batches as one lazy frame for polars' streaming writers, and batch 0 (made first: its schema is the table's,
    and its size per row sets the row groups)."""

    lazy: pl.LazyFrame
    first: pl.DataFrame
    made: list[int]
    """How often the writer asked for each batch (batch 0: made beforehand)."""

    @staticmethod
    def of(batches: Batches) -> _Stream:
        if batches.count < 1:
            raise ValueError("a table is written from at least one batch")
        first = batches.make(0)
        made = [1] + [0] * (batches.count - 1)
        asked = threading.Lock()

        def batch(k: int) -> pl.DataFrame:
            with asked:
                made[k] += 1
                if made[k] > 1:  # a stage totals what it sees in each batch: twice would count the rows twice
                    raise RuntimeError(f"the writer asked for batch {k} of {batches.count} twice")
            return batches.make(k)

        later = [pl.defer(partial(batch, k), schema=first.schema) for k in range(1, batches.count)]
        lazy = pl.concat([first.lazy(), *later], how="vertical") if later else first.lazy()
        return _Stream(lazy, first, made)

    def check_all_made(self) -> None:
        """Raise when the writer did not ask for every batch exactly once (a bug, never a file to keep).

        Raises:
            RuntimeError: naming the first batch asked for another number of times.
        """
        wrong = next((k for k, times in enumerate(self.made) if times != 1), None)
        if wrong is not None:
            raise RuntimeError(f"the writer asked for batch {wrong} of {len(self.made)} {self.made[wrong]} times")


def write_parquet(batches: Batches, path: Path, metadata: Callable[[], dict[str, Any]]) -> None:
    """Write the batches and ``metadata()`` (asked for once they are all written) to ``path`` with polars' own
    Parquet writer, in row groups of ~16 MB.

    polars compresses a file with one codec: zstd at its fastest level (:data:`ZSTD_LEVEL`), except for files holding
    base64 payloads, where it took 0.86 s of CPU for 425 MB of JPEGs to save a quarter of their size. Those are written
    uncompressed: lz4, used before, shrank nothing (base64 of compressed pictures holds no repeats; its framing made
    the file 0.2 % larger), and ``prepare`` of a 425 MB MMBench TSV took 2.38-2.55 s without it against 2.55-3.77 s.

    Raises:
        OSError: the file system refused the write (full disk, file-size limit), with its error number.
    """
    stream = _Stream.of(batches)
    row_bytes = stream.first.estimated_size() / max(stream.first.height, 1)
    rows_per_group = max(1, min(1 << 20, int(ROW_GROUP_BYTES / max(row_bytes, 1))))
    payloads = any(name in stream.first.columns for name in PAYLOAD_COLUMNS)
    compression: Literal["uncompressed", "zstd"] = "uncompressed" if payloads else "zstd"
    level = None if payloads else ZSTD_LEVEL
    failures: list[Exception] = []

    def key_values(_: object) -> dict[str, str]:
        # The writer asks when it writes the footer, after every row; what this raised would reach the caller as a
        # ComputeError naming nothing useful, so it is kept and raised as it is once the writer returns.
        try:
            return {METADATA_KEY: json.dumps(metadata(), ensure_ascii=False, default=str)}
        except Exception as exc:  # raised again below, once the writer returns
            failures.append(exc)
            return {}

    try:
        stream.lazy.sink_parquet(path, compression=compression, compression_level=level, row_group_size=rows_per_group,
                                 metadata=key_values)
    except pl.exceptions.ComputeError as exc:
        raise _os_error(exc, path) from exc
    if failures:
        raise failures[0]
    stream.check_all_made()


def write_tsv(batches: Batches, path: Path) -> None:
    """Write the batches (text and numbers only: list columns already as JSON text) as one TSV file.

    Raises:
        OSError: the file system refused the write, with its error number.
    """
    stream = _Stream.of(batches)
    try:
        stream.lazy.sink_csv(path, separator="\t", quote_style="necessary", null_value="")
    except pl.exceptions.ComputeError as exc:
        raise _os_error(exc, path) from exc
    stream.check_all_made()


def _os_error(exc: pl.exceptions.ComputeError, path: Path) -> Exception:
    """The writer reports a refused write as a ComputeError naming "(os error N)": that as the OSError it is, so the
    CLI says it in one line like any other refused write; any other error as it came."""
    found = _OS_ERROR.search(str(exc))
    if found is None:
        return exc
    number = int(found.group(1))
    return OSError(number, os.strerror(number), str(path.parent))  # the temporary name means nothing


def while_writing(write: Callable[[], None], alongside: Callable[[], None] | None) -> None:
    """``write()`` in a worker thread while ``alongside()`` runs in this one (``write()`` alone when it is None).

    Both always finish before this returns or raises. The first failure is raised: that of ``alongside`` when both
    fail (it names the input's problem; the write's would only follow from it).
    """
    if alongside is None:
        write()
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mmbatch-write") as pool:
        writing = pool.submit(write)
        try:
            alongside()
        finally:
            failure = writing.exception()  # waits for the writer: the caller removes the temporary file only after
    if failure is not None:
        raise failure
