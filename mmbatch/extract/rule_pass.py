"""The first pass over the rows: everything decidable without the judge.

Rows are routed once, by columns: rows that failed in ``infer`` stay failed, generate-image rows go to CLIP, rows
with ``choice_logprobs`` to the likelihood ranking, and the generate rows of each benchmark to its answer kind
(:mod:`mmbatch.answers`), which reads them without their reasoning traces (:mod:`mmbatch.extract.reasoning`). What a
kind leaves open becomes a :class:`JudgeTask` (with the prompt the kind built) when the judge is on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from mmbatch.answers.frames import choices_of, option_rows
from mmbatch.answers.image_choice import image_rows
from mmbatch.answers.kind import DECISION_SCHEMA, AnswerKind, KindSettings
from mmbatch.answers.likelihood import decide_likelihood
from mmbatch.benchmarks.registry import find_benchmark
from mmbatch.errors import BadInputError
from mmbatch.extract.decisions import rule_decisions
from mmbatch.extract.options import ExtractOptions
from mmbatch.extract.outcome import JudgeTask
from mmbatch.row_facts import missing
from mmbatch.schema.columns import EXTRACT_METHODS

FAILED_IN_INFER = "the row failed in infer"
_POSITION, _FAILED, _IMAGE, _SCORED = "_position", "_failed", "_image", "_scored"
_GROUP_ID, _IN_GROUP, _TRUTH = "_group_id", "_in_group", "_truth"


@dataclass
class FirstPass:
    """What the rules decided, and what is left for the judge and for CLIP."""

    decisions: pl.DataFrame
    """One row per input row, in order, with the columns of :data:`mmbatch.extract.decisions.SCHEMA` but ``index``:
    the rules' outcome; null (no method) for the rows of :attr:`tasks` and :attr:`image_rows`."""
    asked: dict[str, list[JudgeTask]] = field(default_factory=dict)
    """Rows for the judge, by benchmark, each in file order."""
    image_rows: pl.DataFrame = field(default_factory=pl.DataFrame)
    """The generate-image rows, for CLIP."""
    failed_groups: set[object] = field(default_factory=set)
    """Judge groups (circular groups, or single rows) the rules already found wrong."""


def kind_settings(options: ExtractOptions) -> KindSettings:
    """The settings the answer kinds read, from the stage's options."""
    return KindSettings(use_judge=options.use_judge, choice_rules=options.choice_rules,
                        yes_no_rule=options.yes_no_rule, options=options.kind_options,
                        stored_verdicts=options.stored_verdicts)


def check_kind_options(kinds: Mapping[str, AnswerKind], settings: KindSettings) -> None:
    """Refuse a ``--kind-option`` no kind of the file reads, or a value it does not allow.

    Raises:
        BadInputError: naming the option and what is allowed.
    """
    declared: dict[str, tuple[str, ...]] = {}
    for kind in kinds.values():
        declared.update(kind.options)
    for name, value in settings.options:
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise BadInputError(f"--kind-option {name}: no answer kind of this file reads it (options: {known})")
        if value not in declared[name]:
            raise BadInputError(f"--kind-option {name}={value}: choose one of {', '.join(declared[name])}")


