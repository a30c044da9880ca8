"""The rules over a whole file, a batch at a time: :func:`~mmbatch.extract.rule_pass.first_pass` on each batch, the
results joined in file order.

What a kind's Python decided for an input is remembered for the later batches (:mod:`mmbatch.answers.run_memory`),
so the file's batches cost what one pass over the whole file would, while only one batch is held; of each row only its
decision is kept (:class:`~mmbatch.extract.held_decisions.HeldDecisions`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import polars as pl

from mmbatch.answers.frames import nulls
from mmbatch.answers.kind import AnswerKind
from mmbatch.extract.held_decisions import HeldDecisions
from mmbatch.extract.options import ExtractOptions
from mmbatch.extract.outcome import JudgeTask
from mmbatch.extract.predictions import Predictions
from mmbatch.extract.reasoning import answer_texts
from mmbatch.extract.rule_pass import check_kind_options, first_pass, kind_settings
from mmbatch.schema.validate import answer_names_empty_option
from mmbatch.table_batches import read_ahead


@dataclass
class RuleOutcomes:
    """What the rules decided over the file, and what is left for the judge and for CLIP."""

    decisions: HeldDecisions
    """Every row's decision; null (no method) for the rows of :attr:`tasks` and :attr:`image_rows`."""
    asked: dict[str, list[JudgeTask]] = field(default_factory=dict)
    """Rows for the judge, by benchmark, each in file order."""
    image_rows: pl.DataFrame = field(default_factory=pl.DataFrame)
    """The generate-image rows, for CLIP."""
    failed_groups: set[object] = field(default_factory=set)
    """Judge groups (circular groups, or single rows) the rules already found wrong, over the whole file."""
    traces: dict[str, int] = field(default_factory=dict)
    """Rows whose reasoning trace was removed (``closed``) or never closed (``unclosed``)."""
    answers_naming_empty_option: int = 0
    """Rows whose answer names an option left empty (:func:`mmbatch.schema.validate.answer_names_empty_option`)."""

    @property
    def tasks(self) -> list[JudgeTask]:
        """Rows for the judge: each benchmark's in file order, the benchmarks in order of first appearance (as one
        pass over the whole file lists them)."""
        return [task for tasks in self.asked.values() for task in tasks]

    def drop_tasks(self) -> None:
        """No row is left for the judge (``--stored-verdicts`` decided them)."""
        self.asked = {}


def decide_by_rules(predictions: Predictions, options: ExtractOptions, kinds: Mapping[str, AnswerKind], *,
                    letter_scoring: bool) -> RuleOutcomes:
    """Every batch of ``predictions`` through :func:`first_pass`.

    Raises:
        BadInputError: as :func:`first_pass`, or a ``--kind-option`` no kind of the file reads.
    """
    check_kind_options(kinds, kind_settings(options))
    decisions = HeldDecisions([])
    asked: dict[str, list[JudgeTask]] = {name: [] for name in kinds}
    images: list[pl.DataFrame] = []
    failed_groups: set[object] = set()
    traces = {"closed": 0, "unclosed": 0}
    naming_empty = 0
    for frame in read_ahead(predictions.batch, predictions.count):
        predicted = frame["prediction"] if "prediction" in frame.columns else nulls("prediction", frame.height)
        texts, found = answer_texts(predicted, options.reasoning_tags)
        part = first_pass(frame, texts, options, letter_scoring=letter_scoring, kinds=kinds)
        decisions.append(part.decisions)  # held compactly from now on: only this batch's are held whole
        for name, tasks in part.asked.items():
            asked[name].extend(tasks)
        images.append(part.image_rows)
        failed_groups |= part.failed_groups
        traces = {name: count + found[name] for name, count in traces.items()}
        naming_empty += int(answer_names_empty_option(frame).sum())
    return RuleOutcomes(
        decisions=decisions, asked={name: tasks for name, tasks in asked.items() if tasks},
        image_rows=pl.concat(images, how="vertical"),
        failed_groups=failed_groups if any(asked.values()) else set(),
        traces=traces, answers_naming_empty_option=naming_empty)
