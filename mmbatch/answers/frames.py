"""Columnar helpers every answer kind shares: decide each distinct input once, options, missing answers, failures.

A million predictions hold far fewer distinct (answer text, options) pairs (circular copies, repeated short answers),
and a rule's outcome depends only on those inputs, so :func:`decide_distinct` runs a kind's Python rule once per
distinct input and spreads the result back over the rows; a stage reading its file in batches remembers the results
across them (:mod:`mmbatch.answers.run_memory`), so that each distinct input of the file is decided once.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from itertools import repeat
from typing import Any

import polars as pl

from mmbatch.answers.kind import DECISION_SCHEMA, JudgeSpec, KindSettings
from mmbatch.answers.run_memory import function_identity, once_per_input, row_hashes
from mmbatch.row_facts import missing
from mmbatch.schema.columns import OPTION_LETTERS

Decision = tuple[str | None, str, str | None, bool]
"""(extracted, extract_method, extract_note, ask the judge) for one distinct input."""

UNCLOSED_NOTE = "the reasoning trace never closed (cut off by --max-new-tokens?), so no answer followed it"
"""The note of a row whose reasoning trace never closed: no answer followed it, so the judge is not asked."""

STORED_REPLY_PROMPT = "(no prompt built: --stored-verdicts reads this row's judge reply from the file)"
"""The ``judge_prompt`` of a row that asks under ``--stored-verdicts``: marked as asking, its prompt never sent (a
file imported with its judge's replies may lack what the prompt needs, such as LLaVA-Bench's reference answers)."""

_ROW = "__row"


def decide_distinct(rows: pl.DataFrame, keys: Sequence[str], rule: Callable[..., Decision], *,
                    inputs: Callable[[pl.DataFrame], pl.DataFrame] | None = None) -> pl.DataFrame:
    """``rule(*values)`` once per distinct combination of ``keys`` (nulls included), one result per row, in order.

    ``inputs`` turns the distinct rows (their ``keys`` columns) into the rule's arguments, column by column (e.g.
    option texts with missing options as null); by default the rule gets the ``keys`` values themselves. ``rule``
    and ``inputs`` must depend on nothing but their arguments and the values they close over: within a stage run
    their results are remembered across batches (:mod:`mmbatch.answers.run_memory`).

    Returns:
        The columns ``extracted``, ``extract_method``, ``extract_note`` and ``_ask_judge`` (Boolean).
    """
    schema = {name: DECISION_SCHEMA[name] for name in ("extracted", "extract_method", "extract_note")}
    schema["_ask_judge"] = pl.Boolean()
    if rows.height == 0:
        return pl.DataFrame(schema=schema)
    distinct, of_row = distinct_rows(columns_as_they_lie(rows, keys))

    def decide(unseen: pl.DataFrame) -> pl.DataFrame:
        arguments = unseen if inputs is None else inputs(unseen)
        return pl.DataFrame([rule(*values) for values in arguments.iter_rows()], schema=schema, orient="row")

    identity = ("decide_distinct", tuple(keys), function_identity(rule),
                None if inputs is None else function_identity(inputs))
    return once_per_input(distinct, decide, identity)[of_row]


def distinct_rows(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.Series]:
    """The distinct rows of ``rows`` (first occurrences, in order) and, for each row, the position of its own.

    Rows are told apart by a 64-bit hash of their cells, and every row is then checked cell by cell against the
    distinct row it was given; should two different rows ever share a hash, the exact (slower) grouping is used.
    """
    # each column hashed where it lies, then the rows of those hashes: a row hash over columns chunked differently
    # (the input's row groups beside new one-chunk columns) copied every text column into one chunk first (+240 MiB
    # at a million MMBench rows)
    hashes = row_hashes(rows)
    first = hashes.is_first_distinct()
    distinct = rows.filter(first)
    ids = hashes.to_frame("h").join(hashes.filter(first).to_frame("h").with_row_index(_ROW), on="h", how="left",
                                    maintain_order="left")[_ROW]
    # one column spread back at a time: spreading every column at once held a copy of the option texts of every row
    # (+170 MiB at a million MMBench rows)
    if all(rows[name].eq_missing(distinct[name].gather(ids)).all() for name in rows.columns):
        return distinct, ids
    grouped = rows.with_row_index(_ROW).group_by(rows.columns, maintain_order=True).agg(pl.col(_ROW))
    exploded = grouped.with_row_index("_id").select("_id", _ROW).explode(_ROW).sort(_ROW)
    return grouped.drop(_ROW), exploded["_id"]


def columns_as_they_lie(frame: pl.DataFrame, names: Iterable[str]) -> pl.DataFrame:
    """The columns ``names`` of ``frame`` as a frame, each column's chunks kept as they are.

    ``frame.select(names)`` puts the columns into one chunk each whenever their chunks differ (an input's columns,
    one chunk per Parquet row group, beside columns made since, in one chunk), copying them: +200 MiB of option
    texts at a million MMBench rows. Column-wise work (hashes, expressions over one column) needs no such copy.
    """
    return pl.DataFrame([frame[name] for name in names])


def nulls(name: str, height: int, dtype: Any = pl.String) -> pl.Series:
    """A column of ``height`` nulls."""
    return pl.repeat(None, height, dtype=dtype, eager=True).alias(name)


def with_judge_prompts(decided: pl.DataFrame, rows: pl.DataFrame,
                       prompts: Callable[[pl.DataFrame], pl.Series] | None,
                       settings: KindSettings | None = None) -> pl.DataFrame:
    """Turn ``_ask_judge`` into ``judge_prompt``: the prompts of the rows that ask, built only for them
    (:data:`STORED_REPLY_PROMPT` instead under ``settings.stored_verdicts``)."""
    ask = decided["_ask_judge"]
    prompt = nulls("judge_prompt", decided.height, pl.String)
    if prompts is not None and ask.any():
        if settings is not None and settings.stored_verdicts:
            built = pl.Series([STORED_REPLY_PROMPT] * int(ask.sum()), dtype=pl.String)
        else:
            built = prompts(rows.filter(ask))
        prompt = prompt.scatter(ask.arg_true(), built)
    return decided.drop("_ask_judge").with_columns(prompt)


def decide_all_by_judge(rows: pl.DataFrame, settings: KindSettings, judge: JudgeSpec | None,
                        no_judge_note: str) -> pl.DataFrame:
    """The decisions of a kind with no rule of its own (a judge grades or reviews every answer): each row with an
    answer asks the judge (once per distinct input), or stays unmatched with ``no_judge_note`` under ``--no-judge``,
    or with :data:`UNCLOSED_NOTE` when its reasoning trace never closed."""

    def rule(text: str, reasoning: str | None) -> Decision:
        if reasoning == "unclosed":
            return None, "unmatched", UNCLOSED_NOTE, False
        if not settings.use_judge:
            return None, "unmatched", no_judge_note, False
        return None, "unmatched", None, True

    decided = decide_distinct(rows, ("answer_text", "reasoning"), rule)
    return with_judge_prompts(decided, rows, judge.under(settings).prompts if judge is not None else None, settings)


def option_texts(columns: Collection[str]) -> list[pl.Expr]:
    """One expression per option letter among ``columns``: its text, or null where the option is missing."""
    return [pl.when(~missing(letter)).then(pl.col(letter).cast(pl.String)).otherwise(None).alias(letter)
            for letter in OPTION_LETTERS if letter in columns]


def option_rows(rows: pl.DataFrame) -> tuple[list[str], Iterator[tuple[str | None, ...]]]:
    """The option letters among ``rows``' columns and, per row, their texts (null where missing), row by row."""
    options = rows.select(option_texts(rows.columns))
    return options.columns, (options.iter_rows() if options.width else repeat((), rows.height))


