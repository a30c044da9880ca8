"""Which rows of two files are the same benchmark question, whatever route brought each file in.

``index`` is a file's own numbering: the same MME question is row 0 of a VLMEvalKit table (``OCR/0001.jpg``), row 0
of the MME tool's folder (``existence``, the first file it reads) and row 0 of LLaVA's answers (``code_reasoning``),
and a SEED question is its ``question_id`` in VLMEvalKit files but its line number in a SEED results file. Matching
on ``index`` therefore paired different questions (and ``compare`` refused them as "grouped differently"). A row's
identity is instead what names the question in the benchmark itself:

- ``image-pair`` benchmarks (MME): the subtask, the image's file name without folder or extension (the MME tool's
  files name some images ``.txt``), and the question with its whitespace runs made single (7 MME colour questions
  carry a double space in some copies);
- ``row`` benchmarks: ``question_id`` when either file has it (a file without one, like VLMEvalKit's SEEDBench_IMG
  table, numbers its rows by that id), else ``index``;
- CircularEval benchmarks: ``index``, which is MMBench's own question number in every route.

The second file's rows are renumbered to the first file's ``index`` and ``g_index`` where identities match (an id
repeated in a file is matched occurrence by occurrence); its other rows of those benchmarks (no match, or no
identity) get indices past both files' and are counted as rows only it has.
"""

from __future__ import annotations

import polars as pl

from mmbatch.benchmarks.registry import find_benchmark
from mmbatch.row_facts import IMAGE_COLUMNS

IDENTITY = "_identity"
OCCURRENCE = "_occurrence"


def align_rows(frame_a: pl.DataFrame, frame_b: pl.DataFrame) -> pl.DataFrame:
    """``frame_b`` with ``index`` and ``g_index`` taken from ``frame_a``'s row of the same question.

    Benchmarks whose identity is ``index`` are left as they are, so the check that both files group their shared
    rows alike still guards them.
    """
    benchmarks = set(frame_a["benchmark"].unique().to_list()) | set(frame_b["benchmark"].unique().to_list())
    keyed = {str(name): _identity(str(name), frame_a, frame_b) for name in benchmarks if name is not None}
    if not any(expression is not None for expression in keyed.values()):
        return frame_b
    side_a, side_b = (_with_identity(frame, keyed) for frame in (frame_a, frame_b))
    keys = ["benchmark", "split", IDENTITY, OCCURRENCE]
    mapping = side_a.filter(pl.col(IDENTITY).is_not_null()).select(
        *keys, pl.col("index").alias("_index_a"), pl.col("g_index").alias("_g_index_a"))
    joined = side_b.join(mapping, on=keys, how="left", nulls_equal=True, maintain_order="left")
    offset = max(_largest(frame_a, "index"), _largest(frame_b, "index"), _largest(frame_b, "g_index")) + 1
    # Every row of a benchmark matched by identity is renumbered: one whose identity is missing (no subtask, say)
    # must not keep an index that names another question in the first file.
    renumbered = pl.col("benchmark").is_in([name for name, expression in keyed.items() if expression is not None])
    return joined.with_columns(
        pl.when(renumbered).then(pl.col("_index_a").fill_null(pl.col("index") + offset))
        .otherwise(pl.col("index")).alias("index"),
        pl.when(renumbered).then(pl.col("_g_index_a").fill_null(pl.col("g_index") + offset))
        .otherwise(pl.col("g_index")).alias("g_index"),
    ).drop(IDENTITY, OCCURRENCE, "_index_a", "_g_index_a")


def _identity(benchmark: str, frame_a: pl.DataFrame, frame_b: pl.DataFrame) -> pl.Expr | None:
    """The identity of ``benchmark``'s rows in both files, or None when it is ``index``."""
    declared = find_benchmark(benchmark)
    rule = declared.group_rule if declared is not None else "circular-offset"
    if rule == "image-pair":
        images = [next((c for c in IMAGE_COLUMNS if c in frame.columns), None) for frame in (frame_a, frame_b)]
        if None in images or not all("category" in frame.columns for frame in (frame_a, frame_b)):
            return None
        return pl.concat_str(
            [pl.col("category").cast(pl.String),
             pl.col("_image").str.split("/").list.last().str.replace(r"\.[^.]*$", ""),
             pl.col("question").cast(pl.String).str.replace_all(r"\s+", " ").str.strip_chars()],
            separator="\x1f")
    if rule == "row" and any("question_id" in frame.columns for frame in (frame_a, frame_b)):
        return pl.col("question_id").cast(pl.String).str.strip_chars().fill_null(pl.col("index").cast(pl.String))
    return None


def _with_identity(frame: pl.DataFrame, keyed: dict[str, pl.Expr | None]) -> pl.DataFrame:
    image = next((c for c in IMAGE_COLUMNS if c in frame.columns), None)
    added = [] if "question_id" in frame.columns else ["question_id"]
    frame = frame.with_columns(
        (pl.col(image).cast(pl.String) if image else pl.lit(None, pl.String)).alias("_image"),
        *(pl.lit(None, pl.String).alias(c) for c in added))
    identity = pl.lit(None, pl.String)
    for name, expression in keyed.items():
        if expression is not None:
            identity = pl.when(pl.col("benchmark") == name).then(expression).otherwise(identity)
    frame = frame.with_columns(identity.alias(IDENTITY))
    frame = frame.with_columns(pl.int_range(pl.len()).over("benchmark", "split", IDENTITY).alias(OCCURRENCE))
    return frame.drop("_image", *added)


def _largest(frame: pl.DataFrame, column: str) -> int:
    value = frame[column].abs().max() if column in frame.columns and frame.height else 0
    return int(value or 0)  # type: ignore[arg-type]
