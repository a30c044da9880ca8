"""``mmbatch view FILE... --output DIR|FILE.html``: a static per-row viewer of one or several models' results."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mmbatch.commands import summary
from mmbatch.errors import EXIT_OK


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``view`` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "view",
        help=summary("view"),
        description="Write one offline HTML page (no server, no CDN: open it from disk or any static host) that "
        "lists every row of extracted or hits files with filters (benchmark, split, category, verdict, extract "
        "method, text search) and shows a row's pictures, hint, question, options with the right one marked, the "
        "rendered prompt, each model's raw answer, how the choice was extracted (rule; judge prompt and reply; "
        "option log-probs) and the verdict, with its CircularEval group or MME image pair side by side. Several "
        "files of the same benchmark (one per model) show the same row across models.",
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="extracted or hits files, one per model")
    parser.add_argument("--output", required=True, type=Path,
                        help="FILE.html, or a folder (the page is written as FOLDER/index.html)")
    parser.add_argument("--images", type=Path, help="the prepared file or benchmark TSV with the base64 'image' "
                        "column (prediction files do not carry pictures); matched on index")
    parser.add_argument("--media-root", type=Path, help="folder of image_path/video_path files (default: as infer)")
    parser.add_argument("--label", action="append", default=[], metavar="FILE=NAME",
                        help="display name of a file's model (repeatable)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Build the page and write it atomically."""
    from mmbatch.console import error_console
    from mmbatch.view.write import ViewOptions, parse_labels, write_viewer

    options = ViewOptions(images=args.images, media_root=args.media_root, labels=parse_labels(args.label))
    written = write_viewer(list(args.files), args.output, options)
    error_console.print(f"wrote {written.path} ({written.rows} rows, {written.models} model(s), "
                        f"{written.pictures} pictures, {written.size / 1e6:.1f} MB)",
                        markup=False, highlight=False, soft_wrap=True)
    for note in written.notes[:10]:
        error_console.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)
    return EXIT_OK
