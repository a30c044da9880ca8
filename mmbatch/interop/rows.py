"""What every importer and exporter shares: their options, their results, and the finishing of imported rows.

Imported rows become an ordinary mmbatch predictions file: the columns of
:data:`mmbatch.schema.columns.PREDICTIONS` in their declared order, then every other column of the source untouched.
A foreign file rarely knows the exact prompt the model saw, so ``prompt_template`` is ``imported`` and ``prompt`` is
the source's recorded prompt when it has one, else the question text (``import.prompt_source`` in the metadata says
which).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch.errors import BadInputError
from mmbatch.prompts import prompt_hash
from mmbatch.schema.columns import PREDICTIONS, option_columns
from mmbatch.schema.validate import validate_frame

IMPORTED_TEMPLATE = "imported"
"""``prompt_template`` of every imported row: the prompt was rendered by another tool, not by mmbatch."""

PROMPT_FROM_SOURCE = "recorded by the source tool"
PROMPT_FROM_QUESTION = "question text (the source does not record the rendered prompt)"


@dataclass(frozen=True)
class ImportOptions:
    """Options of ``mmbatch import``."""

    input: Path
    """The foreign file or folder to read."""
    benchmark: str | None = None
    """``--benchmark``; None lets the importer recognise it from the data."""
    questions: tuple[Path, ...] = ()
    """Question files joined with the answers (``llava-jsonl``, ``seed-results``)."""
    model: str | None = None
    """``--model``; None takes the name recorded in the source, else one read from the file or folder name."""
    renumber_duplicates: bool = False
    """``--duplicate-index renumber``: give rows that repeat an earlier row's ``index`` new indices (the source's in
    ``source_index``) instead of refusing the file."""
    judged: Path | None = None
    """``--judged``: VLMEvalKit's judged or intermediate file of the same predictions (``vlmevalkit`` only)."""


@dataclass(frozen=True)
class ImportResult:
    """Rows read from a foreign file, and what to record about them."""

    frame: pl.DataFrame
    """Predictions-stage rows (finished by :func:`finish_rows`)."""
    settings: dict[str, Any] = field(default_factory=dict)
    """Recorded under ``import`` in the output metadata: format, source, benchmark, model, counts."""


@dataclass(frozen=True)
class ExportResult:
    """What an exporter wrote."""

    paths: tuple[Path, ...]
    """Files written."""
    rows: int
    """Rows written."""
    notes: tuple[str, ...] = ()
    """Things the user must know (e.g. predictions whose line breaks were replaced)."""


def submitted_answers(frame: pl.DataFrame) -> tuple[pl.Series, tuple[str, ...]]:
    """The text an export hands an official evaluator for each row, and a note when it is not ``prediction``.

    An extracted file's ``answer_text`` is the prediction without its reasoning traces (``<think>...</think>``):
    what mmbatch matched. The evaluation server and the MME tool match the text they are given, so they get that
    text, and score what mmbatch scored, rather than letters and yes/no words inside the trace (MME's tool reads only
    the first four characters). A predictions file, which has no ``answer_text``, gives its ``prediction``.
    """
    if "prediction" not in frame.columns:
        return pl.Series("prediction", [None] * frame.height, dtype=pl.String), ()
    prediction = frame["prediction"].cast(pl.String)
    if "answer_text" not in frame.columns:
        return prediction, ()
    answers = frame["answer_text"].cast(pl.String)
    changed = int((answers.ne_missing(prediction)).sum())
    notes = (f"{changed} prediction(s) written without their reasoning traces (the extracted file's answer_text, "
             "what mmbatch matched)",) if changed else ()
    return answers.alias("prediction"), notes


