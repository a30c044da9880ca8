"""``mmbatch prepare``: read a benchmark's files and write a prepared stage file with a prompt per row."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mmbatch.benchmarks.registry import benchmark_help
from mmbatch.commands import summary
from mmbatch.errors import EXIT_OK
from mmbatch.media import DEFAULT_MAX_PIXELS
from mmbatch.options import LazyHelpStore, positive_int

if TYPE_CHECKING:
    from mmbatch.prepare import PrepareOptions


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``prepare`` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "prepare",
        help=summary("prepare"),
        description="Read a benchmark's files (--benchmark lists the benchmarks), check every row and image, "
        "render each row's prompt and write one prepared .tsv or .parquet file.",
    )
    parser.add_argument("--benchmark", required=True, metavar="NAME", action=LazyHelpStore, lazy_help=benchmark_help)
    parser.add_argument("--input", type=Path, metavar="PATH",
                        help="the benchmark's file (.tsv, .parquet, .xlsx, .json) or folder (default: its official "
                        "file of --split, fetched into MMBATCH_DATA and checked against the published MD5; "
                        "docs/data.md)")
    parser.add_argument("--split", metavar="SPLIT",
                        help="without --input: which official file to fetch (e.g. mmbench: dev, test, dev-cn...; "
                        "default: the benchmark's first; `mmbatch list` shows them)")
    parser.add_argument("--output", required=True, type=Path, metavar="FILE",
                        help="the prepared file to write: .tsv or .parquet")
    parser.add_argument("--media-root", type=Path, metavar="DIR",
                        help="folder that image/video paths are relative to (default: the input's folder, or the "
                        "MME release folder itself)")
    parser.add_argument("--prompt-template", metavar="NAME|FILE",
                        help="vlmevalkit, llava, seed-likelihood or mme (default: the benchmark's own), or a template "
                        "file over the row's columns: Jinja for .j2/.jinja/.jinja2, a Python format string otherwise "
                        "(docs/prompts.md); its name and SHA-256 are recorded")
    parser.add_argument("--mode", choices=["generate", "likelihood"],
                        help="free generation or likelihood ranking of the options (default: the benchmark's own)")
    parser.add_argument("--circular", action=argparse.BooleanOptionalAction, default=None,
                        help="--circular generates CircularEval copies for a file that has none; --no-circular keeps "
                        "only each question's original row (default: the file as it is)")
    parser.add_argument("--limit", type=positive_int, metavar="N",
                        help="only the first N questions, every copy kept (for dry runs)")
    parser.add_argument("--max-pixels", type=positive_int, default=DEFAULT_MAX_PIXELS, metavar="N",
                        help=f"refuse images with more pixels than this (default {DEFAULT_MAX_PIXELS})")
    return parser


def options(args: argparse.Namespace) -> PrepareOptions:
    """The stage's options from the parsed arguments."""
    from mmbatch.prepare import PrepareOptions

    return PrepareOptions(benchmark=args.benchmark, input=args.input, output=args.output, media_root=args.media_root,
                          prompt_template=args.prompt_template, mode=args.mode, circular=args.circular,
                          limit=args.limit, max_pixels=args.max_pixels, split=args.split)


def execute(stage_options: PrepareOptions) -> int:
    """Prepare one benchmark and print the one-line summary."""
    from mmbatch.console import console
    from mmbatch.prepare import prepare

    console.print(prepare(stage_options).line(), soft_wrap=True, markup=False)
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    """Prepare one benchmark and print the one-line summary."""
    return execute(options(args))
