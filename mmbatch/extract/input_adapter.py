"""Makes any accepted prediction file look like an mmbatch ``infer`` output.

VLMEvalKit and LLaVA write MMBench predictions as ``.xlsx``/``.tsv`` with the MMBench columns and ``prediction`` but
no ``g_index``, ``benchmark``, ``model`` or ``mode``; docs/contract.md §1 makes them valid ``extract`` input given
``--benchmark``. The missing columns are filled here the way those tools imply (``g_index = index % 1e6``).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from mmbatch.benchmarks.registry import benchmark_names, find_benchmark
from mmbatch.errors import BadInputError
from mmbatch.interop.model_names import model_from_path
from mmbatch.interop.rows import with_imported_prompts
from mmbatch.interop.vlmevalkit import as_benchmark_reads_it
from mmbatch.row_facts import group_index


def adapt_predictions(frame: pl.DataFrame, *, path: Path, benchmark: str | None,
                      model_name: str | None) -> tuple[pl.DataFrame, str]:
    """The frame with ``index``, ``g_index``, ``benchmark``, ``model`` and ``mode`` present, and the input format.

    Returns:
        The completed frame and ``"mmbatch"`` or ``"vlmevalkit"`` (a file that lacked mmbatch's columns).

    Raises:
        BadInputError: no ``index`` or ``prediction``/``choice_logprobs`` column, duplicate indices, or a file
            without a ``benchmark`` column and no ``--benchmark``.
    """
    if "index" not in frame.columns:
        raise BadInputError("no 'index' column; is this a prediction file?", path=path, column="index")
    if "prediction" not in frame.columns and "choice_logprobs" not in frame.columns:
        raise BadInputError("no 'prediction' column; is this a prediction file (output of infer)?", path=path,
                            column="prediction")
    # counted first, the rows marked only when some repeat: marking every row's duplicates built a hash table of
    # ~100 MiB at a million rows, and a filter of the frame copies every column of it even when it keeps none
    if frame["index"].n_unique() != frame.height:
        duplicated = frame.filter(pl.col("index").is_duplicated())
        raise BadInputError(f"duplicate index ({duplicated.height} rows share an index with another); to score every "
                            "row on its own, import the file with `mmbatch import --format vlmevalkit "
                            "--duplicate-index renumber` and extract that", path=path, index=duplicated["index"][0],
                            column="index")
    if frame["index"].has_nulls():
        raise BadInputError("empty index", path=path, index="(empty)", column="index")

    native = {"g_index", "benchmark", "model"} <= set(frame.columns)
    if not native and benchmark is not None and "benchmark" not in frame.columns:
        frame = as_benchmark_reads_it(frame, benchmark.lower(), path)
    fills: list[pl.Expr] = []
    if "g_index" not in frame.columns:
        fills.append(_group_expression(frame, benchmark, path))
    if "benchmark" not in frame.columns:
        if benchmark is None:
            raise BadInputError("the file has no 'benchmark' column; say which benchmark it is with --benchmark "
                                f"({', '.join(benchmark_names())})", path=path, column="benchmark")
        fills.append(pl.lit(benchmark.lower()).alias("benchmark"))
    elif benchmark is not None:
        fills.append(pl.col("benchmark").fill_null(benchmark.lower()))
    if "model" not in frame.columns:
        fills.append(pl.lit(model_name or model_from_path(path)).alias("model"))
    if "mode" not in frame.columns:
        likelihood = pl.col("choice_logprobs").is_not_null() if "choice_logprobs" in frame.columns else pl.lit(False)
        fills.append(pl.when(likelihood).then(pl.lit("likelihood")).otherwise(pl.lit("generate")).alias("mode"))
    if fills:
        frame = frame.with_columns(fills)
    if "prompt_template" not in frame.columns and "question" in frame.columns:
        # Another tool prompted the model: record that, as `import` does, so the output is a valid extracted file.
        frame = with_imported_prompts(frame)
    if frame["benchmark"].has_nulls():
        first = frame["index"].filter(frame["benchmark"].is_null())[0]
        raise BadInputError("empty benchmark; pass --benchmark", path=path, index=first, column="benchmark")
    return frame, "mmbatch" if native else "vlmevalkit"


def _group_expression(frame: pl.DataFrame, benchmark: str | None, path: Path) -> pl.Expr:
    """``g_index`` for a file without one, by the benchmark's group rule; an unnamed benchmark groups as MMBench's
    circular copies (``index % 1e6``), which VLMEvalKit's files imply."""
    declared = find_benchmark(benchmark)
    rule = declared.group_rule if declared is not None else "circular-offset"
    if rule == "image-pair" and not {"image_path", "image_name"} & set(frame.columns):
        rule = "circular-offset"  # no image to pair by: each row (index % 1e6) is its own group, as before
    return group_index(frame.columns, rule, path=path)
