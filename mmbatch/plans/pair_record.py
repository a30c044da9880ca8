"""A plan pair's completion record (``pair.json``): the settings it was finished with and its exit status.

The runner writes it last, after ``score``, and skips a pair whose record matches; the plan's reports list only the
pairs finished with the plan's current settings. Both read it here.
"""

from __future__ import annotations

import hashlib
import json

from mmbatch.errors import EXIT_OK, EXIT_ROWS_FAILED
from mmbatch.plans.layout import PairFiles
from mmbatch.plans.spec import BenchmarkEntry, ModelEntry
from mmbatch.tableio import atomic_path


def pair_settings(model: ModelEntry, benchmark: BenchmarkEntry) -> str:
    """SHA-256 of every setting that makes the pair's numbers: a finished pair is skipped only when it matches."""
    settings = {"prepare": benchmark.prepare, "infer": {**model.infer, **benchmark.infer}, "extract": benchmark.extract,
                "score": benchmark.score, "shards": benchmark.shards}
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()


def finished_status(files: PairFiles, settings: str) -> int | None:
    """The recorded exit status of a pair finished with ``settings``; None when it is not (or with other settings)."""
    if not files.status.is_file() or not files.metrics.is_file():
        return None
    try:
        record = json.loads(files.status.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("settings_sha256") != settings:
        return None
    status = record.get("status")
    return status if status in (EXIT_OK, EXIT_ROWS_FAILED) else None


def write_pair_record(files: PairFiles, model: ModelEntry, benchmark: BenchmarkEntry, status: int,
                      settings: str) -> None:
    """Record that the pair finished with ``status`` under ``settings`` (:func:`pair_settings`)."""
    record = {"model": model.name, "benchmark": benchmark.name, "status": status, "settings_sha256": settings}
    files.folder.mkdir(parents=True, exist_ok=True)
    with atomic_path(files.status) as tmp:
        tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
