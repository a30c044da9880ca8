"""``mmbatch prepare --benchmark seedbench2``: the SEED-Bench-2 (and SEED-Bench-2-Plus) reader.

Input: ``SEED-Bench_v2_level1_2_3.json`` (or the SEED-Bench-2-Plus JSON) and ``--media-root``.

``data_id`` may be one file or a list: several images (``Multiple Images``), the images an interleaved question's
``<img>`` placeholders stand for (in order), the candidate images of the generation dimensions 25-27, or the 8
frames of a ``Video`` question. A list is written as a JSON list of paths: in ``video_path`` for ``Video`` rows, in
``image_path`` otherwise; level-3 questions (dimensions 25-27) are split by
:mod:`~mmbatch.benchmarks.seedbench.generation_rows` into input and option images. ``category`` is the dimension
name (for SEED-Bench-2-Plus, which has no dimension ids, ``question_image_type``), ``l2-category`` is ``subpart``
(the part: Single-Image & Text Comprehension, ...), and the source's ``level``, ``subpart``, ``data_source``,
``version`` and any other fields are carried as text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch.benchmarks.base import ReadOptions
from mmbatch.benchmarks.seedbench.dimensions import SEED2_DIMENSION_NAMES
from mmbatch.benchmarks.seedbench.generation_rows import generation_fields, is_generation_row
from mmbatch.benchmarks.seedbench.media_files import MediaChecker
from mmbatch.benchmarks.seedbench.read import read_seed_file
from mmbatch.benchmarks.seedbench.records import extra_fields, shared_fields
from mmbatch.errors import BadInputError

VIDEO_DATA_TYPE = "Video"
"""SEED-Bench-2's ``data_type`` of the video dimensions 19-22 (8 frame images each)."""

PLUS_CATEGORY_FIELD = "question_image_type"
"""SEED-Bench-2-Plus's category (chart, map, web) in place of a dimension id."""


@dataclass(frozen=True)
class SeedBench2Reader:
    """Reads SEED-Bench-2 / 2-Plus JSON with its images and video frames."""

    name: str = "seedbench2"
    """The ``benchmark`` column value."""

    def read(self, path: Path, options: ReadOptions) -> pl.DataFrame:
        """Prepared SEED-Bench-2 rows (without the prompt columns).

        Raises:
            BadInputError: a bad record or media file, naming the file, row index and column.
        """
        return read_seed_file(Path(path), options, benchmark=self.name, label="SEED-Bench-2",
                              default_names=SEED2_DIMENSION_NAMES, build_row=seed2_row)


def seed2_row(record: dict[str, Any], *, index: int, path: Path, media: MediaChecker,
              dimension_names: dict[int, str], benchmark: str) -> dict[str, Any]:
    """One prepared SEED-Bench-2 row, its media files checked."""
    row = shared_fields(record, index=index, path=path, benchmark=benchmark, dimension_names=dimension_names,
                        category_field=PLUS_CATEGORY_FIELD)
    row["l2-category"] = record.get("subpart") or row["data_type"]
    if is_generation_row(record):
        row.update(generation_fields(record, row["question_type_id"], index=index, path=path, media=media))
        return {**extra_fields(record), **row}
    column = "video_path" if row["data_type"] == VIDEO_DATA_TYPE else "image_path"
    data_id = record.get("data_id")
    if isinstance(data_id, list) and data_id and all(isinstance(d, str) and d for d in data_id):
        row[column] = media.images(data_id, index=index, column=column)
    elif isinstance(data_id, str) and data_id:
        row[column] = (media.video(data_id, index=index, column=column) if column == "video_path"
                       else media.image(data_id, index=index, column=column))
    else:
        raise BadInputError(f"'data_id' must be a path or a list of paths, not {data_id!r}", path=path,
                            index=index, column=column)
    return {**extra_fields(record), **row}


READER = SeedBench2Reader()
"""The reader registered as ``seedbench2`` in :data:`mmbatch.benchmarks.READERS`."""
