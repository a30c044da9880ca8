"""Read MMBench, CCBench and any MMBench-style MCQ file (TSV, Parquet or xlsx) into prepared rows.

The VLMEvalKit layout (docs/rules.md §1) is read by the neutral reader (:mod:`mmbatch.formats.vlmevalkit_tsv`);
MMBench adds the option-letter answers, the circular copies as extra rows grouped by ``g_index`` (or
``index % 1e6``), the legacy files where every copy carries its own image, and copies generated for a file that has
none (``--circular``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from mmbatch.benchmarks.base import ReadOptions
from mmbatch.benchmarks.mmbench.circular import add_circular_copies, group_keys, has_copies
from mmbatch.formats.vlmevalkit_tsv import check_media, limited, read_checked, with_declared_columns


@dataclass(frozen=True)
class MMBenchReader:
    """Reads MMBench-style multiple-choice files; CCBench and user-written MCQ files are the same format."""

    name: str = "mmbench"
    """The ``benchmark`` column value."""

    def read(self, path: Path, options: ReadOptions) -> pl.DataFrame:
        """Read, check and group the rows of ``path``; generate circular copies when ``options.circular`` says so.

        ``circular``: True generates copies for a file that has none (a file that has them is unchanged); False
        keeps only the original question of each group (``index == g_index``); None keeps the file as it is.

        Raises:
            BadInputError: naming the file, the row ``index`` and the column of the first problem found.
        """
        source = Path(path)
        frame = limited(_with_group_keys(read_checked(source, option_answers=True)), options)
        check_media(frame, source, options)
        if options.circular and not has_copies(frame["g_index"]):
            frame = add_circular_copies(frame).frame
        return with_declared_columns(frame, self.name)


def _with_group_keys(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with ``g_index`` right after ``index`` (or in place when the file has its own)."""
    keys = group_keys(frame)
    if "g_index" in frame.columns:
        return frame.with_columns(keys)
    position = frame.columns.index("index") + 1
    return frame.insert_column(position, keys)


READER = MMBenchReader()
"""The reader ``--benchmark mmbench`` (and ``ccbench``) uses."""
