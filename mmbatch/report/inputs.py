"""Reading the metrics tables a report compares (``score``'s .json, .tsv or .parquet output)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from mmbatch.errors import BadInputError
from mmbatch.score.metrics_table import read_metrics


def read_metrics_files(paths: list[Path]) -> pl.DataFrame:
    """Every metrics table in ``paths``, concatenated, with a ``source`` column naming the file.

    When two files hold the same model for the same benchmark and split (two runs of one model), the model is
    labelled ``model [file stem]`` in both, so the runs stand side by side instead of being mixed.

    Raises:
        BadInputError: a file is unreadable, is not a metrics table, or has no rows.
    """
    frames = []
    for path in paths:
        frame = read_metrics(path).frame
        if frame.height == 0:
            raise BadInputError("the metrics table has no rows", path=path)
        missing_model = frame.filter(pl.col("model").is_null())
        if missing_model.height:
            frame = frame.with_columns(pl.col("model").fill_null(path.stem))
        frames.append(frame.with_columns(pl.lit(str(path)).alias("source"), pl.lit(path.stem).alias("stem")))
    metrics = pl.concat(frames)
    runs = metrics.select("benchmark", "split", "model", "source").unique()
    repeated = runs.filter(pl.len().over("benchmark", "split", "model") > 1).select(
        "benchmark", "split", "model", "source").with_columns(pl.lit(True).alias("_repeated"))
    metrics = metrics.join(repeated, on=["benchmark", "split", "model", "source"], how="left", nulls_equal=True,
                           maintain_order="left")
    metrics = metrics.with_columns(
        pl.when(pl.col("_repeated")).then(pl.format("{} [{}]", pl.col("model"), pl.col("stem")))
        .otherwise(pl.col("model")).alias("model"))
    return metrics.drop("_repeated", "stem")
