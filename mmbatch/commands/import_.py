"""``mmbatch import``: turn predictions made by another tool into an mmbatch predictions file.

The output is an ordinary predictions-stage file, so ``mmbatch extract`` and ``mmbatch score`` take it as it is.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mmbatch.benchmarks.registry import benchmark_names
from mmbatch.errors import EXIT_OK
from mmbatch.interop import IMPORT_FORMATS

USES_QUESTIONS = ("llava-jsonl", "seed-results")
"""Formats whose answers are joined with ``--questions``."""


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``import`` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "import",
        help="read predictions made by VLMEvalKit, LLaVA, the MME tool or SEED-Bench into a predictions file",
        description="Read predictions made elsewhere into an mmbatch predictions file that `extract` and `score` "
        "accept. Formats: vlmevalkit (xlsx/tsv with a `prediction` column), llava-jsonl (LLaVA answers joined with "
        "--questions), mme-eval-tool (the official MME tool's folder of <subtask>.txt), seed-results (SEED-Bench "
        "`{question_id, prediction[, gt_answer]}` lines).",
    )
    parser.add_argument("--format", required=True, choices=list(IMPORT_FORMATS), help="the input's format")
    parser.add_argument("--input", required=True, type=Path, help="the file or folder to read")
    parser.add_argument("--output", required=True, type=Path, help="predictions file to write (.parquet or .tsv)")
    parser.add_argument("--benchmark", help=f"{', '.join(benchmark_names())} (default: recognised from the data "
                        "or the VLMEvalKit file name)")
    parser.add_argument("--questions", type=Path, action="append", default=[],
                        help="question file joined with the answers: an MMBench TSV/xlsx, LLaVA question .jsonl or "
                        "MME question folder (llava-jsonl); a SEED-Bench JSON or a results file with gt_answer "
                        "(seed-results). May be given more than once")
    parser.add_argument("--duplicate-index", choices=("refuse", "renumber"), default="refuse",
                        help="vlmevalkit: a file that repeats an index (VLMEvalKit's SEEDBench2 table has 3,099) is "
                        "refused (default) or, with renumber, imported with new indices past the largest for the "
                        "repeats, the source's index kept in source_index and the renumbered rows listed")
    parser.add_argument("--model", help="model name to record (default: the one in the source, else its file name)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Import one file or folder and write the predictions file atomically."""
    import importlib

    import polars as pl

    from mmbatch.console import console, error_console
    from mmbatch.errors import BadInputError
    from mmbatch.interop.rows import ImportOptions
    from mmbatch.schema.validate import answer_names_empty_option
    from mmbatch.tableio import file_format, write_table

    file_format(args.output, writing=True)
    if args.questions and args.format not in USES_QUESTIONS:
        raise BadInputError(f"--questions applies to {' and '.join(USES_QUESTIONS)}; {args.format} files carry "
                            "their questions")
    options = ImportOptions(
        input=args.input,
        benchmark=args.benchmark.lower() if args.benchmark else None,
        questions=tuple(args.questions),
        model=args.model,
        renumber_duplicates=args.duplicate_index == "renumber",
    )
    if options.renumber_duplicates and args.format != "vlmevalkit":
        raise BadInputError(f"--duplicate-index renumber applies to vlmevalkit files, not {args.format}")
    module = importlib.import_module(IMPORT_FORMATS[args.format])
    result = module.import_rows(options)
    unanswerable = int(answer_names_empty_option(result.frame).sum())
    settings = {**result.settings, "source": str(args.input), "questions": [str(q) for q in args.questions],
                "answers_naming_empty_option": unanswerable}
    write_table(result.frame, args.output, {"stage": "predictions", "import": settings})
    benchmarks = ", ".join(sorted(set(result.frame["benchmark"].to_list())))
    console.print(f"imported {result.frame.height} rows ({benchmarks}, model {settings.get('model')}) "
                  f"from {args.input} -> {args.output}", soft_wrap=True, markup=False, highlight=False)
    if "source_index" in result.frame.columns:
        renumbered = result.frame.filter(pl.col("source_index").is_not_null()).select("source_index", "index")
        pairs = ", ".join(f"{old} -> {new}" for old, new in renumbered.head(10).iter_rows())
        more = f" and {renumbered.height - 10} more" if renumbered.height > 10 else ""
        error_console.print(f"note: {renumbered.height} rows repeated an earlier row's index and were renumbered: "
                            f"{pairs}{more} (all in the column source_index)", soft_wrap=True, markup=False,
                            highlight=False)
    if unanswerable:
        error_console.print(f"note: {unanswerable} rows whose answer names an empty option: no answer can be right, "
                            "they count wrong (as in VLMEvalKit)", soft_wrap=True, markup=False, highlight=False)
    if "answer" not in result.frame.columns or result.frame["answer"].is_null().all():
        error_console.print("note: the rows have no ground truth (`answer`): `mmbatch score` needs it; give the "
                            "question file that holds it with --questions, or use `mmbatch export` to submit",
                            soft_wrap=True, markup=False, highlight=False)
    return EXIT_OK
