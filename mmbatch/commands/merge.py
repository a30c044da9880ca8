"""``mmbatch merge``: join the shard outputs of ``infer`` into one predictions file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mmbatch.commands import summary
from mmbatch.errors import EXIT_OK


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``merge`` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "merge",
        help=summary("merge"),
        description="Merge the outputs of `mmbatch infer --shard K/N` (for example preds.shard-*-of-4.parquet) "
        "into one predictions file sorted by index. Refuses inputs from different runs, duplicate indices and "
        "missing rows, naming them.",
    )
    parser.add_argument("--output", required=True, type=Path, help="merged predictions file (.parquet or .tsv)")
    parser.add_argument("--prepared", type=Path,
                        help="the prepared file the shards came from, to name missing rows (default: the path "
                        "recorded in the shards, when it still holds the same file)")
    parser.add_argument("inputs", nargs="*", type=Path, metavar="INPUT",
                        help="shard outputs (default: every OUTPUT-NAME.shard-K-of-N file beside --output, so a "
                        "deployment need not know N; merge still checks that all N shards are there)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Merge and print what was written."""
    from mmbatch.console import console
    from mmbatch.infer.outputs import shard_outputs_beside
    from mmbatch.merge import merge_predictions

    inputs = list(args.inputs) or shard_outputs_beside(args.output)
    summary = merge_predictions(inputs, args.output, prepared=args.prepared)
    console.print(f"merge: wrote {summary.output}: {summary.rows} rows from {summary.inputs} files "
                  f"(completeness checked against {summary.checked_against})", soft_wrap=True, markup=False,
                  highlight=False)
    if summary.failed:
        console.print(f"merge: {summary.failed} rows carry an error; rerun their shard to retry them, then merge "
                      "again", soft_wrap=True, markup=False, highlight=False)
    if summary.leftover_progress is not None:
        console.print(f"merge: the shards' progress folder {summary.leftover_progress} is no longer needed; "
                      "remove it to free the space", soft_wrap=True, markup=False, highlight=False)
    return EXIT_OK
