"""``mmbatch validate FILE``: recognise a stage file and report every violation of its schema."""

from __future__ import annotations

import argparse
from typing import Any

from mmbatch.commands import summary
from mmbatch.errors import EXIT_BAD_INPUT, EXIT_OK


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``validate`` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "validate",
        help=summary("validate"),
        description="Recognise the stage of FILE (prepared, predictions, extracted, hits, scores) and report every "
        "violation: missing columns, wrong types, duplicate index, answers that are not options... Stage files, the "
        "rows files (.hits) and metrics tables of score (.json, .tsv, .parquet) are all checked.",
    )
    parser.add_argument("file", metavar="FILE", help="a .tsv, .parquet or .xlsx stage file, or a .json metrics table")
    parser.add_argument("--stage", choices=["prepared", "predictions", "extracted", "hits", "scores"],
                        help="check against this stage instead of the detected one")
    return parser


def run(args: argparse.Namespace) -> int:
    """Validate one file; exit 0 when valid, 2 with every violation listed otherwise."""
    from mmbatch.console import console, error_console
    from mmbatch.schema.columns import STAGES
    from mmbatch.schema.validate import (
        answer_is_option_text,
        answer_names_empty_option,
        detect_stage,
        validate_frame,
    )
    from mmbatch.score.metrics_table import read_metrics_rows
    from mmbatch.tableio import read_raw

    # `.json` is only ever a metrics table (score's default output), read as score writes it.
    table = read_metrics_rows(args.file) if str(args.file).lower().endswith(".json") else read_raw(args.file)
    stage = STAGES[args.stage] if args.stage else detect_stage(table.frame, table.metadata)
    frame, violations = validate_frame(table.frame, stage)
    if violations:
        error_console.print(f"{args.file}: invalid {stage.name} file, {len(violations)} problem(s):", soft_wrap=True,
                            markup=False, highlight=False)
        for violation in violations:
            error_console.print(f"  - {violation}", soft_wrap=True, markup=False, highlight=False)
        return EXIT_BAD_INPUT
    groups = frame["g_index"].n_unique() if "g_index" in frame.columns else None
    extra = f", {groups} groups" if groups is not None else ""
    what = "metrics" if stage.name == "scores" else "rows"
    console.print(f"{args.file}: valid {stage.name} file, {frame.height} {what}{extra}", soft_wrap=True, markup=False,
                  highlight=False)
    unanswerable = int(answer_names_empty_option(frame).sum()) if stage.option_columns else 0
    if unanswerable:
        error_console.print(f"note: {unanswerable} rows whose answer names an empty option: no answer can be right, "
                            "they count wrong (as in VLMEvalKit)", soft_wrap=True, markup=False, highlight=False)
    as_text = int(answer_is_option_text(frame).sum()) if stage.option_columns else 0
    if as_text:
        error_console.print(f"note: {as_text} rows whose answer is an option's text, not its letter: they count wrong "
                            "(as in VLMEvalKit)", soft_wrap=True, markup=False, highlight=False)
    return EXIT_OK
