"""``mmbatch report METRICS... --output report.md|report.html``: a leaderboard of models side by side, with charts.

Markdown reports get one SVG chart file per benchmark beside them (``report_<benchmark>.svg``); HTML reports are one
self-contained page with the charts inline.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mmbatch.errors import EXIT_OK

REPORT_FORMATS = (".md", ".html")


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``report`` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "report",
        help="compare models: leaderboard tables and a chart per benchmark, as Markdown or HTML",
        description="Read metrics tables written by `mmbatch score` (.json, .tsv, .parquet; one or more models "
        "each) and write a leaderboard per benchmark: headline numbers, unmatched/failed counts, per-ability "
        "tables, and a chart (grouped bars, or a model x ability heatmap when there are many abilities). "
        ".md writes the charts as SVG files beside the report; .html embeds them.",
    )
    parser.add_argument("metrics", nargs="+", type=Path, metavar="METRICS_FILE", help="metrics tables to compare")
    parser.add_argument("--output", required=True, type=Path, help="report file: .md or .html")
    return parser


def run(args: argparse.Namespace) -> int:
    """Write the report (and its SVG charts) atomically."""
    from mmbatch.console import console
    from mmbatch.errors import BadInputError
    from mmbatch.report.charts import render_chart
    from mmbatch.report.html import render_html
    from mmbatch.report.inputs import read_metrics_files
    from mmbatch.report.leaderboard import build_boards
    from mmbatch.report.markdown import render_markdown
    from mmbatch.tableio import atomic_path

    output: Path = args.output
    suffix = output.suffix.lower()
    if suffix not in REPORT_FORMATS:
        raise BadInputError(f"cannot write a '{suffix or 'no extension'}' report; use .md or .html", path=output)
    metrics = read_metrics_files(list(args.metrics))
    boards = build_boards(metrics)
    charts = {board.slug: render_chart(board) for board in boards}
    sources = [str(p) for p in args.metrics]
    written = []
    if suffix == ".html":
        text = render_html(boards, charts, sources)
    else:
        files = {slug: f"{output.stem}_{slug}.svg" for slug in charts}
        for slug, svg in charts.items():
            target = output.with_name(files[slug])
            with atomic_path(target) as tmp:
                tmp.write_text(svg + "\n", encoding="utf-8")
            written.append(target)
        text = render_markdown(boards, files, sources)
    with atomic_path(output) as tmp:
        tmp.write_text(text, encoding="utf-8")
    models = metrics["model"].n_unique()
    extra = f" and {len(written)} chart(s) beside it" if written else ""
    console.print(f"wrote {output}{extra}: {len(boards)} benchmark board(s), {models} model(s)",
                  soft_wrap=True, markup=False, highlight=False)
    return EXIT_OK
