"""How :mod:`mmbatch.tableio` writes a Parquet stage file, and how other work runs while a file is written.

polars writes Parquet itself (pyarrow's writer cost as much CPU here, and its import alone 0.3-0.5 s of every
command), in row groups of ~16 MB, with the mmbatch metadata as the file's key-value metadata under
:data:`METADATA_KEY`. polars releases the GIL while it writes, so a caller's Python work (``prepare``'s image checks)
can run meanwhile: :func:`while_writing`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import polars as pl

METADATA_KEY = "mmbatch"
"""Key of the Parquet file's key-value metadata that holds the mmbatch metadata (JSON)."""
ROW_GROUP_BYTES = 16 << 20
"""Target in-memory size of one Parquet row group. polars' writer keeps several groups in flight: on a 425 MB
MMBench file its peak grew by ~370 MB with 64 MB groups, ~120 MB with 16 MB ones."""
PAYLOAD_COLUMNS = ("image",)
"""Columns of base64 payloads: a file holding one is compressed with lz4 rather than zstd (see
:func:`write_parquet`)."""
_OS_ERROR = re.compile(r"\(os error (\d+)\)")


def write_parquet(frame: pl.DataFrame, path: Path, metadata: dict[str, Any]) -> None:
    """Write ``frame`` and ``metadata`` to ``path`` with polars' own Parquet writer, in row groups of ~16 MB.

    polars compresses a file with one codec: zstd, except for files holding base64 payloads, where it took 0.86 s of
    CPU for 425 MB of JPEGs against 0.45 s for lz4 (or none), to save a third of their size; those files get lz4,
    which still shrinks their repeated text (prompts, options).

    Raises:
        OSError: the file system refused the write (full disk, file-size limit), with its error number.
    """
    row_bytes = frame.estimated_size() / max(frame.height, 1)
    rows_per_group = max(1, min(1 << 20, int(ROW_GROUP_BYTES / max(row_bytes, 1))))
    compression: Literal["lz4", "zstd"] = "lz4" if any(name in frame.columns for name in PAYLOAD_COLUMNS) else "zstd"
    try:
        frame.write_parquet(path, compression=compression, row_group_size=rows_per_group,
                            metadata={METADATA_KEY: json.dumps(metadata, ensure_ascii=False, default=str)})
    except pl.exceptions.ComputeError as exc:
        # The writer reports a refused write as a ComputeError naming "(os error N)": raised as the OSError it is,
        # so the CLI says it in one line like any other refused write.
        found = _OS_ERROR.search(str(exc))
        if found is None:
            raise
        number = int(found.group(1))
        raise OSError(number, os.strerror(number), str(path.parent)) from exc  # the temporary name means nothing


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
