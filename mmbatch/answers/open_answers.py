"""What the open-answer kinds share (VQA accuracy, ANLS, relaxed accuracy, exact match, OCRBench's substrings).

A prediction is not turned into a letter: its answer text is compared with the references of the row's ``answer``
cell by the kind's :class:`OpenAnswerRule`, which gives a :class:`Verdict` (a score and how it was decided). The
comparison is the decision, so ``decide`` makes it -- once per distinct (answer text, answer cell, category): a
million rows hold far fewer -- and writes its outcome as the row's ``extracted`` value: the score as text
(``repr`` of the float, so ``0.9`` reads back as the same float), as a judge-graded kind writes the judge's grade.
``score`` then reads it back, without the era or the references: a row's score is fixed by the rules it was
extracted with (``--kind-option rules=``, recorded in the metadata), never recomputed under other ones. How the row
was decided (the normalised text, the matching reference) goes to ``extract_note``. No judge is ever asked.

A prediction VLMEvalKit reads as no answer at all (empty, or a pandas missing-value spelling such as ``None``:
:mod:`mmbatch.answers.reference_answers`) is ``unmatched`` and scores 0 -- under a benchmark's ``official`` evaluator
only an empty one is --; so is a row whose reasoning never closed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import polars as pl

from mmbatch.answers.frames import UNCLOSED_NOTE, Decision, decide_distinct, failed_rows, has_answer, with_judge_prompts
from mmbatch.answers.kind import JudgeSpec, KindSettings
from mmbatch.answers.reference_answers import ReferenceProblem, first_problem, is_missing_prediction, read_by_pandas
from mmbatch.errors import BadInputError

RULES_OPTION = "rules"
"""The ``--kind-option`` that picks a rule's era (``vlmevalkit``, ``vlmevalkit-2024``, ``official``)."""
OFFICIAL = "official"
"""The era of a benchmark's authors' own evaluator: it reads its files as written (no pandas in between)."""
TEXT_METHOD = "text"
"""``extract_method`` of a row scored on its answer text (nothing is extracted from it)."""
NO_ANSWER_NOTE = "no answer: the prediction is empty (VLMEvalKit also reads None, N/A, nan and NULL as empty)"
NO_TRUTH_NOTE = "no ground truth to compare with"


@dataclass(frozen=True)
class Verdict:
    """How one prediction compares with one answer cell."""

    score: float
    """In [0, 1]."""
    note: str
    """How it was decided, in a few words (``extract_note``, shown by ``view``)."""


class OpenAnswerRule(Protocol):
    """One scoring rule: references read from an ``answer`` cell, a prediction compared with them."""

    def check(self, cell: str, rules: str) -> object:
        """Read ``cell``'s references; raise :class:`ReferenceProblem` when the rule cannot score against it."""
        ...

    def verdict(self, prediction: str, cell: str, category: str | None, rules: str) -> Verdict:
        """Compare a (present) prediction with the references of ``cell`` under the era ``rules``."""
        ...


