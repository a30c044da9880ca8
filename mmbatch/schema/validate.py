"""Check a table against its stage's declared columns, reporting every violation with its row ``index``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from mmbatch.row_facts import missing, present_letters
from mmbatch.schema.columns import OPTION_LETTERS, STAGES, Stage, option_columns
from mmbatch.schema.types import polars_type

MAX_REPORTED_PER_CHECK = 20
"""Rows named per kind of violation before the rest are counted."""


@dataclass(frozen=True)
class Violation:
    """One thing wrong with a file."""

    message: str
    """What is wrong."""
    column: str | None = None
    """The column concerned, if any."""
    indices: tuple[Any, ...] = ()
    """Row indices concerned (the first few)."""
    count: int = 0
    """How many rows are concerned in all."""

    def __str__(self) -> str:
        where = f"column '{self.column}': " if self.column else ""
        if not self.indices:
            return where + self.message
        shown = ", ".join(str(i) for i in self.indices)
        more = f" and {self.count - len(self.indices)} more" if self.count > len(self.indices) else ""
        return f"{where}{self.message} (rows index={shown}{more})"


def detect_stage(frame: pl.DataFrame, metadata: dict[str, Any] | None = None) -> Stage:
    """The stage a table belongs to: from its metadata when recorded, else from its columns."""
    recorded = (metadata or {}).get("stage")
    if recorded in STAGES:
        return STAGES[recorded]
    columns = set(frame.columns)
    if {"metric", "value", "level"} <= columns:
        return STAGES["scores"]
    if "hit" in columns:
        return STAGES["hits"]
    if "extract_method" in columns or "extracted" in columns:
        return STAGES["extracted"]
    if "prediction" in columns or "choice_logprobs" in columns:
        return STAGES["predictions"]
    return STAGES["prepared"]


def _row_ids(frame: pl.DataFrame, mask: pl.Series) -> tuple[tuple[Any, ...], int]:
    count = int(mask.sum())
    if "index" in frame.columns:
        ids = frame.filter(mask)["index"].head(MAX_REPORTED_PER_CHECK).to_list()
    else:
        ids = [f"#{i}" for i in mask.arg_true().head(MAX_REPORTED_PER_CHECK).to_list()]
    return tuple(ids), count


def validate_frame(frame: pl.DataFrame, stage: Stage) -> tuple[pl.DataFrame, list[Violation]]:
    """Every violation of ``stage`` in ``frame``; also returns the frame with declared types applied where possible.

    Text columns (from TSV or xlsx) are cast to their declared types; cells that do not fit are violations.
    """
    violations: list[Violation] = []
    missing = [name for name in stage.required if name not in frame.columns]
    violations += [Violation("required column is missing", column=name) for name in missing]

    frame, type_violations = _apply_types(frame, stage)
    violations += type_violations

    for name in frame.columns:
        col = stage.column(name)
        if col is None:
            continue
        if not col.nullable:
            mask = frame[name].is_null()
            if mask.any():
                violations.append(Violation("empty value in a required column", name, *_row_ids(frame, mask)))
        if col.enum is not None and frame.schema[name] == pl.String:
            mask = frame[name].is_not_null() & ~frame[name].is_in(list(col.enum))
            if mask.any():
                violations.append(Violation(f"value not one of {', '.join(col.enum)}", name, *_row_ids(frame, mask)))

    if "index" in frame.columns and frame.schema["index"] == pl.Int64:
        mask = frame["index"].is_duplicated()
        if mask.any():
            violations.append(Violation("duplicate index", "index", *_row_ids(frame, mask)))

    if stage.option_columns:
        violations += _option_violations(frame)
    return frame, violations


def _apply_types(frame: pl.DataFrame, stage: Stage) -> tuple[pl.DataFrame, list[Violation]]:
    violations: list[Violation] = []
    casts = []
    for name, dtype in frame.schema.items():
        col = stage.column(name)
        if col is None or name in OPTION_LETTERS:
            continue
        want = polars_type(col.dtype)
        if dtype == want or dtype == pl.Null:
            continue
        if dtype == pl.String:
            text = frame[name]
            if col.dtype.startswith("list["):
                cast = text.map_elements(_json_list_or_none, return_dtype=want)
            else:
                cleaned = text.str.strip_chars()
                if col.dtype == "int64":
                    cleaned = cleaned.str.replace(r"\.0+$", "")
                cast = cleaned.cast(want, strict=False)
            mask = cast.is_null() & text.is_not_null()
            if mask.any():
                violations.append(Violation(f"not a valid {col.dtype} value", name, *_row_ids(frame, mask)))
            casts.append(cast.alias(name))
        elif dtype.is_numeric() and want.is_numeric():
            try:
                casts.append(frame[name].cast(want, strict=True))
            except pl.exceptions.InvalidOperationError:
                violations.append(Violation(f"has type {dtype}, expected {col.dtype}", name))
        else:
            violations.append(Violation(f"has type {dtype}, expected {col.dtype}", name))
    return (frame.with_columns(casts) if casts else frame), violations


def _json_list_or_none(text: str) -> list[Any] | None:
    import json

    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, list) else None


def answer_names_empty_option(frame: pl.DataFrame) -> pl.Series:
    """Rows whose answer is the letter of an option column that is empty in that row (and that have other options).

    VLMEvalKit's own tables have such rows: its SEEDBench_IMG table holds 33 questions whose correct option reads
    ``None``, which pandas turned into a missing value. They are valid rows that can never be answered right (the
    letter is not among the choices a model or a rule can pick), so they are accepted and counted wrong everywhere,
    as VLMEvalKit counts them, and every command that meets them says how many there are.
    """
    letters = option_columns(frame.columns)
    if not letters or "answer" not in frame.columns or frame.schema["answer"] != pl.String:
        return pl.Series([False] * frame.height, dtype=pl.Boolean)
    # the answer stripped and each option's emptiness once, then combined: in one expression polars stripped the
    # answer again for every letter (twice the time)
    cells = frame.select(pl.col("answer").str.strip_chars().alias("_answer"),
                         *(missing(letter).alias(f"_missing_{letter}") for letter in letters))
    empty_named = pl.any_horizontal([(pl.col("_answer") == letter) & pl.col(f"_missing_{letter}")
                                     for letter in letters])
    others = pl.any_horizontal([~pl.col(f"_missing_{letter}") for letter in letters])
    return cells.select((empty_named & others).fill_null(False).alias("mask"))["mask"]


def answer_is_option_text(frame: pl.DataFrame) -> pl.Series:
    """Rows whose answer is not an option letter but, exactly, the text of one of the row's options.

    VLMEvalKit's RealWorldQA table has one: question 731 answers ``Uphill``, option A's text, where every other row
    gives a letter. VLMEvalKit compares letters, so the row can never be right; it is accepted and counted wrong, as
    VLMEvalKit counts it, and every command that meets such rows says how many there are. An answer that is neither
    a letter nor an option's text is still refused.
    """
    letters = option_columns(frame.columns)
    if not letters or "answer" not in frame.columns or frame.schema["answer"] != pl.String:
        return pl.Series([False] * frame.height, dtype=pl.Boolean)
    answer = pl.col("answer")
    not_a_letter = ~answer.str.strip_chars().is_in(list(letters))
    is_text = pl.any_horizontal([(answer == pl.col(letter).cast(pl.String)).fill_null(False) for letter in letters])
    return frame.select((not_a_letter & is_text).fill_null(False).alias("mask"))["mask"]


def _option_violations(frame: pl.DataFrame) -> list[Violation]:
    letters = option_columns(frame.columns)
    violations: list[Violation] = []
    if not letters:
        return violations
    present = present_letters(letters)
    checked = frame.select(present.alias("letters"), *(pl.col(c) for c in ("answer", "mode") if c in frame.columns))
    if "answer" in frame.columns and frame.schema["answer"] == pl.String:
        has_options = checked["letters"].list.len() > 0
        answer = checked["answer"].str.strip_chars()
        mask = has_options & answer.is_not_null() & ~checked["letters"].list.contains(answer).fill_null(False)
        mask = mask & ~answer_names_empty_option(frame) & ~answer_is_option_text(frame)
        if mask.any():
            violations.append(Violation("answer is not one of the row's option letters", "answer",
                                        *_row_ids(frame, mask)))
    if "mode" in frame.columns:
        mask = (checked["mode"] == "likelihood").fill_null(False) & (checked["letters"].list.len() < 2)
        if mask.any():
            violations.append(Violation("likelihood mode needs at least two options", "mode", *_row_ids(frame, mask)))
    for name in ("choice_logprobs", "choice_ntokens"):
        if name in frame.columns and isinstance(frame.schema[name], pl.List):
            lengths = frame[name].list.len()
            mask = frame[name].is_not_null() & (lengths != checked["letters"].list.len())
            if mask.any():
                violations.append(Violation("needs one value per present option", name, *_row_ids(frame, mask)))
    return violations
