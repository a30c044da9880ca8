"""The ``report`` stage as a function that writes its own outputs: the leaderboard page and its charts.

Markdown reports get one SVG chart file per benchmark beside them (``<stem>_<benchmark>.svg``); HTML reports are one
self-contained page with the charts inline. Every file is written atomically.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mmbatch.atomic_files import check_name_fits
from mmbatch.compare.stage import read_comparison
from mmbatch.errors import BadInputError
from mmbatch.report.baseline import board_deltas, check_compared_runs
from mmbatch.report.charts import render_chart, render_detail_chart
from mmbatch.report.html import render_html
from mmbatch.report.inputs import read_metrics_files
from mmbatch.report.leaderboard import build_boards
from mmbatch.report.markdown import render_markdown
from mmbatch.tableio import atomic_path

REPORT_FORMATS = (".md", ".html")


@dataclass(frozen=True)
class ReportFiles:
    """What a ``report`` run wrote."""

    page: Path
    """The report (``.md`` or ``.html``)."""
    charts: tuple[Path, ...]
    """SVG charts beside a Markdown report (none for HTML, which embeds them)."""
    boards: int
    """Benchmark boards in the report."""
    models: int
    """Distinct models compared."""
    warnings: tuple[str, ...] = ()
    """What some metrics files do not record (shown as unknown in the report)."""


def write_report(metrics_files: list[Path], output: Path, *, labels: Mapping[str, str] | None = None,
                 comparisons: Sequence[Path] = ()) -> ReportFiles:
    """Read the metrics tables and write the leaderboard at ``output`` (and its charts).

    ``labels`` (metrics file -> display name) names the models; ``comparisons`` are ``mmbatch compare`` outputs
    whose baseline deltas and significance markers join the boards they cover.

    Raises:
        BadInputError: an output that is neither ``.md`` nor ``.html``, or an unreadable metrics table.
    """
    suffix = output.suffix.lower()
    if suffix not in REPORT_FORMATS:
        raise BadInputError(f"cannot write a '{suffix or 'no extension'}' report; use .md or .html", path=output)
    check_name_fits(output)
    metrics, origins = read_metrics_files(metrics_files, labels)
    compared = [read_comparison(path) for path in comparisons]
    for path, result in zip(comparisons, compared, strict=True):
        check_compared_runs(path, result, origins)
    boards = build_boards(metrics)
    charts = {board.slug: render_chart(board) for board in boards}
    charts |= {f"{board.slug}_detail": chart for board in boards if (chart := render_detail_chart(board))}
    shown = {raw: name for origin in origins for raw, name in origin.shown.items()}
    deltas = {board.slug: found for board in boards if (found := board_deltas(board, compared, shown)) is not None}
    sources = [str(p) for p in metrics_files]
    written = []
    if suffix == ".html":
        text = render_html(boards, charts, sources, origins, deltas)
    else:
        files = {slug: f"{output.stem}_{slug}.svg" for slug in charts}
        check_name_fits(output, *(output.with_name(name) for name in files.values()))
        for slug, svg in charts.items():
            target = output.with_name(files[slug])
            with atomic_path(target) as tmp:
                tmp.write_text(svg + "\n", encoding="utf-8")
            written.append(target)
        text = render_markdown(boards, files, sources, origins, deltas)
    with atomic_path(output) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return ReportFiles(output, tuple(written), len(boards), metrics["model"].n_unique(),
                       tuple(warning for origin in origins for warning in origin.warnings))