@dataclass(frozen=True)
class OpenAnswerKind:
    """An answer kind whose rows are scored on their answer text by an :class:`OpenAnswerRule`."""

    name: str
    """Recorded in the metadata (``vqa-accuracy``, ``anls``, ...)."""
    rule: OpenAnswerRule
    """The comparison."""
    binary: bool
    """Whether the rule's scores are 0 or 1 only."""
    eras: tuple[str, ...] = ("vlmevalkit",)
    """The values ``--kind-option rules=`` accepts, the default first."""
    checked_apart: tuple[str, ...] = (OFFICIAL,)
    """The eras whose answer cells are checked otherwise than the default's: the authors' evaluator reads a cell
    without pandas, and may need more of it (TextVQA's ten answers). The others' check is the default era's, which
    ``check_answers`` made already."""
    by_category: bool = False
    """Whether the rule reads the row's ``category`` (OCRBench's handwritten-formula rows)."""
    version: str = "1"
    """Bumped when the kind's rules change."""
    judge: JudgeSpec | None = None
    """Never asks a judge."""
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """``{"rules": eras}`` when there is more than one era (set in ``__post_init__``)."""
    score_columns: tuple[str, ...] = ()
    """The score is read from ``extracted`` alone."""

    def __post_init__(self) -> None:
        if len(self.eras) > 1 and not self.options:
            object.__setattr__(self, "options", {RULES_OPTION: self.eras})

    def era(self, settings: KindSettings) -> str:
        """The era ``settings`` pick (``--kind-option rules=``), else the default."""
        return settings.option(self, RULES_OPTION) if self.options else self.eras[0]

    def check_answers(self, rows: pl.DataFrame, path: Path | None) -> None:
        """Refuse the first answer cell the rule cannot score against (naming file, row ``index``, ``answer``).

        Each distinct cell is read once; rows without an answer are skipped. An era checked otherwise
        (:attr:`checked_apart`: the TextVQA authors' evaluator wants exactly ten answers) is checked again when
        ``decide`` runs it.
        """
        self._check(rows, self.eras[0], path)

    def decide(self, rows: pl.DataFrame, settings: KindSettings) -> pl.DataFrame:
        """``extracted``: the row's score as text; ``extract_note``: how the row was decided."""
        era = self.era(settings)
        if era != self.eras[0] and era in self.checked_apart:  # checking again costs ~0.3 s at 1M TextVQA rows
            self._check(rows, era, None)

        def decide(text: str | None, reasoning: str | None, cell: str | None, category: str | None) -> Decision:
            if reasoning == "unclosed":
                return None, "unmatched", UNCLOSED_NOTE, False
            if _no_answer(text, era):
                return None, "unmatched", NO_ANSWER_NOTE if era != OFFICIAL else "no answer", False
            if cell is None or not cell.strip():
                return None, TEXT_METHOD, NO_TRUTH_NOTE, False
            try:
                verdict = self.rule.verdict(str(text), _as_read(cell, era), category, era)
            except ReferenceProblem as problem:  # check_answers lets through only cells the rule reads
                raise BadInputError(f"{self.name}: {problem}", column="answer") from None
            return repr(verdict.score), TEXT_METHOD, verdict.note, False

        decided = decide_distinct(self._inputs(rows), ("answer_text", "reasoning", "answer", "category"), decide)
        return with_judge_prompts(decided, rows, None)

    def score(self, rows: pl.DataFrame) -> pl.Series:
        """The score ``decide`` wrote in ``extracted``; 0 for unmatched and failed rows, null without an answer.

        Raises:
            BadInputError: a decided row whose ``extracted`` is not a score (a file edited by hand?).
        """
        if "answer" not in rows.columns:
            return pl.Series("score", [None] * rows.height, dtype=pl.Float64)
        value = pl.col("extracted").cast(pl.String).str.strip_chars().cast(pl.Float64, strict=False)
        scored = rows.select(
            pl.when(~has_answer()).then(None)
            .when(failed_rows(rows.columns) | pl.col("extracted").is_null()).then(0.0)
            .otherwise(value).alias("score"),
            has_answer().alias("_scored"))
        unreadable = scored["_scored"] & scored["score"].is_null()
        if unreadable.any():
            row = int(unreadable.arg_max() or 0)
            raise BadInputError(f"{self.name}: extracted {rows['extracted'][row]!r} is not a score; extract the "
                                "file again", index=rows["index"][row] if "index" in rows.columns else None,
                                column="extracted")
        return scored["score"]

    def _check(self, rows: pl.DataFrame, era: str, path: Path | None) -> None:
        if "answer" not in rows.columns:
            return
        problem = first_problem(rows, lambda cell: self.rule.check(_as_read(cell, era), era))
        if problem is not None:
            raise BadInputError(f"{self.name}: {problem[1]}", path=path, index=problem[0], column="answer")

    def _inputs(self, rows: pl.DataFrame) -> pl.DataFrame:
        """The columns a verdict depends on (``category`` null unless the rule reads it)."""
        def text(name: str, used: bool = True) -> pl.Expr:
            present = used and name in rows.columns
            return (pl.col(name).cast(pl.String) if present else pl.lit(None, dtype=pl.String)).alias(name)
        return rows.select(text("answer_text"), text("reasoning"), text("answer"),
                           text("category", self.by_category))


def _no_answer(text: str | None, era: str) -> bool:
    """Whether the prediction is no answer: empty, or (VLMEvalKit's eras) a pandas missing-value spelling."""
    return not text if era == OFFICIAL else is_missing_prediction(text)


def _as_read(cell: str, era: str) -> str:
    """The answer cell as the era's evaluator sees it (VLMEvalKit's through pandas)."""
    return cell if era == OFFICIAL else read_by_pandas(cell)
