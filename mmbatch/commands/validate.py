"""``mmbatch validate FILE``: recognise a stage file and report every violation of its schema."""

from __future__ import annotations

import argparse
from typing import Any

from mmbatch.errors import EXIT_BAD_INPUT, EXIT_OK


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``validate`` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "validate",
        help="check a stage file against its schema",
        description="Recognise the stage of FILE (prepared, predictions, extracted, hits, scores) and report every "
        "violation: missing columns, wrong types, duplicate index, answers that are not options...",
    )
    parser.add_argument("file", metavar="FILE", help="a .tsv, .parquet or .xlsx stage file")
    parser.add_argument("--stage", choices=["prepared", "predictions", "extracted", "hits", "scores"],
                        help="check against this stage instead of the detected one")
    return parser


def run(args: argparse.Namespace) -> int:
    """Validate one file; exit 0 when valid, 2 with every violation listed otherwise."""
    from mmbatch.console import console, error_console
    from mmbatch.schema.columns import STAGES
    from mmbatch.schema.validate import detect_stage, validate_frame
    from mmbatch.tableio import read_raw

    table = read_raw(args.file)
    stage = STAGES[args.stage] if args.stage else detect_stage(table.frame, table.metadata)
    frame, violations = validate_frame(table.frame, stage)
    if violations:
        error_console.print(f"{args.file}: invalid {stage.name} file, {len(violations)} problem(s):", soft_wrap=True)
        for violation in violations:
            error_console.print(f"  - {violation}", soft_wrap=True, markup=False)
        return EXIT_BAD_INPUT
    groups = frame["g_index"].n_unique() if "g_index" in frame.columns else None
    extra = f", {groups} groups" if groups is not None else ""
    console.print(f"{args.file}: valid {stage.name} file, {frame.height} rows{extra}", soft_wrap=True, markup=False)
    return EXIT_OK
