"""The rows ``extract`` writes, a batch at a time: each batch of predictions with its extract columns, what the rules
read of its prediction (``answer_text``) and its ``score``, the digest of the scored cells totalled on the way."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from mmbatch.answers.kind import AnswerKind
from mmbatch.answers.scores import SCORE, cells_digest, digest_record, row_scores
from mmbatch.extract.decisions import SIMILARITIES, with_outcomes
from mmbatch.extract.predictions import Predictions
from mmbatch.table_writing import Batches


class ExtractedRows:
    """The output table of one run: ``decisions`` and ``answer_text`` hold every row's, in file order."""

    def __init__(self, predictions: Predictions, decisions: pl.DataFrame, answer_text: pl.Series,
                 kinds: Mapping[str, AnswerKind]) -> None:
        self.predictions = predictions
        self.decisions = decisions
        self.answer_text = answer_text
        self.kinds = kinds
        self.similarities = bool(decisions[SIMILARITIES].is_not_null().any())  # the column is the file's or none's
        self.rows = 0
        self.digest = 0

    def batch(self, k: int) -> pl.DataFrame:
        """Batch ``k`` of the output (its digest added to the total)."""
        frame = self.predictions.batch(k)
        offset = k * self.predictions.table.rows_per_batch
        output = with_outcomes(frame, self.decisions.slice(offset, frame.height), similarities=self.similarities)
        if "prediction" in frame.columns:  # the raw text stays in `prediction`; what the rules read goes beside it
            output = output.with_columns(self.answer_text.slice(offset, frame.height))
        output = output.with_columns(row_scores(output, self.kinds).alias(SCORE))
        self.rows += output.height
        self.digest += cells_digest(output, self.kinds)
        return output

    def batches(self) -> Batches:
        """Every batch, made when the writer asks for it."""
        return Batches(self.predictions.count, self.batch)

    def digest_record(self) -> dict[str, object]:
        """The row scores' digest (:data:`mmbatch.answers.scores.ROW_SCORES`) of the batches made so far."""
        return digest_record(self.rows, self.digest)
