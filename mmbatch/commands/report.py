"""``mmbatch report METRICS... --output report.md|report.html``: a leaderboard of models side by side, with charts.

Markdown reports get one SVG chart file per benchmark beside them (``report_<benchmark>.svg``); HTML reports are one
self-contained page with the charts inline.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mmbatch.commands import summary
from mmbatch.errors import EXIT_OK


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``report`` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "report",
        help=summary("report"),
        description="Read metrics tables written by `mmbatch score` (.json, .tsv, .parquet; one or more models "
        "each) and write a leaderboard per benchmark: headline numbers, unmatched/failed counts, per-ability "
        "tables, and a chart (grouped bars, or a model x ability heatmap when there are many abilities), after a "
        "summary table (one row per model, one column per benchmark headline) and a table of contents. "
        ".md writes the charts as SVG files beside the report; .html embeds them.",
    )
    parser.add_argument("metrics", nargs="+", type=Path, metavar="METRICS_FILE", help="metrics tables to compare")
    parser.add_argument("--output", required=True, type=Path,
                        help="report file: .md or .html (summary, provenance and every board), or .csv/.tsv (the "
                        "summary table: one row per model, each benchmark's headline with its interval bounds)")
    parser.add_argument("--label", action="append", default=[], metavar="FILE=NAME",
                        help="display name of a metrics file's model (repeatable; default: the model recorded, a "
                        "local folder by its name)")
    parser.add_argument("--compare", action="append", default=[], type=Path, metavar="COMPARISON",
                        help="output of `mmbatch compare` (repeatable): adds each model's delta against the "
                        "baseline, with significance markers, to the boards it covers")
    return parser


def run(args: argparse.Namespace) -> int:
    """Write the report (and its SVG charts) atomically."""
    from mmbatch.console import console, error_console
    from mmbatch.report.write import write_report
    from mmbatch.view.write import parse_labels

    written = write_report(list(args.metrics), args.output, labels=dict(parse_labels(args.label)),
                           comparisons=list(args.compare))
    for warning in written.warnings:
        error_console.print(f"warning: {warning}", soft_wrap=True, markup=False, highlight=False)
    extra = f" and {len(written.charts)} chart(s) beside it" if written.charts else ""
    console.print(f"wrote {written.page}{extra}: {written.boards} benchmark board(s), {written.models} model(s)",
                  soft_wrap=True, markup=False, highlight=False)
    return EXIT_OK
