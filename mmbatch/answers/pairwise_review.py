"""The pairwise-review kind (LLaVA-Bench in-the-wild): a judge reviews a reference answer ("Assistant 1") and the
model's ("Assistant 2") and scores each from 1 to 10 on the first line of its review.

``extracted`` holds each review run's two scores, reference then model, runs separated by ``;`` (``8.0 10.0`` or
``8.0 10.0;9.0 9.5``); the benchmark's scorer sums them (the relative score is ``sum(model) / sum(reference)``). The
row's ``score`` is the model's score over 10, averaged over runs, so that a row's own figure stays in [0, 1].

A review whose first line is not two numbers is asked again per the reviewer's tries, then the row is unmatched
with the reason (LLaVA's and VLMEvalKit's scripts write ``[-1, -1]`` for it, which their sums then count). An
imported file's stored reviews are read as this reviewer's replies under ``extract --stored-verdicts``
(:mod:`mmbatch.extract.stored_verdicts`), one per run, joined by ``;``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from mmbatch.answers.frames import decide_all_by_judge, failed_rows, has_text
from mmbatch.answers.kind import JudgeSpec, JudgeVerdict, KindSettings

RUN_SEPARATOR = ";"
"""Between the pairs of a row reviewed in several runs (:attr:`~mmbatch.answers.kind.JudgeSpec.runs_joined_by`)."""
SCALE = 10.0
"""Scores run from 1 to 10 (a review outside [0, 10] is not read)."""
NO_JUDGE_NOTE = "reviewed answers need the judge (--no-judge)"
REVIEW = "judge_raw"
"""The review a row got (the judge's last reply, or the stored reviews under ``--stored-verdicts``)."""


def review_scores(review: str) -> tuple[float, float] | None:
    """LLaVA's ``parse_score``: the first line, commas as spaces, split on single spaces, exactly two numbers
    (reference, model); None where it finds no such pair (their ``[-1, -1]``) or a score outside [0, 10]."""
    parts = review.split("\n")[0].replace(",", " ").split(" ")
    if len(parts) != 2:
        return None
    try:
        pair = (float(parts[0]), float(parts[1]))
    except ValueError:
        return None
    return pair if all(math.isfinite(v) and 0.0 <= v <= SCALE for v in pair) else None


def pair_text(pairs: list[tuple[float, float]]) -> str:
    """``extracted`` of a row reviewed ``pairs`` (one per run)."""
    return RUN_SEPARATOR.join(f"{reference!r} {model!r}" for reference, model in pairs)


def pairs_of(extracted: str | None) -> list[tuple[float, float]] | None:
    """The (reference, model) pairs an ``extracted`` cell holds; None for an empty one.

    Raises:
        ValueError: the cell is not pairs of numbers.
    """
    if extracted is None or not extracted.strip():
        return None
    pairs = []
    for run in extracted.split(RUN_SEPARATOR):
        reference, model = (float(value) for value in run.split())
        pairs.append((reference, model))
    return pairs


def parse_review(reply: str, choices: Mapping[str, str], settings: KindSettings) -> JudgeVerdict | None:
    """The review's two scores as ``extracted`` text; None when its first line holds no pair (ask again)."""
    pair = review_scores(reply)
    return None if pair is None else JudgeVerdict(pair_text([pair]))


@dataclass(frozen=True)
class PairwiseReviewKind:
    """Answers reviewed against a reference answer."""

    judge: JudgeSpec | None
    """The reviewer (prompts built from the benchmark's reference and context columns)."""
    reference_columns: tuple[str, ...]
    """Columns that hold the reference answer (the first present is read); a row with none and no review
    (``judge_raw``: none asked now, none read from the file) cannot be reviewed (its score is null)."""
    name: str = "pairwise-review"
    """Recorded in the metadata."""
    version: str = "1"
    """Bumped when the kind's rules change."""
    binary: bool = False
    """A review is a pair of scores."""
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """None: the kind reads no ``--kind-option``."""

    @property
    def score_columns(self) -> tuple[str, ...]:
        """The reference columns, and ``judge_raw``: a row without a reference may hold a stored review."""
        return (*self.reference_columns, REVIEW)

    def check_answers(self, rows: pl.DataFrame, path: Path | None) -> None:
        """Any reference text can be reviewed."""

    def decide(self, rows: pl.DataFrame, settings: KindSettings) -> pl.DataFrame:
        """The reviewer's prompt for every row with an answer to review; once per distinct input."""
        return decide_all_by_judge(rows, settings, self.judge, NO_JUDGE_NOTE)

    def score(self, rows: pl.DataFrame) -> pl.Series:
        """The model's score over 10, averaged over runs; 0 for unmatched and failed rows; null for a row with
        neither a reference answer nor a review (asked now or read from the file)."""
        means: list[float | None] = []
        for text in rows["extracted"].cast(pl.String).to_list():
            pairs = pairs_of(text)
            means.append(None if pairs is None else sum(model for _, model in pairs) / len(pairs) / SCALE)
        reviewable = pl.lit(False)
        for name in self.score_columns:
            if name in rows.columns:
                reviewable = reviewable | has_text(name)
        mean = pl.Series(means, dtype=pl.Float64)
        return rows.select(pl.when(~reviewable).then(None).when(failed_rows(rows.columns)).then(0.0)
                           .otherwise(pl.lit(mean).fill_null(0.0)).alias("score")).to_series()
