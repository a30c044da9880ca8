"""The judge-extracted kind (MathVista): rules decide what they can ("prefetch"), a judge extracts the answer from
the rest, then the benchmark's comparison scores the extracted answer (right or wrong).

The benchmark hands in its rules (:class:`ExtractionRules`: VLMEvalKit's prefetch, how a judge reply is read and
its ``post_check``) and its judge (prompt, tries, ``max_tokens``). The judge answers an imported VLMEvalKit judged
file stores are read as this judge's replies under ``extract --stored-verdicts``
(:mod:`mmbatch.extract.stored_verdicts`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from mmbatch.answers.frames import UNCLOSED_NOTE, Decision, decide_distinct, failed_rows, has_answer, with_judge_prompts
from mmbatch.answers.kind import JudgeSpec, KindSettings
from mmbatch.errors import BadInputError

NO_JUDGE_NOTE = "the rules extracted no answer (--no-judge)"


class RuleFailure(Exception):
    """Raised by a benchmark's rules for a row they cannot decide without guessing: in ``prefetch``, the row fails
    (``extract_method`` ``error``) with the message as its note; in ``is_right``, ``extract`` stops with exit 2
    naming the row."""


class ExtractionRules(Protocol):
    """A benchmark's rules for the judge-extracted kind; ``row`` maps column names to cells."""

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns the rules read besides ``question`` and ``answer``."""
        ...

    def problem(self, row: Mapping[str, Any]) -> tuple[str, str] | None:
        """(reason, column) when a row with an answer cannot be scored, else None."""
        ...

    def prefetch(self, prediction: str, row: Mapping[str, Any], settings: KindSettings) -> str | None:
        """The answer decided without the judge, or None."""
        ...

    def is_right(self, extracted: str | None, row: Mapping[str, Any]) -> bool:
        """Whether a decided row's ``extracted`` is the answer."""
        ...


@dataclass(frozen=True)
class JudgeExtractedKind:
    """Answers extracted by rules or a judge, then compared by the benchmark's rules."""

    rules: ExtractionRules
    """The benchmark's prefetch, reply reading and comparison."""
    judge: JudgeSpec | None
    """The extraction judge."""
    name: str = "judge-extracted"
    """Recorded in the metadata."""
    version: str = "1"
    """Bumped when the kind's rules change."""
    binary: bool = True
    """An extracted answer is right or wrong."""
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """None: the kind reads no ``--kind-option``."""
    libraries: tuple[str, ...] = ()
    """Packages whose installed versions can change the rules' verdicts (MathVision's latex2sympy2_extended and
    sympy): recorded with the kind, so a rerun under other versions is not resumed silently."""

    @property
    def score_columns(self) -> tuple[str, ...]:
        """The rules' columns."""
        return self.rules.columns

    def check_answers(self, rows: pl.DataFrame, path: Path | None) -> None:
        """Refuse a row with an answer the rules cannot compare with (no ``question_type``, bad ``choices``...).

        Raises:
            BadInputError: naming the row and the column.
        """
        present = [name for name in ("index", "answer", *self.rules.columns) if name in rows.columns]
        for row in rows.filter(has_answer()).select(present).iter_rows(named=True):
            problem = self.rules.problem(row)
            if problem is not None:
                raise BadInputError(problem[0], path=path, index=row["index"], column=problem[1])

    def decide(self, rows: pl.DataFrame, settings: KindSettings) -> pl.DataFrame:
        """Prefetch, else the judge prompt; once per distinct input."""
        keys = ["answer_text", "reasoning", "answer", *self.rules.columns]
        inputs = rows.select(pl.col(k).cast(pl.String) if k in rows.columns else pl.lit(None, pl.String).alias(k)
                             for k in keys)

        def rule(text: str, reasoning: str | None, *cells: Any) -> Decision:
            try:
                fetched = self.rules.prefetch(text, dict(zip(keys[2:], cells, strict=True)), settings)
            except RuleFailure as exc:
                return None, "error", str(exc), False
            if fetched is not None:
                return fetched, "rule", None, False
            if reasoning == "unclosed":
                return None, "unmatched", UNCLOSED_NOTE, False
            if not settings.use_judge:
                return None, "unmatched", NO_JUDGE_NOTE, False
            return None, "unmatched", None, True

        decided = decide_distinct(inputs, inputs.columns, rule)
        return with_judge_prompts(decided, rows, self.judge.prompts if self.judge else None, settings)

    def score(self, rows: pl.DataFrame) -> pl.Series:
        """1 where the rules find the extracted answer right, 0 otherwise and for failed rows; null without an
        answer."""
        present = [name for name in ("extracted", "answer", *self.rules.columns) if name in rows.columns]
        cells = rows.select(pl.col(name).cast(pl.String) for name in present)
        decided = rows.select(~has_answer() | failed_rows(rows.columns)).to_series()
        values = pl.Series([0.0 if skip else self._right(row, index) for row, skip, index in
                            zip(cells.iter_rows(named=True), decided, self._indices(rows), strict=True)],
                           dtype=pl.Float64)
        return rows.select(pl.when(~has_answer()).then(None).when(failed_rows(rows.columns)).then(0.0)
                           .otherwise(pl.lit(values)).alias("score")).to_series()

    def _right(self, row: Mapping[str, Any], index: object) -> float:
        try:
            return float(self.rules.is_right(row.get("extracted"), row))
        except RuleFailure as exc:
            raise BadInputError(str(exc), index=index, column="extracted") from exc

    @staticmethod
    def _indices(rows: pl.DataFrame) -> list[object]:
        return rows["index"].to_list() if "index" in rows.columns else [None] * rows.height
