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
    check_predictions(frame.columns, frame["index"] if "index" in frame.columns else None, path=path)
    return completed(frame, path=path, benchmark=benchmark, model_name=model_name), input_format(frame.columns)


def input_format(columns: list[str]) -> str:
    """``mmbatch`` for a file in mmbatch's own layout (it has ``g_index``, ``benchmark`` and ``model``), else
    ``vlmevalkit`` (VLMEvalKit's or LLaVA's layout, completed by :func:`completed`)."""
    return "mmbatch" if {"g_index", "benchmark", "model"} <= set(columns) else "vlmevalkit"


def check_predictions(columns: list[str], index: pl.Series | None, *, path: Path) -> pl.Series:
    """The file's whole ``index`` column, once checked: refused for a file that is no predictions file (no ``index``
    or no ``prediction``/``choice_logprobs`` column), or an ``index`` that repeats or is empty.

    Raises:
        BadInputError: naming the file, the column and the first offending row.
    """
    if "index" not in columns or index is None:
        raise BadInputError("no 'index' column; is this a prediction file?", path=path, column="index")
    if "prediction" not in columns and "choice_logprobs" not in columns:
        raise BadInputError("no 'prediction' column; is this a prediction file (output of infer)?", path=path,
                            column="prediction")
    # counted first, the rows marked only when some repeat: marking every row's duplicates built a hash table of
    # ~100 MiB at a million rows
    if index.n_unique() != index.len():
        duplicated = index.filter(index.is_duplicated())
        raise BadInputError(f"duplicate index ({duplicated.len()} rows share an index with another); to score every "
                            "row on its own, import the file with `mmbatch import --format vlmevalkit "
                            "--duplicate-index renumber` and extract that", path=path, index=duplicated[0],
                            column="index")
    if index.has_nulls():
        raise BadInputError("empty index", path=path, index="(empty)", column="index")
    return index


def completed(frame: pl.DataFrame, *, path: Path, benchmark: str | None, model_name: str | None) -> pl.DataFrame:
    """``frame`` (checked by :func:`check_predictions`) with the columns an mmbatch predictions file has.

    A file in mmbatch's layout is completed row by row (a ``benchmark`` filled from ``--benchmark``, a ``mode`` or
    imported prompts where absent), so a part of it may be completed on its own; another tool's file must be
    completed whole: its ``g_index`` pairs rows (MME's two questions of an image).

    Raises:
        BadInputError: a file without a ``benchmark`` column and no ``--benchmark``, or an empty benchmark cell.
    """
    native = input_format(frame.columns) == "mmbatch"
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
    return frame


def _group_expression(frame: pl.DataFrame, benchmark: str | None, path: Path) -> pl.Expr:
    """``g_index`` for a file without one, by the benchmark's group rule; an unnamed benchmark groups as MMBench's
    circular copies (``index % 1e6``), which VLMEvalKit's files imply."""
    declared = find_benchmark(benchmark)
    rule = declared.group_rule if declared is not None else "circular-offset"
    if rule == "image-pair" and not {"image_path", "image_name"} & set(frame.columns):
        rule = "circular-offset"  # no image to pair by: each row (index % 1e6) is its own group, as before
    return group_index(frame.columns, rule, path=path)
