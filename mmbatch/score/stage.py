"""The ``score`` stage as a function: extracted rows in, per-row hits and the long metrics table out.

Rows are scored per (benchmark, model, split) partition by their benchmark's scorer; the CLI only reads, calls
:func:`score_frame` and writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch.benchmarks.registry import answer_kinds, get_benchmark
from mmbatch.errors import BadInputError
from mmbatch.row_facts import group_index
from mmbatch.score.bootstrap import CONFIDENCE, check_replicates, partition_rng
from mmbatch.score.checks import answered_rows, check_unique_index, require_columns, resolve_benchmarks
from mmbatch.score.estimate import estimate
from mmbatch.score.hits import FAILED, UNMATCHED, add_hits
from mmbatch.score.metrics_table import PARTITION, metrics_frame
from mmbatch.score.scorers import get_scorer

SUBSETS = ("all", "answered")
"""``--subset``: which rows ``score`` takes."""

POSITION = "__position"
"""A column ``score_frame`` adds while it works: each row's place in its input."""
RESAMPLING = "groups (circular group, MME image, SEED row) with replacement within each category/subtask/dimension"
"""How ``--bootstrap`` resamples, as recorded in the metadata."""


@dataclass(frozen=True)
class ScoreOptions:
    """Options of ``mmbatch score``."""

    benchmark: str | None = None
    """Score only this benchmark's rows; required when the file has no ``benchmark`` column."""
    bootstrap: int = 0
    """Bootstrap replicates for the 95 % intervals (0: no intervals)."""
    seed: int = 0
    """Seed of the bootstrap; the same file and seed give the same intervals."""
    subset: str = "all"
    """``all``: every row must have its ground truth; ``answered``: score the rows that have one, the coverage
    printed and recorded (e.g. predictions of a whole benchmark against the answers of its image questions)."""

    def settings(self) -> dict[str, Any]:
        """What is recorded under ``score`` in the output metadata."""
        settings: dict[str, Any] = {"benchmark": self.benchmark, "bootstrap": self.bootstrap, "subset": self.subset}
        if self.bootstrap:
            settings |= {"seed": self.seed, "confidence": CONFIDENCE, "interval": "percentile",
                         "resampling": RESAMPLING}
        return settings


@dataclass(frozen=True)
class ScoreResult:
    """What ``score`` produces."""

    metrics: pl.DataFrame
    """The long metrics table (columns of :data:`mmbatch.schema.columns.SCORES`)."""
    hits: pl.DataFrame
    """The scored rows with ``hit`` added."""
    warnings: tuple[str, ...] = field(default=())
    """Problems to show the user (splits without answers, MME images without two questions, ...)."""
    coverage: dict[str, Any] = field(default_factory=dict)
    """Rows in the input, rows scored, and the rows left out for having no answer, by ``data_type`` when known."""
    positions: pl.Series | None = None
    """Where each row of :attr:`hits` was among the input rows (0-based), for a writer that copies the rest of
    each input row beside it (:mod:`mmbatch.score.hits_file`)."""