def first_pass(frame: pl.DataFrame, texts: pl.DataFrame, options: ExtractOptions, *, letter_scoring: bool,
               kinds: Mapping[str, AnswerKind]) -> FirstPass:
    """Route every row and decide what the rules can, by columns: the benchmark's kind once per partition.

    Args:
        frame: the predictions (a batch of them), with ``index``, ``g_index``, ``benchmark`` and ``mode``.
        texts: per row, ``answer_text`` (null where there is no prediction) and ``reasoning``
            (:func:`mmbatch.extract.reasoning.answer_texts`).
        options: the stage's options.
        letter_scoring: ``infer`` scored the letters ``A.``, ``B.``.. instead of the option texts.
        kinds: the answer kind of each benchmark of the file (checked by :func:`check_kind_options`).

    Raises:
        BadInputError: a likelihood row whose log-probabilities do not fit its options, or an answer a kind cannot
            score.
    """
    settings = kind_settings(options)
    circular = [name for name in kinds if (found := find_benchmark(name)) is not None and found.circular]
    columns = frame.columns
    rows = frame.with_columns(
        pl.when(missing("prediction") if "prediction" in columns else pl.lit(True)).then(pl.lit(""))
        .otherwise(texts["answer_text"]).alias("answer_text"),
        texts["reasoning"].alias("reasoning"),
        (~missing("error") if "error" in columns else pl.lit(False)).alias(_FAILED),
        image_rows(columns).alias(_IMAGE),
        (pl.col("choice_logprobs").is_not_null() if "choice_logprobs" in columns else pl.lit(False)).alias(_SCORED),
        *_judge_group(columns, circular),
        _truth(columns),
    ).with_row_index(_POSITION)
    result = FirstPass(rule_decisions(frame.height))
    failed = rows.filter(pl.col(_FAILED))
    if failed.height:
        _place(result, failed[_POSITION], extracted=None, method="error", note=FAILED_IN_INFER,
               error=failed["error"].cast(pl.String))
    result.image_rows = frame.filter(rows[_IMAGE])
    rest = _without(rows, pl.col(_FAILED) | pl.col(_IMAGE))
    scored = rest.filter(pl.col(_SCORED))
    if scored.height:
        ranked = decide_likelihood(scored, options.likelihood_reduction, letter_scoring=letter_scoring,
                                   path=options.input)
        _place(result, scored[_POSITION], extracted=ranked["extracted"], method=ranked["extract_method"],
               note=ranked["extract_note"], error=ranked["error"])
    generate = _without(rest, pl.col(_SCORED))
    for name, kind in kinds.items():
        of_kind = generate if len(kinds) == 1 else generate.filter(pl.col("benchmark") == name)
        if of_kind.height:
            result.asked[name] = _decide_generate(of_kind, kind, settings, options.input, result)
    if options.use_judge and options.skip_failed_groups:  # a batch's wrong rows may fail a group asked in another
        result.failed_groups = _known_wrong_groups(rows, result.decisions)
    return result


def _without(rows: pl.DataFrame, leave_out: pl.Expr) -> pl.DataFrame:
    """``rows`` without those ``leave_out`` marks; the frame itself when none is marked (a filter copies every
    column of a million-row table)."""
    return rows.filter(~leave_out) if rows.select(leave_out.any()).item() else rows


def _judge_group(columns: list[str], circular: list[str]) -> tuple[pl.Expr, pl.Expr]:
    """Rows judged one after another: the circular group of a scored row of a circular benchmark, else the row."""
    scored = ~missing("answer") if "answer" in columns else pl.lit(False)
    in_group = pl.col("benchmark").is_in(circular) & scored
    return pl.when(in_group).then(pl.col("g_index")).otherwise(pl.col("index")).alias(_GROUP_ID), in_group.alias(
        _IN_GROUP)


def _truth(columns: list[str]) -> pl.Expr:
    """The ground truth as the judge compares it: stripped, null where missing."""
    if "answer" not in columns:
        return pl.lit(None, dtype=pl.String).alias(_TRUTH)
    return pl.when(missing("answer")).then(None).otherwise(pl.col("answer").cast(pl.String).str.strip_chars()) \
        .alias(_TRUTH)


def group_key(in_group: bool, group_id: object) -> object:
    """The key the judge's rounds group rows by."""
    return ("group", group_id) if in_group else ("row", group_id)


