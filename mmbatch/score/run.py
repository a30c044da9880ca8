"""The ``score`` stage as a function that writes its own outputs: the metrics table and the per-row hits file.

The CLI parses options, calls :func:`run_score` and prints; Python callers (``from mmbatch import score``) get the
same files and the same :class:`~mmbatch.score.stage.ScoreResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mmbatch.atomic_files import check_name_fits
from mmbatch.own_inputs import refuse_writing_over_inputs
from mmbatch.row_facts import file_sha256
from mmbatch.score.bootstrap import check_replicates
from mmbatch.score.hits import file_scores, scores_metadata
from mmbatch.score.hits_file import HitsFile, scored_columns
from mmbatch.score.metrics_table import check_metrics_path, hits_path, write_metrics
from mmbatch.score.stage import ScoreOptions, ScoreResult, score_frame
from mmbatch.stage_records import ScoreRecord
from mmbatch.table_batches import read_batched
from mmbatch.tableio import metadata_sidecar, write_batches


@dataclass(frozen=True)
class ScoreJob:
    """One ``score`` run: the file to score, where the metrics go and how."""

    input: Path
    """The extracted file."""
    output: Path
    """The metrics table to write; the hits file goes beside it."""
    options: ScoreOptions = field(default_factory=ScoreOptions)
    """What to score and how."""


@dataclass(frozen=True)
class ScoreFiles:
    """What a ``score`` run wrote."""

    metrics: Path
    """The metrics table (``.json``, ``.tsv`` or ``.parquet``)."""
    hits: Path
    """The scored rows with ``hit`` (``NAME.hits.parquet`` beside the metrics)."""
    result: ScoreResult
    """The metrics, the scored rows (the columns scoring read: the hits file has every column), the warnings and
    the coverage."""


def run_score(input_path: Path | str, output: Path | str, options: ScoreOptions | None = None) -> ScoreFiles:
    """Score the extracted file ``input_path`` and write ``output`` and its hits file (each atomically).

    Raises:
        BadInputError: bad input or options; nothing is written then.
    """
    input_path, output, options = Path(input_path), Path(output), options or ScoreOptions()
    check_metrics_path(output)
    check_replicates(options.bootstrap)
    check_name_fits(output, hits_path(output), *([metadata_sidecar(output)] if output.suffix != ".parquet" else []))
    refuse_writing_over_inputs([output, hits_path(output)], [input_path])
    table = read_batched(input_path)
    read = scored_columns(table, options.benchmark)  # the rows' texts are copied into the hits file, not read here
    frame = file_scores(table.select_contiguous(*read), table.metadata)
    result = score_frame(frame, options, path=input_path)
    rows_path = hits_path(output)
    record = ScoreRecord(benchmark=options.benchmark, subset=options.subset, bootstrap=options.bootstrap,
                         coverage=result.coverage)
    settings = {**options.settings(), **record.to_metadata(), "input": str(input_path), "metrics_file": output.name,
                "hits_file": rows_path.name, "warnings": list(result.warnings)}
    recorded = {**table.metadata, "stage": "hits", "score": settings, **scores_metadata(result.hits)}
    write_batches(HitsFile(table, read, frame.columns, result).batches(), rows_path, lambda: recorded)
    # The hits' digest ties the metrics to the rows they came from: `report --compare` shows a comparison only beside
    # the metrics of the very hits files it compared.
    settings["hits_sha256"] = file_sha256(rows_path)
    write_metrics(result.metrics, output, {**table.metadata, "stage": "scores", "score": settings})
    return ScoreFiles(output, rows_path, result)
