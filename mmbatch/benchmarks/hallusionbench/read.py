"""``mmbatch prepare --benchmark hallusionbench``: VLMEvalKit's ``HallusionBench.tsv`` (or any table with its columns).

Columns read: ``index`` (the question id, ``VD_illusion_1_0_0_0``: :mod:`.ids` packs it into the integer ``index``
and the question set ``g_index``, and keeps it in ``question_id``), ``question``, ``answer`` (``Yes``/``No``),
``category`` (VD, VS), ``l2-category`` (VD_illusion, ...), and the image as ``image`` (base64, or another row's id)
or ``image_path`` (a file under ``--media-root``). Every other column (``gt_answer_details``, ...) is carried through.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from mmbatch.benchmarks.base import ReadOptions
from mmbatch.benchmarks.hallusionbench import HALLUSIONBENCH
from mmbatch.benchmarks.source_ids import with_source_ids
from mmbatch.errors import BadInputError
from mmbatch.formats.vlmevalkit_rows import check_columns, first_row, typed_rows
from mmbatch.formats.vlmevalkit_tsv import check_media, limited, read_with_status, with_declared_columns

ANSWERS = ("Yes", "No")
"""The answers VLMEvalKit's scorer can match (it compares ``answer == extracted``, case and all)."""


@dataclass(frozen=True)
class HallusionReader:
    """Reads HallusionBench's yes/no questions."""

    name: str = "hallusionbench"
    """The ``benchmark`` column value."""

    def read(self, path: Path, options: ReadOptions) -> pl.DataFrame:
        """Read and check the rows of ``path``.

        Raises:
            BadInputError: a missing column, a bad or repeated question id, labels that contradict the id, an empty
                question, an answer other than ``Yes``/``No``, or a bad image, naming the file, row and column.
        """
        source = Path(path)
        if source.is_dir():
            raise BadInputError("expected HallusionBench's .tsv, .parquet or .xlsx file, got a folder", path=source)
        frame = read_with_status(source)
        check_columns(frame, source)
        if "answer" not in frame.columns:
            raise BadInputError("required column 'answer' is missing", path=source, column="answer")
        frame = typed_rows(with_source_ids(frame, HALLUSIONBENCH, source), source)
        _check_rows(frame, source)
        frame = limited(frame, options)
        check_media(frame, source, options)
        return with_declared_columns(frame, self.name)


def _check_rows(frame: pl.DataFrame, source: Path) -> None:
    """A question and a ``Yes``/``No`` answer on every row."""
    if frame["question"].is_null().any():
        raise BadInputError("empty question", path=source, index=first_row(frame, frame["question"].is_null()),
                            column="question")
    bad = ~frame["answer"].cast(pl.String).is_in(ANSWERS).fill_null(False)
    if bad.any():
        row = int(bad.arg_max() or 0)
        raise BadInputError(f"the answer must be Yes or No, not {frame['answer'][row]!r}", path=source,
                            index=frame["question_id"][row], column="answer")


READER = HallusionReader()
"""The reader of ``--benchmark hallusionbench``."""
