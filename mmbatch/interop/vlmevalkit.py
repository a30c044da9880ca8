"""VLMEvalKit (and LLaVA upload) prediction files: an MMBench-style table (xlsx, TSV or Parquet) with ``prediction``.

Every column is carried through. The benchmark is ``--benchmark``, else the file's ``benchmark`` column, else the
VLMEvalKit dataset named at the end of the file name (``<model>_<dataset>.xlsx``, as each benchmark declares it),
else guessed from the columns. ``g_index`` comes from the file's own ``g_index`` column, else from the benchmark's
group rule (:func:`mmbatch.row_facts.group_index`): MME files pair the two questions of an image by
``(category, image_path)``, as VLMEvalKit's own MME rating does. A benchmark whose ids are text (HallusionBench's
``VD_illusion_1_0_0_0``, OCRVQA's ``184215012X_1``) gets its integer ``index`` (and ``g_index``) from its
declaration's ``source_ids`` rule, computed from each row's key (:mod:`mmbatch.benchmarks.source_ids`), the same as
``prepare`` gives them in any row order. The ``image`` payload is dropped, as ``infer`` does.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from mmbatch.benchmarks.declaration import Benchmark, load
from mmbatch.benchmarks.mme.subtasks import SUBTASKS, part_of
from mmbatch.benchmarks.registry import find_benchmark, registered
from mmbatch.benchmarks.source_ids import SOURCE_KEY, with_source_ids
from mmbatch.errors import BadInputError
from mmbatch.interop.model_names import model_from_name
from mmbatch.interop.rows import (
    PROMPT_FROM_QUESTION,
    ImportOptions,
    ImportResult,
    default_model,
    finish_rows,
    renumber_duplicates,
    require_columns,
)
from mmbatch.interop.vlmevalkit_side_files import (
    PREFIX,
    SideFile,
    is_side_file,
    join_verdicts,
    prediction_stem,
    side_file,
)
from mmbatch.row_facts import group_index
from mmbatch.schema.columns import option_columns
from mmbatch.schema.types import restore_types
from mmbatch.tableio import file_format, read_raw


def detect_benchmark(frame: pl.DataFrame, requested: str | None, path: Path) -> str:
    """``--benchmark``, else the file's ``benchmark`` column, else the dataset in the file name, else MCQ (options)
    -> mmbench, Yes/No answers -> mme."""
    if requested:
        return requested
    if "benchmark" in frame.columns and frame["benchmark"].n_unique() == 1 and frame["benchmark"][0]:
        return str(frame["benchmark"][0])
    named = _named_in_file_name(path)
    if named is not None:
        return named.name
    if option_columns(frame.columns):
        return "mmbench"
    if "answer" in frame.columns and frame["answer"].drop_nulls().is_in(["Yes", "No"]).all():
        return "mme"
    raise BadInputError("cannot tell the benchmark of this file; pass --benchmark", path=path)


def _named_in_file_name(path: Path) -> Benchmark | None:
    """The benchmark whose VLMEvalKit dataset name ends the file name (``vila_8b_MME.xlsx`` -> mme), longest first;
    a judged file is named after its prediction file (``vila_8b_MMStar_openai_result.xlsx`` -> mmstar)."""
    stem = prediction_stem(path).lower()
    matches = [(len(dataset), benchmark) for benchmark in registered() for dataset in benchmark.vlmevalkit_names
               if stem == dataset or stem.endswith(f"_{dataset}")]
    return max(matches, key=lambda match: match[0])[1] if matches else None


def with_group_index(frame: pl.DataFrame, benchmark: str, path: Path) -> pl.DataFrame:
    """Add ``g_index``: the file's own, else by the benchmark's group rule (``index % 1e6`` for an unknown one)."""
    if "g_index" in frame.columns:
        return frame
    declared = find_benchmark(benchmark)
    rule = declared.group_rule if declared is not None else "circular-offset"
    return frame.with_columns(group_index(frame.columns, rule, path=path))


def as_benchmark_reads_it(frame: pl.DataFrame, benchmark: str, path: Path) -> pl.DataFrame:
    """The table as the benchmark's reader takes its own VLMEvalKit table: its ids given by the declaration's
    ``source_ids`` rule (HallusionBench's and OCRVQA's text keys), then the reader's ``adapt_table`` where it has one
    (ChartQA's ``split`` as its ``category``), so an imported (or directly extracted) file has the rows ``prepare``
    gives."""
    declared = find_benchmark(benchmark)
    frame = with_source_ids(frame, declared, path)
    adapt = getattr(load(declared.reader), "adapt_table", None) if declared is not None else None
    return frame if adapt is None else adapt(frame, path)


def _unique_indices(frame: pl.DataFrame, benchmark: str, options: ImportOptions) -> pl.DataFrame:
    """The rows as they are when every ``index`` is unique; else renumbered on request, or refused."""
    repeats = frame.filter(~pl.col("index").is_first_distinct())
    if not repeats.height:
        return frame
    shown = ", ".join(str(i) for i in repeats["index"].unique(maintain_order=True).head(10).to_list())
    if not options.renumber_duplicates:
        raise BadInputError(
            f"{repeats.height} rows repeat an earlier row's index ({shown}, ...): VLMEvalKit keys rows by index, so "
            "each pair shared one verdict. Pass --duplicate-index renumber to import them with new indices (the "
            "source's kept in source_index) and score every row on its own", path=options.input,
            index=repeats["index"][0], column="index")
    declared = find_benchmark(benchmark)
    if declared is not None and declared.circular:
        raise BadInputError(f"{repeats.height} rows repeat an index ({shown}, ...); {benchmark} rows cannot be "
                            "renumbered: their index carries the circular group (index % 1e6)",
                            path=options.input, index=repeats["index"][0], column="index")
    return renumber_duplicates(frame, path=options.input)


def import_rows(options: ImportOptions) -> ImportResult:
    """Read one VLMEvalKit prediction file (or judged file, or both) into predictions rows."""
    frame, side = _with_verdicts(options)
    require_columns(frame, ("index", "question", "prediction"), path=options.input, what="VLMEvalKit prediction")
    if "image" in frame.columns:
        frame = frame.drop("image")
    benchmark = detect_benchmark(frame, options.benchmark, options.input)
    declared = find_benchmark(benchmark)
    keyed = SOURCE_KEY not in frame.columns
    frame = as_benchmark_reads_it(frame, benchmark, options.input)
    keyed = keyed and SOURCE_KEY in frame.columns and declared is not None
    if file_format(options.input) != ".parquet":
        frame = restore_types(frame, path=options.input)
    frame = _unique_indices(frame, benchmark, options)
    frame = with_group_index(frame, benchmark, options.input)
    if "benchmark" not in frame.columns:
        frame = frame.with_columns(pl.lit(benchmark).alias("benchmark"))
    if benchmark == "mme" and "category" in frame.columns and "l2-category" not in frame.columns:
        frame = frame.with_columns(pl.col("category").replace_strict({task: part_of(task) for task in SUBTASKS},
                                                                      default=None)
                                   .alias("l2-category"))
    recorded = frame["model"].drop_nulls().first() if "model" in frame.columns else None
    if recorded is None and side is not None and options.judged is None:
        # A judged file alone: named as its prediction file would be (vila_13b_MMStar_openai_result -> vila_13b).
        recorded = model_from_name(prediction_stem(options.input)) or prediction_stem(options.input)
    model = default_model(options, str(recorded) if recorded is not None else None)
    finished = finish_rows(frame, model=model, path=options.input)
    return ImportResult(finished, {
        "format": "vlmevalkit", "benchmark": benchmark, "model": model, "rows": finished.height,
        "groups": finished["g_index"].n_unique(),
        "renumbered_duplicate_indices": int(finished["source_index"].is_not_null().sum())
        if "source_index" in finished.columns else 0,
        "prompt_source": "prompt column of the file" if "prompt" in frame.columns else PROMPT_FROM_QUESTION,
        "judged": side.settings() if side is not None else None,
        "source_ids": f"index from each row's own key (question_id) by {declared.source_ids}"
        if keyed and declared is not None else None,
    })


def _with_verdicts(options: ImportOptions) -> tuple[pl.DataFrame, SideFile | None]:
    """The rows of ``--input`` as text, with the verdict columns of a judged file as ``vlmevalkit_<name>``: those of
    ``--judged`` (checked row by row against the predictions), or the input's own when it is a judged file."""
    frame = read_raw(options.input).frame
    if options.judged is not None:
        if is_side_file(frame):
            raise BadInputError("--input is already a judged file (it has VLMEvalKit's verdict columns); give the "
                                "prediction file as --input, or the judged file alone", path=options.input)
        judged = read_raw(options.judged).frame
        side = side_file(judged, options.judged)
        return join_verdicts(frame, side, judged, options.input), side
    if not is_side_file(frame):
        return frame, None
    side = side_file(frame, options.input)
    return frame.rename({name: PREFIX + name for name in side.columns}), side