def choices_of(letters: Sequence[str], texts: Sequence[str | None]) -> dict[str, str]:
    """Letter -> text of the present options (``texts`` from :func:`option_texts`, in letter order)."""
    return {letter: text for letter, text in zip(letters, texts, strict=True) if text is not None}


def has_answer() -> pl.Expr:
    """True where ``answer`` holds a ground truth (not null, not blank): the rows a score is given to."""
    return has_text("answer")


def has_text(column: str) -> pl.Expr:
    """True where ``column`` holds more than whitespace (null: False).

    Asked of the characters, not of the stripped text: stripping a column of long texts (TextVQA's ten answers a
    row) made a copy of all of them, +137 MiB at a million rows. ``\\S`` is any character but the Unicode
    whitespace ``str.strip_chars`` removes.
    """
    return pl.col(column).cast(pl.String).str.contains(r"\S").fill_null(False)


def failed_rows(columns: Collection[str]) -> pl.Expr:
    """True for rows that failed in ``infer`` (an ``error``) or in ``extract`` (method ``error``)."""
    failed = pl.lit(False)
    if "error" in columns:
        failed = failed | pl.col("error").is_not_null()
    if "extract_method" in columns:
        failed = failed | (pl.col("extract_method") == "error").fill_null(False)
    return failed


def extracted_text() -> pl.Expr:
    """``extracted`` stripped of surrounding whitespace, null where nothing was extracted (or only blanks)."""
    extracted = pl.col("extracted").cast(pl.String).str.strip_chars()
    return pl.when(extracted == "").then(None).otherwise(extracted)


def equality_score(rows: pl.DataFrame, *, ignore_case: bool) -> pl.Series:
    """1.0 where ``extracted`` equals ``answer`` (both stripped; ``ignore_case``: compared lower-cased), else 0.0;
    failed rows 0.0; null where the row has no answer."""
    extracted = extracted_text()
    answer = pl.col("answer").cast(pl.String).str.strip_chars()
    if ignore_case:
        extracted, answer = extracted.str.to_lowercase(), answer.str.to_lowercase()
    right = (extracted == answer).fill_null(False) & ~failed_rows(rows.columns)
    return rows.select(pl.when(has_answer()).then(right.cast(pl.Float64)).otherwise(None).alias("score")).to_series()


def column_or_null(rows: pl.DataFrame, name: str, dtype: Any = pl.String) -> pl.Expr:
    """``name`` when ``rows`` has it, else a null column of ``dtype`` (foreign files lack some columns)."""
    return pl.col(name) if name in rows.columns else pl.lit(None, dtype=dtype).alias(name)
