"""Likelihood rows: the option whose reduced log-likelihood is highest (docs/rules.md §10).

``infer`` keeps each option's summed log-probability and token count, so any reduction can be chosen here without
re-running the model. The official SEED-Bench interfaces disagree on the reduction, hence the named setting. Rows
with ``choice_logprobs`` are decided here whatever their benchmark's answer kind, and scored as option letters.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from mmbatch.answers.frames import choices_of, column_or_null, option_rows
from mmbatch.errors import BadInputError

REDUCTIONS = ("sum", "mean", "mean-char")
"""``--likelihood-reduction`` values; the first is the default. ``mean`` divides by the option's token count,
``mean-char`` by its length in characters."""


MAX_LOGPROB = 1e-3
"""Largest log-probability accepted: 0 plus float rounding; anything above (``+inf`` included) is no log-prob."""


def reduce_scores(logprobs: Sequence[float], ntokens: Sequence[int] | None, texts: Sequence[str],
                  reduction: str) -> list[float]:
    """Each option's score under ``reduction``.

    Raises:
        ValueError: the counts needed by the reduction are missing or zero, or a log-prob is NaN or above 0.
    """
    if any(math.isnan(value) for value in logprobs):
        raise ValueError("a log-probability is NaN")
    if any(value > MAX_LOGPROB for value in logprobs):  # a probability above 1: the scores are not log-probs
        raise ValueError(f"a log-probability is above 0 ({max(logprobs)!r}); the scores cannot be compared")
    if reduction == "sum":
        return list(logprobs)
    if reduction == "mean":
        if ntokens is None or len(ntokens) != len(logprobs) or any(n <= 0 for n in ntokens):
            raise ValueError("reduction 'mean' needs a positive choice_ntokens per option")
        return [value / count for value, count in zip(logprobs, ntokens, strict=True)]
    if reduction == "mean-char":
        if any(len(text) == 0 for text in texts):
            raise ValueError("reduction 'mean-char' needs a non-empty text per option")
        return [value / len(text) for value, text in zip(logprobs, texts, strict=True)]
    raise ValueError(f"unknown reduction {reduction!r}; choose one of {', '.join(REDUCTIONS)}")


class Unrankable(ValueError):
    """Every option scores ``-inf``: the model gave none of them any probability, so no option is better."""


def best_option(letters: Sequence[str], logprobs: Sequence[float], ntokens: Sequence[int] | None,
                texts: Sequence[str], reduction: str) -> str:
    """The letter with the highest score; ties go to the first option.

    Raises:
        Unrankable: every score is ``-inf`` (the first option would win by default: a made-up answer).
        ValueError: the number of scores differs from the number of options, or the reduction cannot be applied.
    """
    if len(logprobs) != len(letters) or not letters:
        raise ValueError(f"{len(logprobs)} log-probabilities for {len(letters)} options")
    scores = reduce_scores(logprobs, ntokens, texts, reduction)
    if all(score == -math.inf for score in scores):
        raise Unrankable(f"every option's log-probability is -inf ({len(scores)} options): the model gave none of "
                         "them any probability, so none can be chosen")
    best = 0
    for position, score in enumerate(scores):
        if score > scores[best]:  # strictly greater: the first of equal scores wins
            best = position
    return letters[best]


def decide_likelihood(rows: pl.DataFrame, reduction: str, *, letter_scoring: bool, path: Path | None
                      ) -> pl.DataFrame:
    """The best option letter of each likelihood row, in order: ``extracted``, ``extract_method`` (``likelihood``),
    ``extract_note`` and ``error`` (null: a row that fails on its own would set them).

    ``letter_scoring``: ``infer`` scored the letters ``A.``, ``B.``.. instead of the option texts, which is what
    ``mean-char`` must divide by.

    Raises:
        BadInputError: a row whose log-probabilities do not fit its options, naming the row.
    """
    letters, options = option_rows(rows)
    inputs = rows.select("index", "choice_logprobs", column_or_null(rows, "choice_ntokens", pl.List(pl.Int64)))
    decided: list[tuple[str | None, str, str | None, str | None]] = []
    for (index, logprobs, ntokens), texts in zip(inputs.iter_rows(), options, strict=True):
        choices = choices_of(letters, texts)
        scored = [f"{letter}." for letter in choices] if letter_scoring else list(choices.values())
        try:
            decided.append((best_option(list(choices), list(logprobs), ntokens, scored, reduction), "likelihood",
                            None, None))
        except Unrankable as exc:  # the row fails (counted wrong, retried by a rerun), rather than answering A
            decided.append((None, "error", "no option has a finite log-probability", str(exc)))
        except ValueError as exc:
            raise BadInputError(str(exc), path=path, index=index, column="choice_logprobs") from None
    return pl.DataFrame(decided, schema={"extracted": pl.String, "extract_method": pl.String,
                                         "extract_note": pl.String, "error": pl.String}, orient="row")
