"""CircularEval groups: the group key of each row, and copies generated for a file that has none (docs/rules.md §1).

Copy k of a question with options A..X shifts every option k places to the right (ABCD -> DABC, CDAB, BCDA for
k = 1, 2, 3), as VLMEvalKit's ``tools.py::CIRCULAR`` does, so a model must pick the right *content* under every
labelling for the question to count.
"""

from __future__ import annotations

import string
from collections import deque
from dataclasses import dataclass

import polars as pl

from mmbatch.media import MAX_REFERENCE_LENGTH
from mmbatch.prompts import is_missing
from mmbatch.row_facts import CIRCULAR_OFFSET
from mmbatch.schema.columns import option_columns

COPY_OFFSET = CIRCULAR_OFFSET
"""Copy k of question i has index ``i + k * COPY_OFFSET`` in the VLMEvalKit files; the group key is index mod this."""

def group_keys(frame: pl.DataFrame) -> pl.Series:
    """The ``g_index`` of every row: the file's own ``g_index`` column wins, else ``index % 1_000_000``.

    A ``g_index`` column with empty cells is completed from ``index`` for those rows only.
    """
    derived = (frame["index"] % COPY_OFFSET).alias("g_index")
    if "g_index" not in frame.columns:
        return derived
    own = frame["g_index"].cast(pl.Int64)
    return own.fill_null(derived) if own.null_count() else own


def has_copies(g_index: pl.Series) -> bool:
    """Whether any group has more than one row (the file already holds circular copies)."""
    return bool(g_index.is_duplicated().any())


def copy_offset(max_index: int) -> int:
    """1e6, multiplied by 10 while the largest index is >= it, so that copies never collide with originals."""
    offset = COPY_OFFSET
    while max_index >= offset:
        offset *= 10
    return offset


def rotation(labels: list[str], k: int) -> dict[str, str]:
    """Where each label's option text moves in copy ``k``: ``labels`` rotated right ``k`` times.

    >>> rotation(list("ABCD"), 1)
    {'A': 'D', 'B': 'A', 'C': 'B', 'D': 'C'}
    """
    rotated = deque(labels)
    rotated.rotate(k)
    return dict(zip(labels, rotated, strict=True))


def _option_words(text: str) -> set[str]:
    """The words of an option text once every character that is not an ASCII letter is a space."""
    return set("".join(ch if ch in string.ascii_letters else " " for ch in text).split())


def circular_labels(options: dict[str, str | None], answer: str | None) -> list[str] | None:
    """The labels to rotate for one question, or None when the question must be left alone (a group of one).

    Left alone (docs/rules.md §1): fewer than two options or a gap in the letters (A, B, D), an answer that is not
    one of the option letters, an option text that is itself a single uppercase letter, or an option text that
    names two or more different option letters as words ("both A and B").
    """
    labels = [letter for letter, text in options.items() if not is_missing(text)]
    if len(labels) < 2 or labels != list(string.ascii_uppercase[: len(labels)]):
        return None
    if answer is None or answer.strip() not in labels:
        return None
    for letter in labels:
        text = str(options[letter])
        if len(text.strip()) == 1 and text.strip() in string.ascii_uppercase:
            return None
        if len(_option_words(text) & set(labels)) >= 2:
            return None
    return labels


@dataclass(frozen=True)
class CircularResult:
    """Rows with generated copies, and what was done."""

    frame: pl.DataFrame
    """The original rows (``g_index`` = own index) followed by copy 1 of each question, then copy 2, ..."""
    copies: int
    """Rows generated."""
    left_alone: int
    """Questions kept as a group of one (see :func:`circular_labels`)."""
    offset: int
    """The index offset used between copies."""


def add_circular_copies(frame: pl.DataFrame) -> CircularResult:
    """Generate the circular copies of every question of a file that has none.

    Copy k of question i gets ``index = i + k * offset``, ``g_index = i``, its options and answer rotated by
    :func:`rotation`, and ``image = str(i)`` (a reference to the original's image) when the original carries an
    image payload; every other column is copied untouched. The image payload is never copied.
    """
    letters = option_columns(frame.columns)
    largest = frame["index"].max()
    offset = copy_offset(largest if isinstance(largest, int) else 0)
    small = frame.select("index", *letters, *(["answer"] if "answer" in frame.columns else []))
    answers = small["answer"].to_list() if "answer" in small.columns else [None] * small.height
    plans: list[tuple[int, list[str]]] = []
    left_alone = 0
    for row, (values, answer) in enumerate(zip(small.select(letters).iter_rows(), answers, strict=True)):
        labels = circular_labels(dict(zip(letters, values, strict=True)), answer)
        if labels is None:
            left_alone += 1
        else:
            plans.append((row, labels))
    originals = frame.with_columns(frame["index"].alias("g_index"))
    copies = [_copy(originals, plans, k, offset, letters) for k in range(1, len(letters))]
    copies = [c for c in copies if c.height]
    combined = pl.concat([originals, *copies], how="vertical") if copies else originals
    return CircularResult(combined, sum(c.height for c in copies), left_alone, offset)


def _copy(originals: pl.DataFrame, plans: list[tuple[int, list[str]]], k: int, offset: int,
          letters: list[str]) -> pl.DataFrame:
    """Copy ``k`` of every planned question that has more than ``k`` options."""
    chosen = [(row, labels) for row, labels in plans if len(labels) > k]
    if not chosen:
        return originals.clear()
    rows = pl.Series("row", [row for row, _ in chosen], dtype=pl.UInt32)
    image = originals["image"][rows] if "image" in originals.columns else None
    copied = (originals.drop("image") if image is not None else originals)[rows]
    moved: dict[str, list[str | None]] = {letter: [None] * len(chosen) for letter in letters}
    for position, ((_, labels), texts) in enumerate(zip(chosen, copied.select(letters).rows(), strict=True)):
        by_letter = dict(zip(letters, texts, strict=True))
        for source, target in rotation(labels, k).items():
            moved[target][position] = by_letter[source]
    updates = [pl.Series(letter, moved[letter], dtype=pl.String) for letter in letters]
    updates.append((copied["index"] + k * offset).alias("index"))
    if "answer" in copied.columns:
        answers = [rotation(labels, k)[str(answer).strip()]
                   for (_, labels), answer in zip(chosen, copied["answer"].to_list(), strict=True)]
        updates.append(pl.Series("answer", answers, dtype=pl.String))
    copied = copied.with_columns(updates)
    if image is not None:
        # A copy points at the original's payload; an original that itself holds a reference passes it on,
        # because a reference never points at another reference.
        is_payload = image.str.len_bytes() > MAX_REFERENCE_LENGTH
        reference = pl.when(is_payload).then(copied["g_index"].cast(pl.String)).otherwise(image)
        copied = copied.with_columns(reference.alias("image")).select(originals.columns)
    return copied
