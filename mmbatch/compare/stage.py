"""The ``compare`` stage as a function: two hits files in, a paired comparison per benchmark and split out.

Rows are matched on (benchmark, split, index). Only rows both models answered are compared; the rows only one file
has are counted per partition and reported, never silently dropped.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch import __version__
from mmbatch.answers.scores import SCORE
from mmbatch.backends.library_versions import differing, recorded_versions
from mmbatch.benchmarks.registry import answer_kinds, get_benchmark
from mmbatch.compare.identity import align_rows
from mmbatch.compare.paired import COMPARISON_SCHEMA, compare_partition
from mmbatch.errors import BadInputError
from mmbatch.json_text import parse_json
from mmbatch.own_inputs import refuse_writing_over_inputs
from mmbatch.row_facts import file_sha256
from mmbatch.score.bootstrap import CONFIDENCE, check_replicates, partition_rng
from mmbatch.score.hits import HIT, add_hits, file_scores
from mmbatch.score.scorers import get_scorer
from mmbatch.tableio import atomic_path, read_metadata, read_table, write_table

OUTPUT_FORMATS = (".json", ".parquet", ".tsv")
KEY = ("benchmark", "split")
"""Columns that split the files into independently compared partitions."""

COVERAGE_SCHEMA: dict[str, pl.DataType] = {
    "benchmark": pl.String(), "split": pl.String(), "model_a": pl.String(), "model_b": pl.String(),
    "rows_both": pl.Int64(), "rows_only_a": pl.Int64(), "rows_only_b": pl.Int64(),
}


@dataclass(frozen=True)
class CompareOptions:
    """Options of ``mmbatch compare``."""

    bootstrap: int = 1000
    """Paired bootstrap replicates for the interval of each difference (0: no intervals)."""
    seed: int = 0
    """Seed of the bootstrap; the same files and seed give the same intervals."""
    benchmark: str | None = None
    """Compare only this benchmark's rows."""


@dataclass(frozen=True)
class CompareResult:
    """What ``compare`` produces."""

    comparisons: pl.DataFrame
    """One row per (benchmark, split, level, group, metric): ``benchmark, split, model_a, model_b`` then the
    columns of :data:`mmbatch.compare.paired.COMPARISON_SCHEMA`."""
    coverage: pl.DataFrame
    """Per partition: rows both files have, and the rows only one of them has."""
    settings: dict[str, Any] = field(default_factory=dict)
    """What is recorded with the output: the files, models, bootstrap settings and mmbatch version."""


def compare_files(path_a: Path, path_b: Path, options: CompareOptions, output: Path | None = None) -> CompareResult:
    """Compare two hits files (model A is the baseline: ``diff = B - A``) and write ``output`` when given.

    Raises:
        BadInputError: a file is not a hits file, the options are invalid, or the files share no rows.
    """
    check_replicates(options.bootstrap)
    if output is not None:
        check_output_path(output)
        refuse_writing_over_inputs([output], [path_a, path_b])
    frame_a, frame_b = (_read_hits(path) for path in (path_a, path_b))
    result = compare_frames(frame_a, frame_b, options, names=(path_a.stem, path_b.stem))
    versions = {"a": recorded_versions(read_metadata(path_a)), "b": recorded_versions(read_metadata(path_b))}
    settings = {**result.settings, "file_a": str(path_a), "file_b": str(path_b),
                "hits_sha256": {"a": file_sha256(path_a), "b": file_sha256(path_b)}, "libraries": versions,
                "libraries_differ": differing(list(versions.values()))}
    result = CompareResult(result.comparisons, result.coverage, settings)
    if output is not None:
        write_comparison(result, output)
    return result


