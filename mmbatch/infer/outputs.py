"""Where an ``infer`` run writes, and the shape of the rows it writes.

A whole run writes ``--output``. Shard ``K`` of ``N`` writes ``NAME.shard-K-of-N.EXT`` beside it, so shards started
with the same command line (scheduler environment variables) never overwrite each other, and ``mmbatch merge``
joins them. Every run of one output, sharded or not and whatever ``N``, commits its progress to the same folder
``OUTPUT.partial/``, keyed by ``index``: this is what lets a later run with another shard count reuse the work.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch.backends.base import Result
from mmbatch.errors import BadInputError
from mmbatch.journal import partial_dir
from mmbatch.schema.columns import PREDICTION_COLUMNS
from mmbatch.schema.types import polars_type
from mmbatch.shards import Shard

PREDICTION_NAMES: tuple[str, ...] = tuple(c.name for c in PREDICTION_COLUMNS)
PREDICTION_SCHEMA: dict[str, pl.DataType] = {"index": pl.Int64(), **{
    c.name: polars_type(c.dtype) for c in PREDICTION_COLUMNS}}
GENERATED_IMAGE = "generated_image"
"""Written only by files with generate-image rows (mmbatch.infer.images)."""
DROPPED_COLUMNS = ("image",)
"""Input columns an ``infer`` output does not carry (the image payload, docs/contract.md §3)."""


def shard_output_path(output: Path, shard: Shard) -> Path:
    """``preds.parquet`` for a whole run, ``preds.shard-2-of-4.parquet`` for shard 2/4."""
    if shard.is_whole:
        return output
    return output.with_name(f"{output.stem}.shard-{shard.k}-of-{shard.n}{output.suffix}")


def shard_outputs_beside(output: Path) -> list[Path]:
    """The shard files of ``output`` that lie beside it (``preds.shard-K-of-N.parquet``), in shard order.

    What ``mmbatch merge --output OUTPUT`` takes when it is given no input, so that a deployment need not know the
    shard count when it merges (a Kubernetes Job, an Airflow task). ``merge`` still checks that every shard of the
    recorded N is there.

    Raises:
        BadInputError: no shard file, or shard files of more than one shard count (leftovers of another run).
    """
    pattern = re.compile(rf"{re.escape(output.stem)}\.shard-(\d+)-of-(\d+){re.escape(output.suffix)}")
    found = {}
    for path in output.parent.glob(f"{glob.escape(output.stem)}.shard-*-of-*{glob.escape(output.suffix)}"):
        matched = pattern.fullmatch(path.name)
        if matched:
            found[path] = (int(matched.group(2)), int(matched.group(1)))
    counts = sorted({n for n, _ in found.values()})
    if not counts:
        raise BadInputError(f"no shard files {output.stem}.shard-K-of-N{output.suffix} beside it to merge",
                            path=output)
    if len(counts) > 1:
        raise BadInputError(f"shard files of {len(counts)} different shard counts ({', '.join(map(str, counts))}) "
                            "lie beside it: remove the leftovers of the other run, or name the inputs", path=output)
    return sorted(found, key=lambda path: found[path])


def progress_folder(output: Path) -> Path:
    """The progress folder shared by every run (and every shard) of ``output``."""
    return partial_dir(output)


def carried_columns(input_columns: Sequence[str]) -> list[str]:
    """The input columns an output keeps, in input order: all but the image payload and old predictions."""
    return [name for name in input_columns if name not in DROPPED_COLUMNS and name not in PREDICTION_NAMES]


def result_records(results: Sequence[Result], model: str) -> list[dict[str, Any]]:
    """One plain record per result: ``index`` and the prediction columns (:data:`PREDICTION_SCHEMA`)."""
    return [
        {
            "index": r.index,
            "prediction": r.prediction,
            "choice_logprobs": r.choice_logprobs,
            "choice_ntokens": r.choice_ntokens,
            "model": model,
            "error": r.error,
            "output_tokens": r.output_tokens,
            "latency_ms": r.latency_ms,
            "generated_image": r.generated_image,
        }
        for r in results
    ]


def finished_frame(rows: pl.DataFrame, input_columns: Sequence[str]) -> pl.DataFrame:
    """Committed rows in the output's column order and declared types, sorted by ``index``."""
    columns = carried_columns(input_columns) + list(PREDICTION_NAMES)
    missing = [pl.lit(None, dtype=PREDICTION_SCHEMA[name]).alias(name) for name in PREDICTION_NAMES
               if name not in rows.columns]
    rows = rows.with_columns(missing) if missing else rows
    typed = [pl.col(name).cast(PREDICTION_SCHEMA[name]) for name in PREDICTION_NAMES]
    if rows[GENERATED_IMAGE].is_null().all():  # only files with generate-image rows carry the column
        columns.remove(GENERATED_IMAGE)
    return rows.with_columns(typed).select(columns).sort("index")
