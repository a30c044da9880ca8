"""A pair's record of being finished: the digest of the settings that make its numbers, and the exit status
``pair.json`` holds (read by the runner, to skip finished pairs, and by the reports, to gather them)."""

from __future__ import annotations

import hashlib
import json

from mmbatch.errors import EXIT_OK, EXIT_ROWS_FAILED
from mmbatch.plans.layout import PairFiles
from mmbatch.plans.spec import BenchmarkEntry, ModelEntry


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
