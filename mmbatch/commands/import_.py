"""``mmbatch import``: turn predictions made by another tool into an mmbatch predictions file.

The output is an ordinary predictions-stage file, so ``mmbatch extract`` and ``mmbatch score`` take it as it is.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mmbatch.benchmarks.registry import benchmark_names
from mmbatch.commands import summary
from mmbatch.errors import EXIT_OK
from mmbatch.interop import IMPORT_FORMATS
from mmbatch.options import LazyHelpStore

"""Formats whose answers are joined with ``--questions``."""


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``import`` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "import",
        help=summary("import"),
        description="Read predictions made elsewhere into an mmbatch predictions file that `extract` and `score` "
        "accept. Formats: vlmevalkit (xlsx/tsv with a `prediction` column), llava-jsonl (LLaVA answers joined with "
        "--questions), mme-eval-tool (the official MME tool's folder of <subtask>.txt), seed-results (SEED-Bench "
        "`{question_id, prediction[, gt_answer]}` lines), llava-scienceqa (LLaVA's ScienceQA output json), lmms-eval "
        "(lmms-eval's samples_<task>.jsonl), mmvet-grades (the MM-Vet evaluator's "
        "<model>_<judge>-grade-<N>runs.json with --questions mm-vet.json), llava-bench-reviews (LLaVA-Bench "
        "answers with --questions, one review file per run).",
    )
    parser.add_argument("--format", required=True, choices=list(IMPORT_FORMATS), help="the input's format")
    parser.add_argument("--input", required=True, type=Path, help="the file or folder to read")
    parser.add_argument("--output", required=True, type=Path, help="predictions file to write (.parquet or .tsv)")
    parser.add_argument("--benchmark", action=LazyHelpStore,
                        lazy_help=lambda: f"{', '.join(benchmark_names())} (default: recognised from the data or the "
                        "VLMEvalKit file name)")
    parser.add_argument("--questions", type=Path, action="append", default=[],
                        help="question file joined with the answers: an MMBench TSV/xlsx, LLaVA question .jsonl, "
                        "MME question folder or POPE label folder (llava-jsonl); a SEED-Bench JSON or a results file "
                        "with gt_answer (seed-results); mm-vet.json and the answers json (mmvet-grades); a review "
                        "run's .jsonl (llava-bench-reviews). May be given more than once")
    parser.add_argument("--duplicate-index", choices=("refuse", "renumber"), default="refuse",
                        help="vlmevalkit: a file that repeats an index (VLMEvalKit's SEEDBench2 table has 3,099) is "
                        "refused (default) or, with renumber, imported with new indices past the largest for the "
                        "repeats, the source's index kept in source_index and the renumbered rows listed")
    parser.add_argument("--judged", type=Path,
                        help="vlmevalkit: VLMEvalKit's judged or intermediate file of the same predictions "
                        "(_<judge>_result.xlsx with hit/log, _auxmatch.xlsx with extracted/score, ...): its verdict "
                        "columns come in as vlmevalkit_<name>, row by row checked against --input, so `extract "
                        "--stored-verdicts` recomputes the published numbers without a judge. A judged file may also "
                        "be given alone as --input")
    parser.add_argument("--model", help="model name to record (default: the one the source records, else its file "
                        "or folder name without the benchmark and file-kind words: vila_13b_CCBench.xlsx -> vila_13b)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Import one file or folder, write the predictions file atomically and print what to know about it."""
    from mmbatch.console import console, error_console
    from mmbatch.interop.rows import ImportOptions
    from mmbatch.interop.run import import_file

    options = ImportOptions(
        input=args.input,
        benchmark=args.benchmark.lower() if args.benchmark else None,
        questions=tuple(args.questions),
        model=args.model,
        renumber_duplicates=args.duplicate_index == "renumber",
        judged=args.judged,
    )
    imported = import_file(args.format, options, args.output)
    frame, settings = imported.result.frame, imported.result.settings
    benchmarks = ", ".join(sorted(set(frame["benchmark"].to_list())))
    console.print(f"imported {frame.height} rows ({benchmarks}, model {settings.get('model')}) "
                  f"from {args.input} -> {args.output}", soft_wrap=True, markup=False, highlight=False)
    renumbered = imported.renumbered
    if renumbered.height:
        pairs = ", ".join(f"{old} -> {new}" for old, new in renumbered.head(10).iter_rows())
        more = f" and {renumbered.height - 10} more" if renumbered.height > 10 else ""
        error_console.print(f"note: {renumbered.height} rows repeated an earlier row's index and were renumbered: "
                            f"{pairs}{more} (all in the column source_index)", soft_wrap=True, markup=False,
                            highlight=False)
    if imported.answers_naming_empty_option:
        error_console.print(f"note: {imported.answers_naming_empty_option} rows whose answer names an empty option: "
                            "no answer can be right, they count wrong (as in VLMEvalKit)", soft_wrap=True,
                            markup=False, highlight=False)
    if imported.answers_written_as_option_text:
        error_console.print(f"note: {imported.answers_written_as_option_text} rows whose answer is an option's text, "
                            "not its letter: they count wrong (as in VLMEvalKit)", soft_wrap=True, markup=False,
                            highlight=False)
    if "answer" not in frame.columns or frame["answer"].is_null().all():
        error_console.print("note: the rows have no ground truth (`answer`): `mmbatch score` needs it; give the "
                            "question file that holds it with --questions, or use `mmbatch export` to submit",
                            soft_wrap=True, markup=False, highlight=False)
    return EXIT_OK
