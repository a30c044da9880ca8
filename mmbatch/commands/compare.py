"""``mmbatch compare A.hits B.hits``: are two models really different on the same questions?"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mmbatch.commands import summary
from mmbatch.errors import EXIT_OK
from mmbatch.options import non_negative_int


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``compare`` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "compare",
        help=summary("compare"),
        description="Compare two hits files written by `mmbatch score` (METRICS.hits.parquet) on the rows both "
        "models answered, matched on benchmark, split and index. For every metric of each benchmark and category: "
        "both values, the difference B - A with a paired bootstrap interval (the same draw of the benchmark's "
        "units for both models: circular groups, MME images, SEED rows) and, for a plain accuracy, McNemar's "
        "exact test on right-or-wrong verdicts per unit, or the exact sign test where the scores are graded "
        "(VQA accuracy, ANLS, a judge's grade). Rows only one file has are counted and reported.",
    )
    parser.add_argument("hits", nargs=2, type=Path, metavar="HITS_FILE", help="model A (the baseline), then model B")
    parser.add_argument("--output", type=Path, help="also write the comparison: .json, .parquet or .tsv "
                        "(give it to `mmbatch report --compare`)")
    parser.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                        help="paired bootstrap replicates (default 1000; 0: no intervals)")
    parser.add_argument("--seed", type=non_negative_int, default=0, metavar="S",
                        help="seed of the bootstrap (default 0)")
    parser.add_argument("--benchmark", help="compare only this benchmark's rows")
    return parser


def run(args: argparse.Namespace) -> int:
    """Compare the two files, print the tables and write ``--output``."""
    from mmbatch.backends.library_versions import difference_warning
    from mmbatch.compare.stage import CompareOptions, compare_files
    from mmbatch.compare.tables import print_comparison
    from mmbatch.console import console, error_console

    options = CompareOptions(bootstrap=args.bootstrap, seed=args.seed, benchmark=args.benchmark)
    result = compare_files(args.hits[0], args.hits[1], options, args.output)
    warning = difference_warning([("A", result.settings["libraries"]["a"]), ("B", result.settings["libraries"]["b"])])
    if warning is not None:
        error_console.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    print_comparison(result, console)
    if args.output is not None:
        error_console.print(f"wrote {args.output} ({result.comparisons.height} comparisons)", markup=False,
                            highlight=False, soft_wrap=True)
    return EXIT_OK