def _place(result: FirstPass, positions: pl.Series, *, extracted: pl.Series | None, method: pl.Series | str,
           note: pl.Series | str | None = None, error: pl.Series | None = None) -> None:
    """Write decisions at ``positions`` of :attr:`FirstPass.decisions`."""
    def values(value: pl.Series | str | None) -> pl.Series:
        if isinstance(value, pl.Series):
            return value.cast(pl.String)
        return pl.repeat(value, positions.len(), dtype=pl.String, eager=True)  # not a list of len() copies

    decisions = result.decisions
    if positions.len() == decisions.height and bool((positions == pl.int_range(0, positions.len(), eager=True)).all()):
        updates = {"extracted": values(extracted), "extract_method": values(method), "extract_note": values(note),
                   "error": values(error)}
        result.decisions = decisions.with_columns(series.alias(name) for name, series in updates.items())
        return
    result.decisions = decisions.with_columns(
        decisions["extracted"].scatter(positions, values(extracted)),
        decisions["extract_method"].scatter(positions, values(method)),
        decisions["extract_note"].scatter(positions, values(note)),
        decisions["error"].scatter(positions, values(error)),
    )


def _decide_generate(rows: pl.DataFrame, kind: AnswerKind, settings: KindSettings, path: Path,
                     result: FirstPass) -> list[JudgeTask]:
    """One benchmark's generate rows through its kind: decided rows placed, and judge tasks for what it leaves
    open (returned)."""
    kind.check_answers(rows, path)
    decided = kind.decide(rows.drop(_POSITION, _FAILED, _IMAGE, _SCORED, _GROUP_ID, _IN_GROUP, _TRUTH), settings)
    _check_decisions(kind, decided, rows.height)
    asks = decided["judge_prompt"].is_not_null()
    kept = ~asks
    _place(result, rows[_POSITION].filter(kept), extracted=decided["extracted"].filter(kept),
           method=decided["extract_method"].filter(kept), note=decided["extract_note"].filter(kept))
    if not asks.any():
        return []
    if kind.judge is None or not settings.use_judge:
        raise RuntimeError(f"answer kind {kind.name!r} asked for the judge " +
                           ("but has no judge" if kind.judge is None else "under --no-judge"))
    asked = rows.filter(asks)
    judge = kind.judge.under(settings)
    if judge.choices is not None:  # options kept outside option columns (MathVista's `choices` list)
        choices = judge.choices(asked)
    else:
        letters, options = option_rows(asked)
        choices = [choices_of(letters, present) for present in options]
    facts = asked.select("index", _IN_GROUP, _GROUP_ID, _TRUTH, decided["judge_prompt"].filter(asks))
    return [JudgeTask(int(index), group_key(in_group, group_id), judge, prompt, truth, present)
            for (index, in_group, group_id, truth, prompt), present in zip(facts.iter_rows(), choices, strict=True)]


def _known_wrong_groups(rows: pl.DataFrame, decisions: pl.DataFrame) -> set[object]:
    """The judge groups of rows the rules decided and got wrong (scored, not failed, not the ground truth)."""
    decided = rows.select(_IN_GROUP, _GROUP_ID, _TRUTH).hstack(decisions.select("extracted", "extract_method"))
    extracted = pl.col("extracted").str.strip_chars()
    wrong = decided.filter(pl.col("extract_method").is_not_null() & (pl.col("extract_method") != "error")
                           & pl.col(_TRUTH).is_not_null() & (extracted.is_null() | (extracted != pl.col(_TRUTH))))
    return {group_key(in_group, group_id) for in_group, group_id in
            wrong.select(_IN_GROUP, _GROUP_ID).unique(maintain_order=True).iter_rows()}


def _check_decisions(kind: AnswerKind, decided: pl.DataFrame, rows: int) -> None:
    """A kind's decisions must have one row per input and the declared columns and methods: a kind that breaks
    this is a bug to stop at, not a file to write."""
    if decided.height != rows or any(name not in decided.columns for name in DECISION_SCHEMA):
        raise RuntimeError(f"answer kind {kind.name!r} returned {decided.height} decisions with columns "
                           f"{decided.columns} for {rows} rows; expected {', '.join(DECISION_SCHEMA)}")
    unknown = set(decided["extract_method"].unique().to_list()) - set(EXTRACT_METHODS)
    if unknown:
        raise RuntimeError(f"answer kind {kind.name!r} returned unknown extract methods {sorted(map(str, unknown))}"
                           f"; declare them in mmbatch/schema/columns.py EXTRACT_METHODS")
