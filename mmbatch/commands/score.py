"""``mmbatch score``: extracted rows -> per-row hits and the long metrics table (with optional bootstrap CIs)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mmbatch.benchmarks.registry import benchmark_names
from mmbatch.commands import summary
from mmbatch.errors import EXIT_OK
from mmbatch.options import LazyHelpStore, non_negative_int

if TYPE_CHECKING:
    from mmbatch.score.run import ScoreJob


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``score`` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "score",
        help=summary("score"),
        description="Compare each row's `extracted` answer with its `answer` and write the long metrics table "
        "(benchmark, model, split, level, group, metric, value, n, ci_low, ci_high) to --output, the per-row "
        "hits beside it (metrics.parquet -> metrics.hits.parquet; .tsv -> .hits.tsv; .json or .csv -> "
        ".hits.parquet), "
        "and print the tables. MMBench: CircularEval and vanilla; MME: acc, acc+, score and totals; SEED-Bench: "
        "per dimension, data type, overall and macro.",
    )
    parser.add_argument("--input", required=True, type=Path, help="extracted file (.parquet, .tsv or .xlsx)")
    parser.add_argument("--output", required=True, type=Path,
                        help="metrics table: .json (a list of rows), .csv, .tsv or .parquet")
    parser.add_argument("--benchmark", action=LazyHelpStore,
                        lazy_help=lambda: "score only this benchmark's rows (required when the file has no 'benchmark' "
                        f"column): {', '.join(benchmark_names())}")
    parser.add_argument("--bootstrap", type=int, default=0, metavar="N",
                        help="bootstrap replicates for 95%% percentile intervals in ci_low/ci_high (default 0: none)")
    parser.add_argument("--seed", type=non_negative_int, default=0, metavar="S",
                        help="seed of the bootstrap (default 0)")
    parser.add_argument("--subset", choices=("all", "answered"), default="all",
                        help="all (default): every row needs its ground truth; answered: score only the rows that "
                        "have one (e.g. SEED-Bench predictions against the answers of its image questions), the "
                        "coverage printed and recorded")
    return parser


def options(args: argparse.Namespace) -> ScoreJob:
    """The run the parsed arguments ask for."""
    from mmbatch.score.run import ScoreJob
    from mmbatch.score.stage import ScoreOptions

    return ScoreJob(args.input, args.output, ScoreOptions(benchmark=args.benchmark, bootstrap=args.bootstrap,
                                                          seed=args.seed, subset=args.subset))


def execute(job: ScoreJob) -> int:
    """Score, write both files and print the tables; exit 0 (bad input raises ``BadInputError``: exit 2)."""
    from rich.text import Text

    from mmbatch.console import console, error_console
    from mmbatch.score.run import run_score
    from mmbatch.score.tables import print_metrics

    written = run_score(job.input, job.output, job.options)
    result = written.result
    print_metrics(result.metrics, console)
    for warning in result.warnings:
        # The warning names subtasks and images from the file: plain text, whatever brackets they hold.
        error_console.print(Text("warning: ", style="yellow") + Text(warning), highlight=False, soft_wrap=True)
    error_console.print(f"wrote {written.metrics} ({result.metrics.height} metrics) and {written.hits} "
                        f"({result.hits.height} rows)", markup=False, highlight=False, soft_wrap=True)
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    """Score ``--input`` and write ``--output`` and its hits file; exit 0, or 2 on bad input."""
    return execute(options(args))
