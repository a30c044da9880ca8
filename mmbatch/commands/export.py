"""``mmbatch export``: write predictions in the format an official server or tool expects.

``mmbench-submission`` is the xlsx the MMBench evaluation server takes (test split answers are hidden, so this is how
test results are obtained), ``mme-eval-tool`` the official MME tool's folder of ``<subtask>.txt`` files, and
``seed-upload`` the SEED-Bench leaderboard's ``{"question_id", "prediction"}`` lines. ``--to mlflow|wandb`` sends
metrics files to an experiment tracker instead (:mod:`mmbatch.commands.export_tracking`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mmbatch.commands import summary
from mmbatch.commands.export_tracking import add_tracking_options, run_tracking
from mmbatch.errors import EXIT_OK
from mmbatch.interop import EXPORT_FORMATS


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``export`` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "export",
        help=summary("export"),
        description="Write a predictions or extracted file in an official submission format: mmbench-submission "
        "(xlsx: index, question, options, prediction, answer, split...), mme-eval-tool (a folder of <subtask>.txt "
        "for the official calculation.py), seed-upload (JSON lines {\"question_id\", \"prediction\"}), mmmu-submission "
        "(one JSON object: MMMU id -> letter or answer text).",
    )
    parser.add_argument("--format", choices=list(EXPORT_FORMATS), help="the output's format")
    parser.add_argument("--input", type=Path, help="predictions or extracted file (.parquet, .tsv or .xlsx)")
    parser.add_argument("--output", type=Path,
                        help="file (.xlsx for mmbench-submission, .jsonl for seed-upload) or folder (mme-eval-tool)")
    add_tracking_options(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    """Export one stage file; the output appears complete or not at all."""
    import importlib

    from mmbatch.console import console, error_console
    from mmbatch.errors import BadInputError
    from mmbatch.own_inputs import refuse_writing_over_inputs
    from mmbatch.tableio import read_table

    if args.to is not None:
        return run_tracking(args)
    missing = [flag for flag in ("format", "input", "output") if getattr(args, flag) is None]
    if missing:
        raise BadInputError(f"export needs --format, --input and --output (missing --{missing[0]}), or --to "
                            "mlflow|wandb with metrics files")
    if args.metrics or args.plan is not None:
        raise BadInputError("metrics files and --plan go with --to mlflow|wandb, not with --format")
    module = importlib.import_module(EXPORT_FORMATS[args.format])
    module.check_output(args.output)
    refuse_writing_over_inputs([args.output], [args.input])
    table = read_table(args.input)
    try:
        result = module.export_rows(table.frame, args.output)
    except BadInputError as exc:
        if exc.path is not None:
            raise
        raise BadInputError(exc.reason, path=args.input, index=exc.index, column=exc.column) from None
    console.print(f"exported {result.rows} rows as {args.format} -> {args.output}"
                  + (f" ({len(result.paths)} files)" if len(result.paths) > 1 else ""),
                  soft_wrap=True, markup=False, highlight=False)
    for note in result.notes:
        error_console.print(f"note: {note}", soft_wrap=True, markup=False, highlight=False)
    return EXIT_OK
