"""Reading the metrics tables a report compares (``score``'s .json, .tsv or .parquet output)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import polars as pl

from mmbatch.errors import BadInputError
from mmbatch.report.provenance import Provenance, flag_library_differences, provenance
from mmbatch.score.metrics_table import read_metrics


def read_metrics_files(paths: list[Path], labels: Mapping[str, str] | None = None
                       ) -> tuple[pl.DataFrame, list[Provenance]]:
    """Every metrics table in ``paths``, concatenated, with a ``source`` column naming the file, and the
    provenance of each file.

    ``labels`` (file path -> display name, from ``--label``) names a file's model; without one, a model that is a
    local folder (``.cache/tiny-llava``) is shown by its folder name, a hub id as it is.

    When two files hold the same model for the same benchmark and split (two runs of one model), the model is
    labelled ``model [file]`` in both (the file by :func:`file_names`), so the runs stand side by side instead of
    being mixed.

    Raises:
        BadInputError: a file is unreadable, is not a metrics table, or has no rows.
    """
    labels = labels or {}
    unknown = sorted(set(labels) - {str(p) for p in paths})
    if unknown:
        raise BadInputError(f"--label names a file that is not reported: {unknown[0]}")
    frames, origins = [], []
    names = file_names(paths)
    for path, file_name in zip(paths, names, strict=True):
        table = read_metrics(path)
        frame = table.frame
        if frame.height == 0:
            raise BadInputError("the metrics table has no rows", path=path)
        frame = frame.with_columns(pl.col("model").fill_null(path.stem))
        label = labels.get(str(path))
        raw_models = frame["model"].unique(maintain_order=True).to_list()
        shown = {str(raw): label or display_name(str(raw)) for raw in raw_models}
        frame = frame.with_columns(pl.col("model").replace_strict(shown, return_dtype=pl.String))
        models = list(dict.fromkeys(shown.values()))
        origins.append(provenance(path, label or ", ".join(models), table.metadata, models, shown, file_name))
        frames.append(frame.with_columns(pl.lit(str(path)).alias("source"), pl.lit(file_name).alias("stem")))
    metrics = pl.concat(frames)
    runs = metrics.select("benchmark", "split", "model", "source").unique()
    repeated = runs.filter(pl.len().over("benchmark", "split", "model") > 1).select(
        "benchmark", "split", "model", "source").with_columns(pl.lit(True).alias("_repeated"))
    metrics = metrics.join(repeated, on=["benchmark", "split", "model", "source"], how="left", nulls_equal=True,
                           maintain_order="left")
    metrics = metrics.with_columns(
        pl.when(pl.col("_repeated")).then(pl.format("{} [{}]", pl.col("model"), pl.col("stem")))
        .otherwise(pl.col("model")).alias("model"))
    return metrics.drop("_repeated", "stem"), flag_library_differences(origins)


def file_names(paths: list[Path]) -> list[str]:
    """Each file by the fewest trailing parts of its path, extension dropped, that tell the files apart.

    ``run1.json, run2.json`` -> ``run1, run2``; ``a/mme/metrics.json, b/mme/metrics.json`` -> ``a/mme/metrics,
    b/mme/metrics`` (the same file given twice keeps one name).
    """
    parts = [Path(path).with_suffix("").parts or (str(path),) for path in paths]
    distinct = len({str(Path(path)) for path in paths})
    for depth in range(1, max((len(p) for p in parts), default=1) + 1):
        names = ["/".join(p[-depth:]) for p in parts]
        if len(set(names)) == distinct:
            return names
    return [str(Path(path)) for path in paths]


def display_name(model: str) -> str:
    """A local model folder by its name (``/data/models/tiny-llava`` -> ``tiny-llava``); hub ids unchanged."""
    if model.startswith(("/", "./", "../", "~", ".cache")) or (len(model) < 4096 and Path(model).is_dir()):
        return Path(model.rstrip("/")).name or model
    return model
