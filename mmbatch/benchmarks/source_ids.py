"""One integer ``index`` per question, made from the question's own key, whatever file and route the row comes from.

mmbatch's ``index`` is an integer: the key of every stage file, of resume, shards, ``merge`` and ``compare``. Some
sources key their rows by text instead (HallusionBench ``VD_illusion_1_0_0_0``, OCRVQA ``184215012X_1``). Such a
benchmark declares a rule in :attr:`~mmbatch.benchmarks.declaration.Benchmark.source_ids` that computes a row's
integer from its key alone, never from its position, so the benchmark's own TSV, a prediction file sorted otherwise,
a subset of it and a judged file give a question the same ``index``. :func:`with_source_ids` is the one place that
applies the rule: ``prepare`` (the readers), ``import --format vlmevalkit`` and ``extract`` of a VLMEvalKit file
(both through :func:`mmbatch.interop.vlmevalkit.as_benchmark_reads_it`) call it.

A rule only computes numbers (:data:`IdRule`); what every rule needs is done here once: the keys must be present and
unique, the key is kept in ``question_id``, two keys that a rule gives one integer are refused, and short ``image``
cells that name another row by its key (VLMEvalKit's references) are rewritten to that row's new ``index``. A file
already in mmbatch's terms (an integer ``index``, the key in ``question_id``) is checked instead: each index must be
the one the rule gives its key, so a file numbered another way (OCRVQA rows numbered in file order before
``ocrvqa`` 1.1, docs/contract.md) is refused rather than paired with the wrong questions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import polars as pl

from mmbatch.benchmarks.declaration import Benchmark, load
from mmbatch.errors import BadInputError
from mmbatch.media import MAX_REFERENCE_LENGTH

SOURCE_KEY = "question_id"
"""Where the source's own key is kept."""

IdRule = Callable[[pl.DataFrame, Path], pl.DataFrame]
"""``rule(rows, path)``: ``rows`` have the source key (present, unique) as text in ``index``; the result has the same
height and an Int64 ``index`` computed from each key alone, plus ``g_index`` where the key names the row's group
(HallusionBench's question set). A key the rule cannot read is a :class:`~mmbatch.errors.BadInputError` naming it."""

DIGEST_BITS = 49
"""Bits of a key's SHA-256 kept by :func:`key_digest`: below 10**15, so an ``index`` stays exact in a spreadsheet
(15 significant digits) and in a browser (2**53)."""


def with_source_ids(frame: pl.DataFrame, benchmark: Benchmark | None, path: Path) -> pl.DataFrame:
    """``frame`` with the integer ``index`` (and ``g_index`` where the rule gives one) that ``benchmark``'s
    :attr:`~mmbatch.benchmarks.declaration.Benchmark.source_ids` rule gives each row's key, the key kept in
    ``question_id``; as it is when the benchmark declares no rule.

    Raises:
        BadInputError: an empty or repeated key, a key the rule refuses, two keys given one ``index``, a text index in
            a file that has ``question_id`` already, or a numbered file whose ``index`` is not its key's.
    """
    if benchmark is None or benchmark.source_ids is None or "index" not in frame.columns:
        return frame
    rule: IdRule = load(benchmark.source_ids)
    whole = _whole_numbers(frame["index"])
    if SOURCE_KEY in frame.columns:
        if whole is None:
            raise BadInputError(f"the index is text and would be kept in '{SOURCE_KEY}', but the file has that "
                                "column already", path=path, column="index")
        _check_numbered(frame, whole, rule, benchmark, path)
        return frame
    keys = frame["index"].cast(pl.String)
    _check_keys(keys, path)
    numbers = rule(frame.with_columns(keys.alias("index")), path)
    _check_distinct(numbers["index"], keys, path)
    frame = frame.with_columns(keys.alias(SOURCE_KEY), numbers["index"].alias("index"),
                               *(numbers[c] for c in ("g_index",) if c in numbers.columns))
    if "image" in frame.columns:
        frame = frame.with_columns(_image_references(frame["image"], keys, frame["index"]))
    return frame


def key_digest(rows: pl.DataFrame, path: Path) -> pl.DataFrame:
    """The rule for a key with no structure to pack (OCRVQA's ``<ISBN>_<n>``): the first :data:`DIGEST_BITS` bits of
    the SHA-256 of the key's UTF-8 text, as an integer. Two keys of one file that give one integer are refused by
    :func:`with_source_ids` (for 100,000 keys the chance is about 1 in 100,000)."""
    del path  # every text is a key
    numbers = [int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") >> (64 - DIGEST_BITS)
               for key in rows["index"].to_list()]
    return pl.DataFrame({"index": pl.Series(numbers, dtype=pl.Int64)})


def _whole_numbers(index: pl.Series) -> pl.Series | None:
    """``index`` as Int64 when every value is a whole number (``12``, ``"13"``, ``"14.0"``), else None."""
    if index.dtype.is_integer():
        return index.cast(pl.Int64)
    text = index.cast(pl.String).str.strip_chars()
    whole = text.str.replace(r"\.0+$", "").cast(pl.Int64, strict=False)
    return None if bool((whole.is_null() & text.is_not_null()).any()) else whole


def _check_keys(keys: pl.Series, path: Path) -> None:
    empty = keys.is_null() | (keys.str.strip_chars() == "")
    if empty.any():
        raise BadInputError(f"empty index on data row {int(empty.arg_max() or 0) + 1}", path=path, column="index")
    repeated = keys.is_duplicated()
    if repeated.any():
        key = keys[int(repeated.arg_max() or 0)]
        raise BadInputError(f"index {key!r} occurs more than once", path=path, index=key, column="index")


def _check_distinct(index: pl.Series, keys: pl.Series, path: Path) -> None:
    """Two keys given one ``index`` would be one question to every later stage."""
    repeated = index.is_duplicated()
    if repeated.any():
        clash = keys.filter(index == index[int(repeated.arg_max() or 0)]).to_list()
        raise BadInputError(f"keys {clash[0]!r} and {clash[1]!r} are both given index {index.filter(repeated)[0]}",
                            path=path, index=clash[1], column="index")


def _check_numbered(frame: pl.DataFrame, whole: pl.Series, rule: IdRule, benchmark: Benchmark, path: Path) -> None:
    """A file with the key in ``question_id`` keeps its ``index`` only where it is the one the rule gives the key."""
    keys = frame[SOURCE_KEY].cast(pl.String)
    _check_keys(keys, path)
    expected = rule(frame.with_columns(keys.alias("index")), path)["index"]
    wrong = whole.ne_missing(expected)
    if wrong.any():
        row = int(wrong.arg_max() or 0)
        raise BadInputError(
            f"index {whole[row]} is not the one {benchmark.name} {benchmark.version} gives question_id "
            f"{keys[row]!r} ({expected[row]}): the file was numbered another way (docs/contract.md, row identity); "
            "prepare or import it again from the source file", path=path, index=whole[row], column="index")


def _image_references(image: pl.Series, keys: pl.Series, index: pl.Series) -> pl.Series:
    """``image`` with each short cell that names another row by its key turned into that row's new ``index``;
    payloads and other cells unchanged."""
    text = image.cast(pl.String)
    short = text.str.len_bytes() <= MAX_REFERENCE_LENGTH
    target = text.str.strip_chars().replace_strict(keys, index.cast(pl.String), default=None)
    return pl.select(pl.when(short & target.is_not_null()).then(target).otherwise(image)).to_series().alias("image")
