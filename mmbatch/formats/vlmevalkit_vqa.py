"""VLMEvalKit's open-answer VQA tables (TextVQA_VAL, OCRVQA, GQA, DocVQA, InfoVQA, ChartQA, OCRBench TSVs) read into
prepared rows: the VLMEvalKit table format (:mod:`mmbatch.formats.vlmevalkit_tsv`) without options.

Columns: ``index``, ``question``, ``image`` (base64, a short reference to another row's index, or a list-string of
several) or ``image_path``, ``answer`` (one text, or a Python list of reference answers), and ``category``
(OCRVQA's genre, OCRBench's task) or ``split`` (ChartQA's ``test_human``/``test_augmented``, which become its
``category``: see :attr:`VqaTableReader.split_is_category`). Every column is carried through
untouched; each row is its own group (``g_index = index``). A text index (OCRVQA's ``<ISBN>_<n>``) becomes the
integer its benchmark's ``source_ids`` rule gives the key, the key kept in ``question_id``
(:mod:`mmbatch.benchmarks.source_ids`). The answer cells are checked by the
benchmark's answer kind (a TextVQA answer that is not a list of human answers is refused), so that a file
``extract`` could not score never gets to ``infer``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from mmbatch.benchmarks.base import ReadOptions
from mmbatch.benchmarks.declaration import load
from mmbatch.benchmarks.registry import find_benchmark
from mmbatch.benchmarks.source_ids import with_source_ids
from mmbatch.errors import BadInputError
from mmbatch.formats.vlmevalkit_rows import check_columns, check_rows, first_row, typed_rows
from mmbatch.formats.vlmevalkit_tsv import check_media, limited, read_with_status, with_declared_columns


@dataclass(frozen=True)
class VqaTableReader:
    """Reads one VLMEvalKit open-answer VQA table; the answers are checked by the benchmark's kind.

    A benchmark package names one as its reader: ``READER = VqaTableReader("textvqa", "mmbatch.answers...")``.
    """

    name: str
    """The ``benchmark`` column value."""
    kind: str
    """``module:attribute`` of the benchmark's answer kind (it checks the ``answer`` cells)."""
    categories: tuple[str, ...] | None = None
    """The only ``category`` values the benchmark has (OCRBench's ten: its score needs them); None: any."""
    split_is_category: bool = False
    """VLMEvalKit's ``split`` holds parts of ONE evaluation, reported apart and together (ChartQA's test_human and
    test_augmented: its ``_acc.csv`` has both and their Overall). mmbatch scores each ``split`` on its own, so these
    values go to ``category`` (``split`` stays empty)."""

    def adapt_table(self, frame: pl.DataFrame, source: Path) -> pl.DataFrame:
        """A VLMEvalKit table of this benchmark in mmbatch's terms, once its ids are given
        (:mod:`mmbatch.benchmarks.source_ids`): with :attr:`split_is_category`, ``split`` moved to ``category``.
        ``prepare`` and ``import`` both apply it, so the same table gives the same rows either way.

        Raises:
            BadInputError: ``split`` to move where the file has a ``category`` already.
        """
        if self.split_is_category and "split" in frame.columns:
            if "category" in frame.columns:
                raise BadInputError(f"{self.name}'s 'split' values are its categories, but the file has a "
                                    "'category' column already", path=source, column="split")
            frame = frame.rename({"split": "category"})
        return frame

    def read(self, path: Path, options: ReadOptions) -> pl.DataFrame:
        """Read and check the rows of ``path`` (the first ``options.limit`` rows when given).

        Raises:
            BadInputError: naming the file, the row ``index`` and the column of the first problem found.
        """
        source = Path(path)
        if source.is_dir():
            raise BadInputError("expected a VLMEvalKit .tsv, .parquet or .xlsx file, got a folder", path=source)
        if options.circular:
            raise BadInputError(f"{self.name} has no options to rotate: --circular does not apply", path=source)
        frame = read_with_status(source)
        check_columns(frame, source)
        frame = with_source_ids(frame, find_benchmark(self.name), source)
        frame = typed_rows(self.adapt_table(frame, source), source)
        check_rows(frame, source)
        if self.categories is not None:
            _check_categories(frame, self.categories, source)
        if "g_index" not in frame.columns:  # each question is its own group
            frame = frame.insert_column(frame.columns.index("index") + 1, frame["index"].alias("g_index"))
        frame = limited(frame, options)
        if "answer" in frame.columns:
            load(self.kind).check_answers(frame, source)
        check_media(frame, source, options)
        return with_declared_columns(frame, self.name)


def _check_categories(frame: pl.DataFrame, categories: tuple[str, ...], source: Path) -> None:
    """Every row has one of ``categories``."""
    if "category" not in frame.columns:
        raise BadInputError("required column 'category' is missing", path=source, column="category")
    unknown = ~frame["category"].cast(pl.String).is_in(list(categories)).fill_null(False)
    if unknown.any():
        row = int(unknown.arg_max() or 0)
        raise BadInputError(f"category {frame['category'][row]!r} is not one of {', '.join(categories)}",
                            path=source, index=first_row(frame, unknown), column="category")
