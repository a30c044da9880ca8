"""``mmbatch prepare --benchmark seedbench``: the SEED-Bench-1 reader.

Input: the official ``SEED-Bench.json`` and ``--media-root`` (default: the JSON's folder), under which every
``data_id`` resolves (images of dimensions 1-9, videos of dimensions 10-12; layout in docs/benchmarks-formats.md).

Rows: ``index`` = position in the file (``question_id`` is kept but is not unique), ``category`` = dimension name
from the file's ``question_type``, ``l2-category`` = ``data_type`` (``image``/``video``), options ``A``-``D``,
``answer`` (letter), ``image_path`` or ``video_path``, and ``segment`` for dimensions 11 (seconds) and 12 (frames).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch.benchmarks.base import ReadOptions
from mmbatch.benchmarks.seedbench.dimensions import SEED1_DIMENSIONS
from mmbatch.benchmarks.seedbench.media_files import MediaChecker
from mmbatch.benchmarks.seedbench.questions import load_questions
from mmbatch.benchmarks.seedbench.records import extra_fields, shared_fields
from mmbatch.benchmarks.seedbench.rows import rows_to_frame
from mmbatch.errors import BadInputError
from mmbatch.progress import progress


def refuse_circular(path: Path, options: ReadOptions) -> None:
    """SEED questions are scored one by one: ``--circular`` is an error rather than silently ignored.

    Raises:
        BadInputError: ``--circular`` was given.
    """
    if options.circular:
        raise BadInputError("--circular is not part of the SEED-Bench protocol (each question is its own group)",
                            path=path)


def media_root_of(path: Path, options: ReadOptions) -> Path:
    """``--media-root``, by default the folder of the question JSON.

    Raises:
        BadInputError: it is not a folder.
    """
    root = Path(options.media_root) if options.media_root is not None else path.parent
    if not root.is_dir():
        raise BadInputError(f"--media-root {str(root)!r} is not a folder", path=path)
    return root


@dataclass(frozen=True)
class SeedBench1Reader:
    """Reads SEED-Bench-1 (``{"questions": [...], "question_type": {...}}``) with its images and videos."""

    name: str = "seedbench"
    """The ``benchmark`` column value."""

    def read(self, path: Path, options: ReadOptions) -> pl.DataFrame:
        """Prepared SEED-Bench-1 rows (without the prompt columns).

        Raises:
            BadInputError: a bad record or media file, naming the file, row index and column.
        """
        return read_seed_file(Path(path), options, benchmark=self.name, label="SEED-Bench-1",
                              default_names=SEED1_DIMENSIONS, build_row=seed1_row)


def read_seed_file(path: Path, options: ReadOptions, *, benchmark: str, label: str, default_names: dict[int, str],
                   build_row: Callable[..., dict[str, Any]]) -> pl.DataFrame:
    """The prepared rows of a SEED question file, each made by ``build_row`` with its media checked.

    Dimension names come from the file's ``question_type`` table, else from ``default_names``.
    """
    refuse_circular(path, options)
    records, names = load_questions(path)
    media = MediaChecker(media_root_of(path, options), path, options.max_pixels)
    records = records[: options.limit] if options.limit is not None else records
    rows: list[dict[str, Any]] = []
    with progress(f"checking {label} media", total=len(records), unit="questions") as bar:
        for index, record in enumerate(records):
            rows.append(build_row(record, index=index, path=path, media=media,
                                  dimension_names=names or default_names, benchmark=benchmark))
            bar.advance()
    return rows_to_frame(rows)


def seed1_row(record: dict[str, Any], *, index: int, path: Path, media: MediaChecker,
              dimension_names: dict[int, str], benchmark: str) -> dict[str, Any]:
    """One prepared SEED-Bench-1 row, its media file checked."""
    row = shared_fields(record, index=index, path=path, benchmark=benchmark, dimension_names=dimension_names)
    data_id = record.get("data_id")
    if not isinstance(data_id, str) or not data_id:
        raise BadInputError("missing or empty 'data_id'", path=path, index=index,
                            column="video_path" if row["data_type"] == "video" else "image_path")
    if row["data_type"] == "video":
        row["video_path"] = media.video(data_id, index=index)
    elif row["data_type"] == "image":
        row["image_path"] = media.image(data_id, index=index)
    else:
        raise BadInputError(f"data_type must be 'image' or 'video', not {row['data_type']!r}", path=path,
                            index=index, column="data_type")
    row["l2-category"] = row["data_type"]
    return {**extra_fields(record), **row}


READER = SeedBench1Reader()
"""The reader registered as ``seedbench`` in :data:`mmbatch.benchmarks.READERS`."""
