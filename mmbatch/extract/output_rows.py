"""The rows ``extract`` writes, a batch at a time: each batch of predictions with its extract columns, what the rules
read of its prediction (``answer_text``) and its ``score``, the digest of the scored cells totalled on the way."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from contextlib import nullcontext

import polars as pl

from mmbatch.answers.kind import AnswerKind
from mmbatch.answers.run_memory import current_memory, remembered_in
from mmbatch.answers.scores import SCORE, cells_digest, digest_record, row_scores
from mmbatch.extract.decisions import SIMILARITIES, with_outcomes
from mmbatch.extract.held_decisions import HeldDecisions
from mmbatch.extract.predictions import Predictions
from mmbatch.extract.reasoning import TagPairs, answer_texts
from mmbatch.table_writing import Batches


class ExtractedRows:
    """The output table of one run: ``decisions`` hold every row's, batch by batch."""

    def __init__(self, predictions: Predictions, decisions: HeldDecisions, kinds: Mapping[str, AnswerKind],
                 reasoning_tags: TagPairs) -> None:
        self.predictions = predictions
        self.decisions = decisions
        self.kinds = kinds
        self.reasoning_tags = reasoning_tags
        self.similarities = decisions.has_values_in(SIMILARITIES)  # the column is the file's or none's
        self.rows = 0
        self.digest = 0
        self._totals = threading.Lock()  # the writer may make batches from several threads
        self._memory = current_memory()  # the first pass's: its threads do not see the stage's context

    def batch(self, k: int) -> pl.DataFrame:
        """Batch ``k`` of the output (its digest added to the total)."""
        with remembered_in(self._memory) if self._memory is not None else nullcontext():
            return self._batch(k)

    def _batch(self, k: int) -> pl.DataFrame:
        frame = self.predictions.batch(k)
        output = with_outcomes(frame, self.decisions.batch(k), similarities=self.similarities)
        if "prediction" in frame.columns:  # the raw text stays in `prediction`; what the rules read goes beside it
            # read again rather than held between the passes: a column per row, while stripping a trace is
            # remembered from the first pass (mmbatch/answers/run_memory.py)
            texts, _ = answer_texts(frame["prediction"], self.reasoning_tags)
            output = output.with_columns(texts["answer_text"])
        output = output.with_columns(row_scores(output, self.kinds).alias(SCORE))
        digest = cells_digest(output, self.kinds)
        with self._totals:
            self.rows += output.height
            self.digest += digest
        return output

    def batches(self) -> Batches:
        """Every batch, made when the writer asks for it."""
        return Batches(self.predictions.count, self.batch)

    def digest_record(self) -> dict[str, object]:
        """The row scores' digest (:data:`mmbatch.answers.scores.ROW_SCORES`) of the batches made so far."""
        return digest_record(self.rows, self.digest)
