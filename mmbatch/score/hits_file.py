"""The hits file of ``score``: every row it scored with all of the row's columns and ``hit``, written a batch at a time.

Scoring reads the columns it scores by only (:func:`scored_columns`): every column but the texts of a row (its
prompt, question, options, prediction, the judge's reply), which no scorer reads and which are most of a stage
file's memory. Those are copied from the input into the hits file batch by batch, beside the scored columns, so
that the file holds exactly what scoring the whole table in memory would have written.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from mmbatch.benchmarks.registry import answer_kinds, find_benchmark
from mmbatch.schema.columns import OPTION_LETTERS
from mmbatch.score.checks import lower_case
from mmbatch.score.scorers import get_scorer
from mmbatch.score.stage import ScoreResult
from mmbatch.table_batches import BatchedTable
from mmbatch.table_writing import Batches

UNSCORED_TEXTS = ("prompt", "prompt_hash", "prompt_template", "question", "hint", "prediction", "answer_text",
                  "judge_prompt", "judge_raw", "judge_model", "extract_note", "image", *OPTION_LETTERS)
"""Columns scoring does not read (:class:`~mmbatch.scoring.scorer.Scorer`): the texts the model was shown and gave,
the judge's reply, how extract decided. One that a file's answer kind scores by (its ``score_columns``: MMMU's ``A``,
``B``) or its scorer reads (its ``text_columns``: MMBench's ``extract_note``) is read."""


def scored_columns(table: BatchedTable, benchmark: str | None) -> list[str]:
    """The columns of ``table`` that ``score`` reads: all but :data:`UNSCORED_TEXTS`, keeping those the rows' answer
    kinds score by and their scorers read."""
    names = [benchmark.lower()] if benchmark is not None else []
    if "benchmark" in table.columns:
        names += lower_case(table.select("benchmark")["benchmark"].unique(maintain_order=True)).drop_nulls().to_list()
    known = [name for name in dict.fromkeys(names) if find_benchmark(name) is not None]
    kept = {column for kind in answer_kinds(known).values() for column in kind.score_columns}
    kept |= {column for name in known for column in getattr(get_scorer(name), "text_columns", ())}
    return [name for name in table.columns if name not in UNSCORED_TEXTS or name in kept]


class HitsFile:
    """The hits file's batches: batch ``k`` holds the scored rows of the input's batch ``k``."""

    def __init__(self, table: BatchedTable, read: Sequence[str], scored: Sequence[str], result: ScoreResult) -> None:
        """``read``: the columns read for scoring (:func:`scored_columns`); ``scored``: those the scored frame had
        when scoring began (a distrusted ``score`` dropped); ``result``: what scoring gave, with ``positions``."""
        if result.positions is None or not result.positions.is_sorted():
            raise ValueError("the scored rows' positions in the input, in order, are needed to copy the rest of "
                             "each row")
        self.table, self.hits, self.positions = table, result.hits, result.positions
        # The file's columns as scoring the whole table would order them: the input's, but for those scoring
        # dropped, then those it added (a recomputed score goes last, as it would have).
        kept = [name for name in table.columns
                if name not in read or (name in scored and name in self.hits.columns)]
        self.columns = kept + [name for name in self.hits.columns if name not in kept]
        self.copied = [name for name in self.columns if name not in self.hits.columns]
        """The columns taken from the input, each batch."""

    def batch(self, k: int) -> pl.DataFrame:
        """The scored rows of input batch ``k``, every column."""
        start = k * self.table.rows_per_batch
        rows = min(self.table.rows_per_batch, self.table.height - start)
        frame = self.table.batch(k, self.copied)  # the columns scoring read are in the hits already
        first, end = (int(self.positions.search_sorted(bound, side="left")) for bound in (start, start + rows))
        hits = self.hits.slice(first, end - first)
        if hits.height != rows and frame.width:  # some rows were not scored (--benchmark, --subset answered)
            frame = frame[self.positions.slice(first, end - first) - start]
        return pl.DataFrame([hits[name] if name in hits.columns else frame[name] for name in self.columns])

    def batches(self) -> Batches:
        """Every batch, made when the writer asks for it."""
        return Batches(self.table.count, self.batch)
