"""The per-row ``score`` of a file of several benchmarks: each row scored by its benchmark's answer kind, once.

Likelihood rows and generate-image rows chose an option letter whatever their benchmark's kind, so they are scored
as letters (:data:`mmbatch.answers.choice.CHOICE`). ``hit`` is the score as 0/1 where the row's kind is binary, and
null where it is graded (docs/scoring.md).

A file's stored scores are read instead of computed again only while the cells they were computed from are those
the writer scored: ``extract`` and ``score`` record a digest of those cells (:data:`ROW_SCORES` in the metadata),
and a file whose cells no longer match it (edited by hand, or written by another tool) is scored again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from mmbatch.answers.choice import CHOICE
from mmbatch.answers.frames import columns_as_they_lie, nulls
from mmbatch.answers.image_choice import GENERATE_IMAGE
from mmbatch.answers.kind import AnswerKind

SCORE = "score"
"""The column: Float64 in [0, 1]; null for a row without ground truth."""
ROW_SCORES = "row_scores"
"""Metadata key of the digest of the cells the stored scores were computed from (see the module docstring)."""
SCORED_CELLS = ("index", "benchmark", "mode", "extracted", "answer", "extract_method", "error", SCORE)
"""Cells every score depends on (with each kind's :attr:`~mmbatch.answers.kind.AnswerKind.score_columns`)."""


def letter_rows(columns: list[str]) -> pl.Expr:
    """True for the rows whose answer is an option letter whatever their kind (likelihood and generate-image)."""
    rows = pl.lit(False)
    if "mode" in columns:
        rows = rows | pl.col("mode").is_in(["likelihood", GENERATE_IMAGE]).fill_null(False)
    if "choice_logprobs" in columns:
        rows = rows | pl.col("choice_logprobs").is_not_null()
    return rows


def row_scores(frame: pl.DataFrame, kinds: Mapping[str, AnswerKind]) -> pl.Series:
    """The ``score`` of every row of ``frame`` (extracted rows with ``benchmark``), in order.

    ``kinds``: the answer kind of each ``benchmark`` value of ``frame``.

    Raises:
        RuntimeError: a kind returned scores of the wrong length, type or range (a bug in the kind).
    """
    # Only the cells a score depends on (those of the digest): the kinds read nothing else, and a query over every
    # column of a frame whose columns are chunked differently (the input's row groups beside the new columns) made
    # polars copy all of them into single chunks first (+380 MiB at a million TextVQA rows).
    frame = columns_as_they_lie(frame, (name for name in dict.fromkeys(
        [*SCORED_CELLS, "choice_logprobs", *(column for kind in kinds.values() for column in kind.score_columns)])
        if name in frame.columns))
    letters = frame.select(letter_rows(frame.columns)).to_series()
    parts: list[tuple[AnswerKind, pl.Series]] = [(CHOICE, letters)] if letters.any() else []
    if len(kinds) == 1 and not parts:
        return _checked(next(iter(kinds.values())), frame, None)
    benchmark = frame["benchmark"]
    parts += [(kind, (benchmark == name).fill_null(False) & ~letters) for name, kind in kinds.items()]
    scores = nulls(SCORE, frame.height, pl.Float64)
    for kind, mask in parts:
        if mask.any():
            scores = scores.scatter(mask.arg_true(), _checked(kind, frame, mask))
    return scores


def binary_rows(frame: pl.DataFrame, kinds: Mapping[str, AnswerKind]) -> pl.Expr:
    """True for the rows whose score is 0/1 (their kind is binary, or they chose a letter): those get ``hit``."""
    binary = [name for name, kind in kinds.items() if kind.binary]
    return pl.col("benchmark").is_in(binary).fill_null(False) | letter_rows(frame.columns)


def hit_expression(frame: pl.DataFrame, kinds: Mapping[str, AnswerKind]) -> pl.Expr:
    """``hit`` (Int64): the score of a binary row as 0/1; null for graded rows and rows without ground truth."""
    return pl.when(binary_rows(frame, kinds)).then(pl.col(SCORE).cast(pl.Int64)).otherwise(None).alias("hit")


def scores_digest(frame: pl.DataFrame, kinds: Mapping[str, AnswerKind]) -> dict[str, Any]:
    """The :data:`ROW_SCORES` record of ``frame``'s scores: a digest of the cells they were computed from."""
    return digest_record(frame.height, cells_digest(frame, kinds))


def cells_digest(frame: pl.DataFrame, kinds: Mapping[str, AnswerKind]) -> int:
    """The sum of the row hashes of the cells ``frame``'s scores are computed from, modulo 2**64: the digest of a
    file written in batches is the sum of its batches' (:func:`digest_record`)."""
    named = [*SCORED_CELLS, *(column for kind in kinds.values() for column in kind.score_columns)]
    kept = [name for name in dict.fromkeys(named) if name in frame.columns]
    read = [*kept, *(["choice_logprobs"] if "choice_logprobs" in frame.columns and "choice_logprobs" not in kept
                     else [])]
    cells = columns_as_they_lie(frame, read).select(*kept, letter_rows(frame.columns).alias("_letter"))
    return int(cells.hash_rows().sum() or 0) % 2**64


def digest_record(rows: int, digest: int) -> dict[str, Any]:
    """The :data:`ROW_SCORES` record of ``rows`` rows whose :func:`cells_digest` (summed over batches) is ``digest``."""
    return {"rows": rows, "digest": f"{digest % 2**64:016x}"}


def trusted_scores(frame: pl.DataFrame, metadata: Mapping[str, Any], kinds: Mapping[str, AnswerKind]
                   ) -> pl.DataFrame:
    """``frame`` with its ``score`` column kept only if it is the one its writer computed from these cells (else
    dropped, so that it is computed again)."""
    if SCORE not in frame.columns:
        return frame
    if metadata.get(ROW_SCORES) == scores_digest(frame, kinds):
        return frame
    return frame.drop(SCORE)


def with_scores(frame: pl.DataFrame, kinds: Mapping[str, AnswerKind]) -> pl.DataFrame:
    """``frame`` with its ``score`` column: the one it has, else computed once by each row's kind."""
    if SCORE in frame.columns:
        return frame if frame.schema[SCORE] == pl.Float64 else frame.with_columns(pl.col(SCORE).cast(pl.Float64))
    return frame.with_columns(row_scores(frame, kinds))


def _checked(kind: AnswerKind, frame: pl.DataFrame, mask: pl.Series | None) -> pl.Series:
    rows = frame if mask is None else frame.filter(mask)
    if "answer" not in rows.columns:  # a file without an answer column (a test split): its answers are all empty,
        # so a kind that scores against `answer` gives no score, while one whose ground truth lies elsewhere
        # (LLaVA-Bench's reference answer or stored reviews) still scores its rows
        rows = rows.with_columns(pl.lit(None, dtype=pl.String).alias("answer"))
    scores = kind.score(rows)
    if scores.len() != rows.height or scores.dtype != pl.Float64:
        raise RuntimeError(f"answer kind {kind.name!r} returned {scores.len()} {scores.dtype} scores for {rows.height}"
                           " rows; expected one Float64 per row")
    if ((scores < 0) | (scores > 1)).any():
        raise RuntimeError(f"answer kind {kind.name!r} returned a score outside [0, 1]")
    if kind.binary and not scores.drop_nulls().is_in([0.0, 1.0]).all():
        raise RuntimeError(f"answer kind {kind.name!r} is binary but returned a score other than 0 or 1")
    return scores.rename(SCORE)
