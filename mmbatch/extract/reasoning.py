"""Reasoning traces (``<think>...</think>``) taken out of a prediction before the answer is matched.

Reasoning models (DeepSeek-R1, Qwen3 thinking, QVQ, GLM-4.1V-Thinking...) write their reasoning before the answer;
the letters and yes/no words in it would be matched instead of the answer (MME's official rule reads only the first 4
characters). As in lmms-eval 0.7, the trace is removed by default and the raw text kept: ``prediction`` is never
changed, ``answer_text`` holds what the rules and the judge read.

For each tag pair, in order:

1. A closing tag before any opening one is the end of a trace whose opening tag was in the prompt (templates that
   open the assistant's turn with ``<think>``): everything up to it is reasoning.
2. Every ``OPEN ... CLOSE`` block is removed.
3. An opening tag never closed is a trace cut off (by ``--max-new-tokens``): the answer never came. Everything from it
   on is dropped, and a row whose remaining text matches nothing is unmatched without asking the judge.
"""

from __future__ import annotations

import json

import polars as pl

from mmbatch.answers.frames import nulls
from mmbatch.answers.run_memory import once_per_input
from mmbatch.errors import BadInputError

TagPairs = tuple[tuple[str, str], ...]
"""``(opening, closing)`` tag pairs, applied in order (the default is ``ExtractOptions.reasoning_tags``)."""
NONE = "none"
"""``--reasoning-tags none``: the prediction is matched as it is."""


def parse_reasoning_tags(text: str) -> TagPairs:
    """``--reasoning-tags``: ``none``, or a JSON list of ``[opening, closing]`` pairs.

    Raises:
        BadInputError: neither, or a tag that is empty.
    """
    if text.strip().lower() == NONE:
        return ()
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, list) or not parsed or not all(
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(tag, str) and tag for tag in pair)
            for pair in parsed):
        raise BadInputError(f"--reasoning-tags {text!r}: expected none or a JSON list of [opening, closing] pairs, "
                            'e.g. [["<think>", "</think>"], ["<reasoning>", "</reasoning>"]]')
    return tuple((pair[0], pair[1]) for pair in parsed)


def strip_reasoning(text: str, tags: TagPairs) -> tuple[str, str | None]:
    """``text`` without its reasoning traces (stripped of surrounding whitespace when a trace was removed), and what
    was found: None (no trace), ``closed`` or ``unclosed`` (see the module docstring)."""
    found: str | None = None
    for opening, closing in tags:
        end, start = text.find(closing), text.find(opening)
        if end >= 0 and (start < 0 or end < start):
            text, found = text[end + len(closing):], "closed"
        while (start := text.find(opening)) >= 0:
            end = text.find(closing, start + len(opening))
            if end < 0:
                text, found = text[:start], "unclosed"
                break
            text, found = text[:start] + text[end + len(closing):], found or "closed"
    return (text.strip(), found) if found else (text, None)


def answer_texts(predictions: pl.Series, tags: TagPairs) -> tuple[pl.DataFrame, dict[str, int]]:
    """``answer_text`` (the prediction without reasoning traces; null where there is no prediction) and
    ``reasoning`` (``closed``, ``unclosed`` or null) of every row, each distinct prediction holding a tag stripped
    once (once per run when the stage reads its file in batches: :mod:`mmbatch.answers.run_memory`); and how many rows
    had a trace removed (``closed``) or never closed (``unclosed``).

    A prediction without any of the tags is its own answer text (what :func:`strip_reasoning` gives it): only those
    holding one are stripped, so a model that writes no traces costs one search of the column.
    """
    text = predictions.cast(pl.String).rename("_prediction")
    with_tag = text.str.contains_any([tag for pair in tags for tag in pair]).fill_null(False) if tags else None
    if with_tag is None or not with_tag.any():
        return pl.DataFrame([text.rename("answer_text"), nulls("reasoning", text.len())]), {"closed": 0, "unclosed": 0}
    distinct = text.filter(with_tag).unique(maintain_order=True).to_frame()

    def strip(unseen: pl.DataFrame) -> pl.DataFrame:
        stripped = [strip_reasoning(value, tags) for value in unseen["_prediction"]]
        return pl.DataFrame({"answer_text": [answer for answer, _ in stripped],
                             "reasoning": [trace for _, trace in stripped]},
                            schema={"answer_text": pl.String, "reasoning": pl.String})

    found = once_per_input(distinct, strip, ("strip_reasoning", tags)).with_columns(distinct["_prediction"])
    rows = text.to_frame().join(found, on="_prediction", how="left", maintain_order="left")
    rows = rows.with_columns(pl.when(with_tag).then(pl.col("answer_text")).otherwise(pl.col("_prediction"))
                             .alias("answer_text"))
    counts = rows["reasoning"].value_counts()
    by_trace = dict(zip(counts["reasoning"].to_list(), counts["count"].to_list(), strict=True))
    return rows.select("answer_text", "reasoning"), {name: int(by_trace.get(name, 0)) for name in ("closed",
                                                                                                  "unclosed")}