def compare_frames(frame_a: pl.DataFrame, frame_b: pl.DataFrame, options: CompareOptions, *,
                   names: tuple[str, str] = ("A", "B")) -> CompareResult:
    """Compare two models' scored rows; ``names`` label a model whose rows carry no ``model``."""
    check_replicates(options.bootstrap)
    if options.seed < 0:
        raise BadInputError(f"--seed must be 0 or more, not {options.seed}")
    frame_a, frame_b = (_normalised(f, name, options.benchmark) for f, name in zip((frame_a, frame_b), names,
                                                                                   strict=True))
    frame_b = align_rows(frame_a, frame_b)  # the same question, whatever numbering each file's route gave it
    partitions = frame_a.select(KEY).unique(maintain_order=True).vstack(
        frame_b.select(KEY).unique(maintain_order=True)).unique(maintain_order=True)
    comparisons, coverage = [], []
    for benchmark, split in partitions.iter_rows():
        rows_a = _partition(frame_a, benchmark, split)
        rows_b = _partition(frame_b, benchmark, split)
        model_a, model_b = _model(rows_a, names[0]), _model(rows_b, names[1])
        shared_a = rows_a.join(rows_b.select("index"), on="index", how="semi")
        shared_b = rows_b.join(rows_a.select("index"), on="index", how="semi")
        coverage.append({"benchmark": benchmark, "split": split, "model_a": model_a, "model_b": model_b,
                         "rows_both": shared_a.height, "rows_only_a": rows_a.height - shared_a.height,
                         "rows_only_b": rows_b.height - shared_b.height})
        if shared_a.height == 0:
            continue
        rng = partition_rng(options.seed, ("compare", benchmark, split)) if options.bootstrap else None
        paired = compare_partition(get_scorer(benchmark), shared_a.sort("index"), shared_b.sort("index"),
                                   replicates=options.bootstrap, rng=rng, graded=_graded(shared_a, shared_b))
        comparisons.append(paired.select(
            pl.lit(benchmark, pl.String).alias("benchmark"), pl.lit(split, pl.String).alias("split"),
            pl.lit(model_a, pl.String).alias("model_a"), pl.lit(model_b, pl.String).alias("model_b"), pl.all()))
    coverage_frame = pl.DataFrame(coverage, schema=COVERAGE_SCHEMA)
    if not comparisons or int(coverage_frame["rows_both"].sum()) == 0:
        raise BadInputError("the two files share no rows (matched on benchmark, split and index): "
                            "are they the same benchmark?")
    settings = {**asdict(options), "confidence": CONFIDENCE, "interval": "percentile of the paired difference",
                "resampling": "the benchmark's units (circular group, MME image, SEED row) within each stratum, "
                              "the same draw for both models",
                "test": "per metric (its 'test' column): McNemar exact (two-sided) on the unit verdicts of a 0/1 "
                        "answer kind, the exact sign test (two-sided) on the units one model scored higher for a "
                        "graded one; none for a metric without the same counted units in both files",
                "mmbatch_version": __version__}
    return CompareResult(pl.concat(comparisons), coverage_frame, settings)


def check_output_path(path: Path) -> None:
    """Fail before any work when ``path`` has an extension the comparison cannot be written as."""
    if path.suffix.lower() not in OUTPUT_FORMATS:
        raise BadInputError(f"cannot write a comparison as '{path.suffix or 'no extension'}'; use one of "
                            f"{', '.join(OUTPUT_FORMATS)}", path=path)


def write_comparison(result: CompareResult, path: Path) -> None:
    """``.json``: one object (settings, coverage, comparisons); ``.parquet``/``.tsv``: the comparisons table with
    settings and coverage in the file's metadata."""
    check_output_path(path)
    coverage = result.coverage.to_dicts()
    if path.suffix.lower() == ".json":
        document = {"settings": result.settings, "coverage": coverage,
                    "comparisons": result.comparisons.to_dicts()}
        with atomic_path(path) as tmp:
            tmp.write_text(json.dumps(document, indent=1, allow_nan=False) + "\n", encoding="utf-8")
        return
    write_table(result.comparisons, path, {"stage": "comparison", "compare": result.settings,
                                           "coverage": coverage})


