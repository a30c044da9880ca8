"""The judge-graded kind (MM-Vet): a judge grades each answer against the ground truth with a number in [0, 1];
the row's score is its grade, or the mean of its grades when it was graded in several runs.

``extracted`` holds the grade as text (``0.6``), or one grade per run separated by spaces (``0.6 0.5 0.6``, from a
file graded in several runs). A judge reply without a grade is asked again per the grader's tries; a row whose tries
all fail is unmatched, with the reason, and scores 0 (as the tools' 0.0 does) while being counted apart.

An imported file's stored grades (the evaluator's reply of each run, VLMEvalKit's stored ``score``) are read as this
kind's judge replies under ``extract --stored-verdicts`` (:mod:`mmbatch.extract.stored_verdicts`), each run by the
grader that wrote it, and joined as one ``extracted`` (:attr:`~mmbatch.answers.kind.JudgeSpec.runs_joined_by`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from mmbatch.answers.frames import decide_all_by_judge, failed_rows, has_answer
from mmbatch.answers.kind import JudgeSpec, KindSettings

NO_JUDGE_NOTE = "graded answers need the judge (--no-judge)"
GRADES_JOINED_BY = " "
"""Between the grades of a row graded in several runs (:attr:`~mmbatch.answers.kind.JudgeSpec.runs_joined_by`)."""


def grades_text(grades: Sequence[float]) -> str:
    """``extracted`` of a row graded ``grades`` (one per run)."""
    return GRADES_JOINED_BY.join(repr(float(grade)) for grade in grades)


def grades_of(extracted: str | None) -> list[float] | None:
    """The grades an ``extracted`` cell holds, None for an empty one.

    Raises:
        ValueError: the cell is not grades in [0, 1] separated by spaces.
    """
    if extracted is None or not extracted.strip():
        return None
    grades = [float(part) for part in extracted.split()]
    if any(not 0.0 <= grade <= 1.0 for grade in grades):
        raise ValueError(f"grades {extracted!r} are not all in [0, 1]")
    return grades


@dataclass(frozen=True)
class JudgeGradedKind:
    """Answers graded 0-1 by a judge."""

    judge: JudgeSpec | None
    """The grader asked now (its variants: the other graders ``--kind-option grader`` picks)."""
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """The grader's name, when the benchmark offers several."""
    name: str = "judge-graded"
    """Recorded in the metadata."""
    version: str = "1"
    """Bumped when the kind's rules change."""
    binary: bool = False
    """A grade is a fraction."""
    score_columns: tuple[str, ...] = ()
    """The score reads ``extracted`` only."""

    def check_answers(self, rows: pl.DataFrame, path: Path | None) -> None:
        """Any ground-truth text can be graded."""

    def decide(self, rows: pl.DataFrame, settings: KindSettings) -> pl.DataFrame:
        """The grader's prompt for every row with an answer to grade; once per distinct input."""
        return decide_all_by_judge(rows, settings, self.judge, NO_JUDGE_NOTE)

    def score(self, rows: pl.DataFrame) -> pl.Series:
        """The mean of the row's grades; 0 for unmatched and failed rows; null without an answer."""
        means: list[float | None] = []
        for text in rows["extracted"].cast(pl.String).to_list():
            grades = grades_of(text)
            means.append(None if grades is None else sum(grades) / len(grades))
        mean = pl.Series(means, dtype=pl.Float64)
        return rows.select(pl.when(~has_answer()).then(None).when(failed_rows(rows.columns)).then(0.0)
                           .otherwise(pl.lit(mean).fill_null(0.0)).alias("score")).to_series()

