"""``mmbatch run``: prepare, infer, extract and score in one go, with the stages' own options."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``run`` command: a run folder plus every option of the four stages."""
    from mmbatch.pipeline import add_stage_options

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "run",
        help="prepare, infer, extract and score in one go",
        description="Run the four stages in order into one folder: prepared.parquet, predictions.parquet, "
        "extracted.parquet, metrics.json (+ metrics.hits.parquet). Options are the stages' own (the stage each "
        "comes from is in brackets); one that several stages share (--concurrency, --timeout, --max-retries, "
        "--seed, --force, --max-pixels, --media-root) applies to each of them, and one not given keeps each "
        "stage's default. Rerunning the same command resumes infer and extract. For shards across GPUs or "
        "machines, run the stages separately (docs/scale.md).",
    )
    parser.add_argument("--output-dir", required=True, type=Path, metavar="DIR",
                        help="the run folder for the four stage files")
    add_stage_options(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    """Run the stages; exit 0, 2 on bad input, or 3 when some rows failed."""
    from mmbatch.pipeline import run_pipeline

    return run_pipeline(args)