def read_comparison(path: Path) -> CompareResult:
    """Read a comparison written by :func:`write_comparison` (any of its formats)."""
    if path.suffix.lower() == ".json":
        try:
            document = parse_json(path.read_bytes())
            comparisons = pl.DataFrame(document["comparisons"], schema=_output_schema())
            coverage = pl.DataFrame(document["coverage"], schema=COVERAGE_SCHEMA)
            return CompareResult(comparisons, coverage, dict(document["settings"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError, pl.exceptions.PolarsError) as error:
            raise BadInputError(f"not a comparison written by mmbatch compare: {error}", path=path) from error
    table = read_table(path)
    if table.metadata.get("stage") != "comparison":
        raise BadInputError("not a comparison written by mmbatch compare", path=path)
    coverage = pl.DataFrame(table.metadata.get("coverage", []), schema=COVERAGE_SCHEMA)
    return CompareResult(table.frame, coverage, dict(table.metadata.get("compare", {})))


def _output_schema() -> dict[str, pl.DataType]:
    return {"benchmark": pl.String(), "split": pl.String(), "model_a": pl.String(), "model_b": pl.String(),
            **COMPARISON_SCHEMA}


def _read_hits(path: Path) -> pl.DataFrame:
    if path.suffix.lower() == ".json":  # score writes hits as .parquet or .tsv only; .json is its metrics table
        _refuse_metrics_table(path)
    table = read_table(path)
    if {"metric", "value"} <= set(table.frame.columns) and "index" not in table.frame.columns:
        _refuse_metrics_table(path)
    frame = file_scores(table.frame, table.metadata)
    missing = [c for c in ("index", "benchmark", HIT, "extracted", "answer") if c not in frame.columns]
    if missing:
        raise BadInputError(f"not a hits file written by mmbatch score (missing {', '.join(missing)}); "
                            "compare reads METRICS.hits.parquet from beside the metrics table", path=path)
    return frame


def _refuse_metrics_table(path: Path) -> None:
    """A metrics table holds totals, not rows: point at the hits file ``score`` wrote beside it.

    Raises:
        BadInputError: always.
    """
    from mmbatch.score.metrics_table import hits_path

    beside = hits_path(path)
    found = "" if beside.is_file() else " (not there: rerun score with this metrics file as --output)"
    raise BadInputError(f"this is a metrics table; compare pairs rows, so give it the per-row hits file score wrote "
                        f"beside it: {beside}{found}", path=path)


def _normalised(frame: pl.DataFrame, name: str, benchmark: str | None) -> pl.DataFrame:
    """Rows of one file with ``model``/``split`` present, hits recomputed (and checked against the file's)."""
    frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias(c) for c in ("model", "split")
                               if c not in frame.columns)
    frame = frame.with_columns(pl.col("benchmark", "model", "split").cast(pl.String))
    if benchmark is not None:
        canonical = get_benchmark(benchmark).name
        frame = frame.filter(pl.col("benchmark") == canonical)
    names = frame["benchmark"].unique().to_list()
    for name in names:
        get_benchmark(name)  # an unknown benchmark is refused, naming the known ones
    stored = frame[HIT]
    # unmatched and failed (which scorers need) are not kept in hits files: derive them with score's own rule from
    # the file's per-row scores (computed by each row's answer kind for a file without them), and refuse a file whose
    # hits disagree with its scores (an edited file would give a wrong comparison).
    frame = add_hits(frame.drop(HIT), answer_kinds(names))
    if not frame[HIT].equals(stored.cast(pl.Int64), check_names=False):
        raise BadInputError(f"the 'hit' column of {name} disagrees with its extracted answers: rescore the file",
                            column=HIT)
    return frame


def _graded(*frames: pl.DataFrame) -> bool:
    """Whether any scored row of ``frames`` has a graded score (a ``score`` but no 0/1 ``hit``)."""
    return any(bool((frame[SCORE].is_not_null() & frame[HIT].is_null()).any()) for frame in frames)


def _partition(frame: pl.DataFrame, benchmark: str, split: str | None) -> pl.DataFrame:
    return frame.filter((pl.col("benchmark") == benchmark) & pl.col("split").eq_missing(split))


def _model(rows: pl.DataFrame, fallback: str) -> str:
    models = [m for m in rows["model"].unique().to_list() if m is not None]
    if len(models) > 1:
        raise BadInputError(f"{fallback} holds {len(models)} models for one benchmark ({', '.join(models[:4])}); "
                            "compare two files of one model each", column="model")
    return models[0] if models else fallback
