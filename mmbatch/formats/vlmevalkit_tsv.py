"""VLMEvalKit's table format (TSV, Parquet or xlsx) read into prepared rows: the neutral reader every
VLMEvalKit-format benchmark uses (MMStar, and MMBench's reader builds on it).

The layout (docs/benchmarks-formats.md) is read as it is: ``index``, ``question``, base64 images, short references to
another row's image, list-strings of several images, or ``image_path`` files under the media root; every other
column is carried through untouched and text stays text. Each row is its own group (``g_index = index``) unless the
file has ``g_index``. A benchmark's own checks (option letters, reference lists) come on top: its answer kind checks
the ``answer`` cells (:meth:`mmbatch.answers.kind.AnswerKind.check_answers`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from mmbatch.benchmarks.base import ReadOptions
from mmbatch.console import error_console
from mmbatch.errors import BadInputError
from mmbatch.formats.images import ImageColumnCheck, check_image_column, reference_targets
from mmbatch.formats.media_paths import check_image_paths
from mmbatch.formats.vlmevalkit_rows import check_answer_letters, check_columns, check_rows, typed_rows
from mmbatch.media import MAX_REFERENCE_LENGTH
from mmbatch.progress import progress
from mmbatch.tableio import read_raw

STATUS_BYTES = 64 << 20
"""Files at least this large get a "reading ..." line (a spinner on a terminal) before the parse starts."""

DESCRIPTIVE_COLUMNS = ("hint", "answer", "category", "l2-category", "split")
"""Declared columns every prepared VLMEvalKit-format file has (empty when the source lacks them)."""


@dataclass(frozen=True)
class VlmevalkitReader:
    """Reads a VLMEvalKit-format benchmark file; ``option_answers`` for multiple-choice files.

    A benchmark package names one as its reader: ``READER = VlmevalkitReader("mmstar", option_answers=True)``.
    """

    name: str
    """The ``benchmark`` column value."""
    option_answers: bool = False
    """Whether each answer must be one of its row's option letters (multiple choice)."""

    def read(self, path: Path, options: ReadOptions) -> pl.DataFrame:
        """Read and check the rows of ``path``; ``options.circular`` False keeps the rows with ``index == g_index``.

        Raises:
            BadInputError: naming the file, the row ``index`` and the column of the first problem found.
        """
        frame = read_checked(Path(path), option_answers=self.option_answers)
        if "g_index" in frame.columns:
            frame = frame.with_columns(pl.col("g_index").cast(pl.Int64).fill_null(pl.col("index")))
        else:
            frame = frame.insert_column(frame.columns.index("index") + 1, frame["index"].alias("g_index"))
        frame = limited(frame, options)
        check_media(frame, Path(path), options)
        return with_declared_columns(frame, self.name)


def read_checked(source: Path, *, option_answers: bool) -> pl.DataFrame:
    """The rows of ``source``, typed and checked (required columns, unique index, question, image, answers).

    Raises:
        BadInputError: a folder, or the first problem found, naming the row and column.
    """
    if source.is_dir():
        raise BadInputError("expected a VLMEvalKit-format .tsv, .parquet or .xlsx file, got a folder", path=source)
    frame = read_with_status(source)
    check_columns(frame, source)
    frame = typed_rows(frame, source)
    check_rows(frame, source)
    if option_answers:
        check_answer_letters(frame, source)
    return frame


def limited(frame: pl.DataFrame, options: ReadOptions) -> pl.DataFrame:
    """``--limit`` (the first groups, every copy kept) and ``--no-circular`` (the rows with ``index == g_index``)."""
    if options.limit is not None:
        frame = first_groups(frame, options.limit)
    if options.circular is False:
        frame = frame.filter(pl.col("index") == pl.col("g_index"))
    return frame


def check_media(frame: pl.DataFrame, source: Path, options: ReadOptions) -> None:
    """The ``image`` payloads and ``image_path`` files decode, within the pixel limit.

    The payload checks change no row, so when ``options.deferred_checks`` is given they are left there for
    ``prepare`` to run while it writes the file; otherwise they run now.

    Raises:
        BadInputError: naming the first bad picture's row and column.
    """
    if "image" in frame.columns:
        images = _image_checks(frame, ImageColumnCheck(source=source, max_pixels=options.max_pixels))
        if options.deferred_checks is None:
            images()
        else:
            options.deferred_checks.add(images)
    if "image_path" in frame.columns:
        check_image_paths(frame, options.media_root or source.parent, source, options.max_pixels)


def _image_checks(frame: pl.DataFrame, check: ImageColumnCheck) -> Callable[[], None]:
    """The checks of every payload and reference of ``frame["image"]``, with a progress bar, to run now or later."""
    def run() -> None:
        payloads = int((frame["image"].str.len_bytes() > MAX_REFERENCE_LENGTH).sum())
        with progress("checking images", total=payloads, unit="images") as bar:
            check_image_column(frame, check, bar.advance)

    return run


def read_with_status(source: Path) -> pl.DataFrame:
    """Read the file whole (polars parses it on every core); say so first when it is large, as it takes a while."""
    if not source.is_file() or source.stat().st_size < STATUS_BYTES:
        return read_raw(source).frame
    message = f"reading {source} ({source.stat().st_size / 2**20:.0f} MB)"
    if not error_console.is_terminal:
        error_console.print(message, soft_wrap=True, markup=False)
        return read_raw(source).frame
    with error_console.status(message):
        return read_raw(source).frame


def first_groups(frame: pl.DataFrame, limit: int) -> pl.DataFrame:
    """The rows of the first ``limit`` groups (in file order), every copy kept.

    A kept row whose image refers to a row that is not kept gets that row's payload, so nothing dangles.
    """
    kept_groups = frame["g_index"].unique(maintain_order=True).head(limit)
    kept = frame.filter(pl.col("g_index").is_in(kept_groups.implode()))
    if "image" not in frame.columns:
        return kept
    targets = reference_targets(kept["image"])
    outside = targets.is_not_null() & ~targets.is_in(kept["index"].implode())
    if not outside.any():
        return kept
    payloads = frame.select(pl.col("index").alias("_target"), pl.col("image").alias("_payload"))
    joined = kept.with_columns(targets.alias("_target")).join(payloads, on="_target", how="left",
                                                                maintain_order="left")
    image = pl.when(outside).then(pl.col("_payload")).otherwise(pl.col("image"))
    return joined.with_columns(image.alias("image")).drop("_target", "_payload")


def with_declared_columns(frame: pl.DataFrame, benchmark: str) -> pl.DataFrame:
    """Add ``benchmark`` and the descriptive columns the source lacks (empty), keeping every other column."""
    missing = [pl.lit(None, dtype=pl.String).alias(name) for name in DESCRIPTIVE_COLUMNS if name not in frame.columns]
    return frame.with_columns(*missing, pl.lit(benchmark).alias("benchmark"))
