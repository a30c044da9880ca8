"""Where an ``infer`` run writes, and the shape of the rows it writes.

A whole run writes ``--output``. Shard ``K`` of ``N`` writes ``NAME.shard-K-of-N.EXT`` beside it, so shards started
with the same command line (scheduler environment variables) never overwrite each other, and ``mmbatch merge``
joins them. Every run of one output, sharded or not and whatever ``N``, commits its progress to the same folder
``OUTPUT.partial/``, keyed by ``index``: this is what lets a later run with another shard count reuse the work.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch.backends.base import Result
from mmbatch.journal import partial_dir
from mmbatch.schema.columns import PREDICTION_COLUMNS
from mmbatch.shards import Shard
from mmbatch.tableio import polars_type

PREDICTION_NAMES: tuple[str, ...] = tuple(c.name for c in PREDICTION_COLUMNS)
PREDICTION_SCHEMA: dict[str, pl.DataType] = {"index": pl.Int64(), **{
    c.name: polars_type(c.dtype) for c in PREDICTION_COLUMNS}}
DROPPED_COLUMNS = ("image",)
"""Input columns an ``infer`` output does not carry (the image payload, contract.md)."""


def shard_output_path(output: Path, shard: Shard) -> Path:
    """``preds.parquet`` for a whole run, ``preds.shard-2-of-4.parquet`` for shard 2/4."""
    if shard.is_whole:
        return output
    return output.with_name(f"{output.stem}.shard-{shard.k}-of-{shard.n}{output.suffix}")


def progress_folder(output: Path) -> Path:
    """The progress folder shared by every run (and every shard) of ``output``."""
    return partial_dir(output)


def carried_columns(input_columns: Sequence[str]) -> list[str]:
    """The input columns an output keeps, in input order: all but the image payload and old predictions."""
    return [name for name in input_columns if name not in DROPPED_COLUMNS and name not in PREDICTION_NAMES]


def results_frame(results: Sequence[Result], model: str, *, with_index: bool = True) -> pl.DataFrame:
    """The prediction columns (and ``index``) for ``results``, typed as declared even when all null."""
    schema = PREDICTION_SCHEMA if with_index else {k: v for k, v in PREDICTION_SCHEMA.items() if k != "index"}
    records: list[dict[str, Any]] = [
        {
            **({"index": r.index} if with_index else {}),
            "prediction": r.prediction,
            "choice_logprobs": r.choice_logprobs,
            "choice_ntokens": r.choice_ntokens,
            "model": model,
            "error": r.error,
            "output_tokens": r.output_tokens,
            "latency_ms": r.latency_ms,
        }
        for r in results
    ]
    return pl.DataFrame(records, schema=schema)


def output_rows(inputs: pl.DataFrame, positions: dict[int, int], results: Sequence[Result],
                model: str) -> pl.DataFrame:
    """Input rows (already without the dropped columns) beside their results, in ``results`` order.

    ``positions`` maps each ``index`` to its row in ``inputs``; gathering by position instead of joining keeps a
    commit cheap when a backend yields one result at a time.
    """
    predictions = results_frame(results, model, with_index=False)
    carried = inputs[[positions[result.index] for result in results]]
    return pl.concat([carried, predictions], how="horizontal")


def finished_frame(rows: pl.DataFrame, input_columns: Sequence[str]) -> pl.DataFrame:
    """Committed rows in the output's column order and declared types, sorted by ``index``."""
    columns = carried_columns(input_columns) + list(PREDICTION_NAMES)
    missing = [pl.lit(None, dtype=PREDICTION_SCHEMA[name]).alias(name) for name in PREDICTION_NAMES
               if name not in rows.columns]
    rows = rows.with_columns(missing) if missing else rows
    typed = [pl.col(name).cast(PREDICTION_SCHEMA[name]) for name in PREDICTION_NAMES]
    return rows.with_columns(typed).select(columns).sort("index")