def with_imported_prompts(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with the prompt columns of rows another tool prompted: ``prompt`` (the source's, else the
    question), ``prompt_template`` = ``imported`` and ``prompt_hash``."""
    prompt = pl.coalesce("prompt", "question") if "prompt" in frame.columns else pl.col("question")
    frame = frame.with_columns(prompt.alias("prompt"))
    return frame.with_columns(
        pl.lit(IMPORTED_TEMPLATE).alias("prompt_template"),
        pl.col("prompt").map_elements(prompt_hash, return_dtype=pl.String).alias("prompt_hash"),
    )


DUPLICATE_INDEX_POLICIES = ("refuse", "renumber")
"""``import --duplicate-index``: refuse a file that repeats an ``index`` (default), or renumber the repeats."""


def renumber_duplicates(frame: pl.DataFrame, *, path: Path) -> pl.DataFrame:
    """Give every row that repeats an earlier row's ``index`` a new one, past the largest, in file order.

    VLMEvalKit's SEEDBench2 table repeats 3,099 indices (two different questions each); VLMEvalKit keys everything
    by ``index``, so both rows of a pair get one verdict. Renumbered, each row is scored on its own. The source's
    index stays in ``source_index`` (only on renumbered rows), so the pairs can be listed and traced back.

    Raises:
        BadInputError: an empty index (nothing to renumber from).
    """
    if frame["index"].null_count():
        raise BadInputError("empty index", path=path, column="index", index="(empty)")
    repeat = ~frame["index"].is_first_distinct()
    if not repeat.any():
        return frame
    indices = frame["index"].cast(pl.Int64)
    largest = indices.max()
    start = (largest if isinstance(largest, int) else 0) + 1  # an Int64 column without nulls: max is an int
    new_index = pl.Series([start + k for k in range(int(repeat.sum()))], dtype=pl.Int64)
    source = indices.zip_with(repeat, pl.Series([None] * frame.height, dtype=pl.Int64))
    renumbered = indices.clone().scatter(repeat.arg_true(), new_index)  # scatter writes in place
    return frame.with_columns(source.alias("source_index"), renumbered.alias("index"))


def finish_rows(frame: pl.DataFrame, *, model: str, path: Path) -> pl.DataFrame:
    """Fill the predictions-stage columns a foreign file lacks and check the result against the schema.

    Adds ``prompt`` (the question where the source has none), ``prompt_template`` = ``imported``,
    ``prompt_hash``, ``mode`` = ``generate``, ``model`` (when the source has none), ``error`` (null), and orders the
    declared columns first.

    Raises:
        BadInputError: the rows break the predictions schema (duplicate index, answer not an option, ...), naming
            the rows.
    """
    frame = with_imported_prompts(frame).with_columns(pl.lit("generate").alias("mode"))
    if "model" not in frame.columns:
        frame = frame.with_columns(pl.lit(model).alias("model"))
    else:
        frame = frame.with_columns(pl.col("model").fill_null(model))
    if "error" not in frame.columns:
        frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias("error"))
    frame = order_columns(frame)
    checked, violations = validate_frame(frame, PREDICTIONS)
    if violations:
        more = f" (and {len(violations) - 1} more problem(s))" if len(violations) > 1 else ""
        raise BadInputError(f"the imported rows are not a valid predictions file: {violations[0]}{more}", path=path)
    return checked


def order_columns(frame: pl.DataFrame) -> pl.DataFrame:
    """Declared predictions columns first (options after ``hint``), then the source's other columns as they were."""
    declared = [c.name for c in PREDICTIONS.columns]
    options = option_columns(frame.columns)
    ordered: list[str] = []
    for name in declared:
        if name in frame.columns:
            ordered.append(name)
        if name == "hint":
            ordered += options
    if "hint" not in frame.columns:
        ordered += [o for o in options if o not in ordered]
    ordered += [c for c in frame.columns if c not in ordered]
    return frame.select(ordered)


def require_columns(frame: pl.DataFrame, names: tuple[str, ...], *, path: Path, what: str) -> None:
    """Fail clearly when a foreign file lacks a column the format needs."""
    missing = [name for name in names if name not in frame.columns]
    if missing:
        raise BadInputError(f"not a {what} file: missing column(s) {', '.join(missing)}", path=path,
                            column=missing[0])


def default_model(options: ImportOptions, recorded: str | None = None) -> str:
    """``--model``, else the model name the source records, else the file or folder name without the benchmark and
    file-kind words (:func:`mmbatch.interop.model_names.model_from_path`)."""
    from mmbatch.interop.model_names import model_from_path

    if options.model:
        return options.model
    if recorded:
        return recorded
    return model_from_path(options.input)
