"""Facts about rows that several stages need, each defined once: which cells are missing, which options a row
has, circular offsets, ``g_index`` derivations and file digests.

The facts that stages compute both row by row and on whole frames have a Python form and a polars form side by side
here (:func:`is_missing` / :func:`missing`, :func:`present_options` / :func:`present_letters`);
``tests/test_row_facts.py`` checks that they agree. Every stage that has to know which rows form a group
(``extract`` for a foreign file, ``import``, ``score`` for a file without ``g_index``) calls :func:`group_index` with
the rule its benchmark declares (:attr:`mmbatch.benchmarks.declaration.Benchmark.group_rule`).
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from mmbatch.errors import BadInputError
from mmbatch.schema.columns import OPTION_LETTERS

if TYPE_CHECKING:
    from mmbatch.benchmarks.declaration import GroupRule

GROUP_FAILED_NOTE = "not judged: another row of its circular group is already wrong (CircularEval)"
"""``extract_note`` of a row ``extract`` did not send to the judge because its circular group had already failed: the
row has no verdict of its own (``score`` leaves it out of the row-level accuracies, docs/scoring.md)."""
MISSING_TEXTS = ("", "nan")
"""Cell texts that mean "absent" (compared lower-cased): VLMEvalKit's tables write a missing option as ``nan``."""
DIGEST_CHUNK = 1 << 24

CIRCULAR_OFFSET = 1_000_000
"""Circular copy k of question i has index i + k * 1e6 (docs/rules.md §1)."""
IMAGE_COLUMNS = ("image_path", "image_name")
"""Columns that name a row's image, in order of preference, for the ``image-pair`` rule."""


def is_missing(value: object) -> bool:
    """True for None, NaN, and empty or ``nan`` text: the ways a hint, option or answer cell says "absent"."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return isinstance(value, str) and value.lower() in MISSING_TEXTS


_MISSING_SPELLINGS = sorted({"".join(cased) for text in MISSING_TEXTS
                             for cased in itertools.product(*((c.lower(), c.upper()) for c in text))})
"""Every cell text whose lower case is one of :data:`MISSING_TEXTS` (``nan``, ``NaN``, ``NAN``...): matching them as
they are spares lower-casing every cell of a million-row column."""


def missing(column: str) -> pl.Expr:
    """:func:`is_missing` of every cell of ``column``, as a boolean expression."""
    text = pl.col(column).cast(pl.String)
    return (pl.col(column).is_null() | text.is_in(_MISSING_SPELLINGS)).fill_null(True)


def present_options(row: Mapping[str, Any]) -> dict[str, str]:
    """The row's options, letter -> text, in letter order; missing options are skipped without relabelling."""
    return {letter: str(row[letter]) for letter in OPTION_LETTERS if letter in row and not is_missing(row[letter])}


def present_letters(columns: Sequence[str]) -> pl.Expr:
    """Per row, the list of option letters (among ``columns``) whose text is present, in letter order."""
    letters = [letter for letter in OPTION_LETTERS if letter in columns]
    if not letters:
        return pl.lit([], dtype=pl.List(pl.String))
    return pl.concat_list([pl.when(~missing(letter)).then(pl.lit(letter)).otherwise(None)
                           for letter in letters]).list.drop_nulls()


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes (hex), read in chunks: the same file on another machine has the same digest."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(DIGEST_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def group_index(columns: list[str], rule: GroupRule, *, path: Path | None = None) -> pl.Expr:
    """The ``g_index`` of a frame with these ``columns`` under ``rule`` (an Int64 expression named ``g_index``).

    Raises:
        BadInputError: ``image-pair`` rows without an image column, naming the file.
    """
    if rule == "circular-offset":
        # A negative index is no circular copy (copies add k * 1e6 to a question's index): it is its own group. The
        # floor modulo would put -5 with question 999,995 and score unrelated questions as one circular group.
        expression = pl.when(pl.col("index") >= 0).then(pl.col("index") % CIRCULAR_OFFSET).otherwise(pl.col("index"))
    elif rule == "row":
        expression = pl.col("index")
    else:
        image = next((name for name in IMAGE_COLUMNS if name in columns), None)
        if image is None:
            raise BadInputError("rows of a yes/no benchmark need `image_path` or `image_name` (or `g_index`) to pair "
                                "the questions of each image", path=path, column="g_index")
        keys = [name for name in ("category", image) if name in columns]
        expression = pl.col("index").min().over(keys)
    return expression.cast(pl.Int64).alias("g_index")


def circular_copy(index: int) -> int:
    """Which circular copy a row is: 0 for the original question, k for ``index = question + k * 1e6``."""
    return index // CIRCULAR_OFFSET
