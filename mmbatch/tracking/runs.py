"""A metrics file as a tracked run: its provenance as parameters, every metric of its table as a number.

A metric's name is its row's path, ``benchmark/split/level/group/metric`` (the split left out when there is none),
each part with the characters MLflow refuses in a name (anything but letters, digits, ``_ . -`` and spaces) written
as ``_``; its interval bounds are ``NAME.ci_low`` and ``NAME.ci_high``. Two rows that would get the same name are
refused rather than one silently replacing the other. W&B gets the same names, so both trackers show one table.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mmbatch.errors import BadInputError
from mmbatch.tableio import metadata_sidecar

UNSAFE = re.compile(r"[^\w.\- ]")
"""Characters MLflow does not take in a metric or parameter name (its rule, colons left out as on Windows)."""


@dataclass(frozen=True)
class TrackedRun:
    """One metrics file as a run of a tracker."""

    name: str
    """The run's name (``model/benchmark`` for a plan's pair, else the model and the file)."""
    source: Path
    """The metrics file."""
    params: dict[str, str]
    """Its provenance (model, revision, backend, template, judge, rules, versions, digests) and the file's path."""
    metrics: dict[str, float]
    """Metric name -> value, from every row of the metrics table (and its interval bounds)."""
    files: tuple[Path, ...]
    """The metrics file and its metadata sidecar, logged as artifacts."""


def name_part(text: str) -> str:
    """One part of a metric name: characters MLflow refuses written as ``_``; never empty, ``.`` or ``..``."""
    cleaned = UNSAFE.sub("_", text.replace("/", "_")).strip()
    return cleaned if cleaned and set(cleaned) != {"."} else "_"


def metric_name(benchmark: str, split: str | None, level: str, group: str, metric: str) -> str:
    """The tracked name of one metrics-table row."""
    parts = [benchmark, *([split] if split else []), level, group, metric]
    return "/".join(name_part(part) for part in parts)


def param_name(field: str) -> str:
    """A provenance field as a parameter name: ``written (UTC)`` -> ``written_utc``."""
    return re.sub(r"[^a-z0-9]+", "_", field.lower()).strip("_")


def tracked_run(path: Path, name: str | None = None) -> TrackedRun:
    """Read one metrics file (``score``'s .json, .csv, .tsv or .parquet) as a run.

    Raises:
        BadInputError: an unreadable metrics file, or two rows whose names collide after cleaning.
    """
    from mmbatch.report.inputs import display_name
    from mmbatch.report.provenance import provenance
    from mmbatch.score.metrics_table import read_metrics

    table = read_metrics(path)
    frame = table.frame
    models = [display_name(str(model)) for model in frame["model"].drop_nulls().unique(maintain_order=True)]
    origin = provenance(path, ", ".join(models), table.metadata, models, {})
    params = {param_name(field): value for field, value in origin.values.items()}
    params["metrics_file"] = str(path)
    metrics: dict[str, float] = {}
    rows: dict[str, Mapping[str, object]] = {}
    for row in frame.iter_rows(named=True):
        if row["value"] is None:
            continue
        key = metric_name(row["benchmark"], row["split"], row["level"], row["group"], row["metric"])
        if key in rows:
            raise BadInputError(f"rows {_where(rows[key])} and {_where(row)} would both be tracked as {key!r}",
                                path=path)
        rows[key] = row
        metrics[key] = float(row["value"])
        for bound in ("ci_low", "ci_high"):
            if row[bound] is not None:
                metrics[f"{key}.{bound}"] = float(row[bound])
    sidecar = metadata_sidecar(path)
    files = (path, sidecar) if sidecar.is_file() else (path,)
    return TrackedRun(name or f"{', '.join(models) or path.stem} ({path.name})", path, params, metrics, files)


def _where(row: Mapping[str, object]) -> str:
    return "/".join(str(row[key]) for key in ("benchmark", "split", "level", "group", "metric"))
