"""HallusionBench's question ids, and the integer ``index`` and ``g_index`` mmbatch gives them.

VLMEvalKit's ``HallusionBench.tsv`` identifies a question by text: ``VD_illusion_1_0_0_0`` is
``<category>_<subcategory>_<visual input>_<set>_<figure>_<question>``, and its scorer (``Hallusion_rating``) reads
the set, figure and question numbers from the 4th, 5th and 6th fields. mmbatch's ``index`` is an integer, so the id
is packed into one, digit by digit, the same way whatever file the row comes from and whatever order the rows are
in (a prediction file, a judged file and the TSV itself give a question the same ``index``)::

    index   = subcategory code * 10**8 + visual input * 10**7 + set * 10**4 + figure * 10**2 + question
    g_index = subcategory code * 10**8 + set * 10**4

``VD_illusion_1_0_0_0`` is ``110000000``; ``VS_map_2_0_2_3`` is ``620000203``. ``g_index`` is the question set:
every figure and every question of a set, the unit whose rows fAcc and qAcc judge together (and the unit the
bootstrap resamples). :func:`packed_ids` is the benchmark's ``source_ids`` rule; :mod:`mmbatch.benchmarks.source_ids`
applies it (the id kept in ``question_id``, image references followed, repeated ids refused).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from mmbatch.errors import BadInputError

SUBCATEGORIES: tuple[str, ...] = ("VD_illusion", "VD_math", "VD_ocr", "VD_figure", "VD_video", "VS_map",
                                  "VS_chart", "VS_table", "VS_ocr")
"""HallusionBench's subcategories (``l2-category``), in the order of their codes 1-9."""

FIELDS = ("visual_input", "set", "figure", "question")
"""The numeric fields of an id, after ``<category>_<subcategory>``."""
LIMITS = {"visual_input": 10, "set": 1000, "figure": 100, "question": 100}
"""Each numeric field must stay below its limit to fit its digits of the packed ``index``."""
SCALE = {"visual_input": 10**7, "set": 10**4, "figure": 10**2, "question": 1}
"""The place value of each numeric field in the packed ``index``."""
CODE_SCALE = 10**8


def packed_ids(rows: pl.DataFrame, path: Path) -> pl.DataFrame:
    """The integer ``index`` and ``g_index`` of each id in ``rows["index"]`` (VLMEvalKit's text ids).

    Raises:
        BadInputError: an id that is not ``<VD|VS>_<subcategory>_<n>_<n>_<n>_<n>`` with a known subcategory and
            numbers in range, or a ``category``/``l2-category`` the id contradicts, naming the file, the id and
            the column.
    """
    ids = rows["index"].cast(pl.String)
    parts = ids.str.split("_")
    well_formed = (parts.list.len() == 6)
    subcategory = parts.list.slice(0, 2).list.join("_")
    code = subcategory.replace_strict({name: i + 1 for i, name in enumerate(SUBCATEGORIES)}, default=None,
                                      return_dtype=pl.Int64)
    numbers = {name: parts.list.get(2 + i, null_on_oob=True).cast(pl.Int64, strict=False)
               for i, name in enumerate(FIELDS)}
    bad = ~well_formed | code.is_null()
    for name, values in numbers.items():
        bad = bad | values.is_null() | (values < 0).fill_null(True) | (values >= LIMITS[name]).fill_null(True)
    if bad.any():
        row = int(bad.arg_max() or 0)
        raise BadInputError(
            f"not a HallusionBench id: {ids[row]!r} (expected <subcategory>_<visual input>_<set>_<figure>_<question>, "
            f"subcategories {', '.join(SUBCATEGORIES)})", path=path, index=ids[row], column="index")
    _check_labels(rows, ids, parts, path)
    index = code * CODE_SCALE
    for name, values in numbers.items():
        index = index + values * SCALE[name]
    g_index = code * CODE_SCALE + numbers["set"] * SCALE["set"]
    return pl.DataFrame([index.alias("index"), g_index.alias("g_index")])


def _check_labels(frame: pl.DataFrame, ids: pl.Series, parts: pl.Series, path: Path) -> None:
    """``category`` and ``l2-category``, where present, name the id's own category and subcategory.

    VLMEvalKit groups fAcc and qAcc by ``l2-category`` and the id's numbers; mmbatch groups by ``g_index``, which
    packs the id's subcategory. The two agree only when the labels agree with the id, so a row where they differ
    is refused rather than scored in another group.
    """
    expected = {"category": parts.list.get(0), "l2-category": parts.list.slice(0, 2).list.join("_")}
    for column, wanted in expected.items():
        if column not in frame.columns:
            continue
        differ = frame[column].cast(pl.String).ne_missing(wanted)
        if differ.any():
            row = int(differ.arg_max() or 0)
            raise BadInputError(f"{column} {frame[column][row]!r} is not the one the id names ({wanted[row]!r})",
                                path=path, index=ids[row], column=column)
