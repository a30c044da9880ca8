"""The long metrics table of ``score``: its columns, and writing/reading it as .json, .tsv or .parquet.

Columns (docs/contract.md §3): ``benchmark, model, split, level, group, metric, value, n, ci_low, ci_high``. A ``.json``
file is a plain JSON list of row objects; its metadata lives in the sidecar ``FILE.json.meta.json`` (as for TSV).
The per-row hits go to a stage file beside it: ``metrics.parquet`` -> ``metrics.hits.parquet``,
``metrics.tsv`` -> ``metrics.hits.tsv``, ``metrics.json`` -> ``metrics.hits.parquet``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch import __version__
from mmbatch.errors import BadInputError
from mmbatch.schema.columns import SCORES
from mmbatch.tableio import Table, atomic_path, metadata_sidecar, parse_metadata, read_table, write_table

PARTITION = ("benchmark", "model", "split")
"""Columns that split a file into independently scored partitions."""

METRICS_COLUMNS: tuple[str, ...] = tuple(column.name for column in SCORES.columns)
METRICS_SCHEMA: dict[str, pl.DataType] = {
    "benchmark": pl.String(), "model": pl.String(), "split": pl.String(), "level": pl.String(),
    "group": pl.String(), "metric": pl.String(), "value": pl.Float64(), "n": pl.Int64(),
    "ci_low": pl.Float64(), "ci_high": pl.Float64(),
}
METRICS_FORMATS = (".json", ".tsv", ".parquet")


def metrics_frame(parts: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """Concatenate per-partition estimates into the metrics table, columns in contract order."""
    frames = [part.select(METRICS_COLUMNS).cast(pl.Schema(METRICS_SCHEMA)) for part in parts]
    return pl.concat(frames) if frames else pl.DataFrame(schema=METRICS_SCHEMA)


def check_metrics_path(path: Path) -> None:
    """Fail before any work when the output extension is not one the metrics table can be written as."""
    if path.suffix.lower() not in METRICS_FORMATS:
        raise BadInputError(f"cannot write metrics as '{path.suffix or 'no extension'}'; use one of "
                            f"{', '.join(METRICS_FORMATS)}", path=path)


def hits_path(metrics_path: Path) -> Path:
    """Where the per-row hits file of ``metrics_path`` goes (same folder, ``.hits`` before the extension)."""
    suffix = metrics_path.suffix.lower()
    hits_suffix = ".tsv" if suffix == ".tsv" else ".parquet"
    return metrics_path.with_name(f"{metrics_path.stem}.hits{hits_suffix}")


def write_metrics(frame: pl.DataFrame, path: Path, metadata: dict[str, Any]) -> Path:
    """Write the metrics table atomically; ``.json`` as a list of rows plus a metadata sidecar."""
    check_metrics_path(path)
    if path.suffix.lower() != ".json":
        return write_table(frame, path, metadata)
    metadata = {"mmbatch_version": __version__, **metadata}
    rows = [{key: _json_value(value) for key, value in row.items()} for row in frame.to_dicts()]
    with atomic_path(metadata_sidecar(path)) as tmp:
        tmp.write_text(json.dumps(metadata, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _json_value(value: Any) -> Any:
    """NaN is not JSON: write it as null."""
    return None if isinstance(value, float) and math.isnan(value) else value


def read_metrics(path: str | Path) -> Table:
    """Read a metrics table written by ``score`` (.json, .tsv or .parquet) with its metadata.

    Raises:
        BadInputError: the file is missing, unreadable or lacks a metrics column; a value or interval bound is NaN
            or infinite.
    """
    path = Path(path)
    check_metrics_path(path)
    table = _read_json_metrics(path) if path.suffix.lower() == ".json" else read_table(path)
    missing = [c for c in METRICS_COLUMNS if c not in table.frame.columns]
    if missing:
        raise BadInputError(f"not a metrics table: missing column(s) {', '.join(missing)}", path=path,
                            column=missing[0])
    table.frame = table.frame.cast(pl.Schema(METRICS_SCHEMA))
    _check_finite(table.frame, path)
    return table


def _check_finite(frame: pl.DataFrame, path: Path) -> None:
    """``score`` never writes a NaN or infinite number (an undefined metric is left out, a missing bound is null),
    so one comes from a file edited or made elsewhere: refused, rather than ranked first or drawn off the chart."""
    for column in ("value", "ci_low", "ci_high"):
        bad = (frame[column].is_nan() | frame[column].is_infinite()).fill_null(False)
        if bad.any():
            row = frame.row(int(bad.arg_max() or 0), named=True)
            where = "/".join(str(row[key]) for key in ("benchmark", "model", "level", "group", "metric"))
            raise BadInputError(f"{row[column]} is not a finite number (metric {where}); score writes finite values "
                                "only", path=path, column=column)


def read_metrics_rows(path: str | Path) -> Table:
    """A ``.json`` metrics table as written, column types unchecked (for ``validate`` to report on).

    Raises:
        BadInputError: the file is missing or not a JSON list of rows.
    """
    return _read_json_metrics(Path(path), schema=None)


def _read_json_metrics(path: Path, schema: dict[str, pl.DataType] | None = METRICS_SCHEMA) -> Table:
    if not path.is_file():
        raise BadInputError("no such file", path=path)
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadInputError(f"not a JSON metrics file ({exc})", path=path) from exc
    if not isinstance(rows, list):
        raise BadInputError("not a JSON metrics file: expected a list of rows", path=path)
    if not all(isinstance(row, dict) for row in rows):
        raise BadInputError("not a JSON metrics file: expected a list of objects", path=path)
    try:
        if schema is None:
            frame = pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame(schema=METRICS_SCHEMA)
        else:
            frame = pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)
    except (pl.exceptions.PolarsError, TypeError, ValueError) as exc:
        raise BadInputError(f"not a JSON metrics file: the rows do not form a table ({exc})", path=path) from exc
    sidecar = metadata_sidecar(path)
    metadata = parse_metadata(sidecar.read_bytes(), sidecar) if sidecar.is_file() else {}
    return Table(frame, metadata)