def score_frame(frame: pl.DataFrame, options: ScoreOptions, *, path: Path | None = None) -> ScoreResult:
    """Score extracted rows.

    Args:
        frame: extracted rows (``index``, ``extracted``, ``answer``, and ``benchmark`` unless
            ``options.benchmark`` says it).
        options: benchmark filter and bootstrap settings.
        path: the input file, named in error messages.

    Raises:
        BadInputError: no rows, missing columns, an unknown benchmark, duplicate indices, or no ground truth.
    """
    check_replicates(options.bootstrap)
    require_columns(frame, path)
    if frame.height == 0:  # a metrics table of nothing would read as a finished evaluation
        raise BadInputError("the file has no rows to score", path=path)
    frame = frame.with_columns(pl.int_range(frame.height, dtype=pl.Int64).alias(POSITION))
    frame = resolve_benchmarks(frame, options.benchmark, path)
    frame = _with_default_columns(frame)
    check_unique_index(frame, path)
    if options.subset not in SUBSETS:
        raise BadInputError(f"--subset must be one of {', '.join(SUBSETS)}, not {options.subset!r}")
    everything = frame
    frame, warnings = answered_rows(frame, path, partial=options.subset == "answered")
    coverage = _coverage(everything, frame)
    if coverage["left_out"] and options.subset == "answered":
        by_type = ", ".join(f"{kind} {count}" for kind, count in coverage["left_out_by_data_type"].items())
        warnings.append(f"--subset answered: scored {coverage['scored']} of {coverage['rows']} rows "
                        f"({100 * coverage['scored'] / coverage['rows']:.2f} %); {coverage['left_out']} rows without "
                        f"an answer left out" + (f" ({by_type})" if by_type else ""))
    scorers = {name: get_scorer(name) for name in frame["benchmark"].unique().to_list()}
    hits = add_hits(frame, answer_kinds(scorers))
    parts = []
    for key, rows in _partitions(hits):
        plan = scorers[str(key[0])].plan(rows.drop(POSITION))
        warnings += [f"{_describe(key)}: {w}" for w in plan.warnings]
        rng = partition_rng(options.seed, key) if options.bootstrap else None
        parts.append(estimate(plan, replicates=options.bootstrap, rng=rng).with_columns(
            pl.lit(value, dtype=pl.String).alias(name) for name, value in zip(PARTITION, key, strict=True)))
    failed = int(hits[FAILED].sum())
    if failed:
        warnings.append(f"{failed} rows failed upstream (an 'error' from infer or extract); they count as wrong")
    positions = hits[POSITION]
    hits = hits.drop(UNMATCHED, FAILED, POSITION)
    return ScoreResult(metrics_frame(parts), hits, tuple(warnings), coverage, positions)


def _coverage(everything: pl.DataFrame, scored: pl.DataFrame) -> dict[str, Any]:
    """How many rows were scored of how many, and the rows left out by ``data_type`` (when the rows have one)."""
    if scored.height == everything.height:  # every row scored (the usual case): nothing to look for
        return {"rows": everything.height, "scored": scored.height, "left_out": 0, "left_out_by_data_type": {}}
    left_out = everything.join(scored.select("benchmark", "index"), on=["benchmark", "index"], how="anti")
    by_type: dict[str, int] = {}
    if "data_type" in left_out.columns and left_out.height:
        counts = left_out.group_by("data_type").len().sort("data_type", nulls_last=True)
        by_type = {str(kind): int(count) for kind, count in counts.iter_rows()}
    return {"rows": everything.height, "scored": scored.height, "left_out": left_out.height,
            "left_out_by_data_type": by_type}


def _describe(key: tuple[object, ...]) -> str:
    """``mme (model LaVIN, split dev)``, leaving out what the file does not say."""
    benchmark, model, split = key
    details = [f"{name} {value}" for name, value in (("model", model), ("split", split)) if value is not None]
    return f"{benchmark} ({', '.join(details)})" if details else str(benchmark)


def _partitions(frame: pl.DataFrame) -> list[tuple[tuple[object, ...], pl.DataFrame]]:
    """The (benchmark, model, split) partitions in a stable order; a one-partition file is not copied."""
    # counted column by column: a frame of the three (select, unique) copied them into one chunk each first
    if all(frame[name].n_unique() == 1 for name in PARTITION):
        return [(tuple(frame[name][0] for name in PARTITION), frame)]
    parts = frame.partition_by(list(PARTITION), as_dict=True, maintain_order=True)
    return sorted(parts.items(), key=lambda item: tuple("" if v is None else str(v) for v in item[0]))


def _with_default_columns(frame: pl.DataFrame) -> pl.DataFrame:
    """Add ``model`` and ``split`` (null) when absent, and ``g_index`` by each benchmark's declared group rule."""
    missing = [pl.lit(None, dtype=pl.String).alias(name) for name in ("model", "split") if name not in frame.columns]
    frame = frame.with_columns(missing) if missing else frame
    frame = frame.with_columns(pl.col("model", "split").cast(pl.String))
    if "g_index" in frame.columns:
        return frame
    default = pl.lit(None, dtype=pl.Int64)
    for name in frame["benchmark"].unique().to_list():
        key = group_index(frame.columns, get_benchmark(name).group_rule)
        default = pl.when(pl.col("benchmark") == name).then(key).otherwise(default)
    return frame.with_columns(default.cast(pl.Int64).alias("g_index"))
