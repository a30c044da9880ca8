"""``mmbatch list``: the benchmarks, backends, rule versions and model families this install knows."""

from __future__ import annotations

import argparse
from typing import Any

from mmbatch.commands import summary
from mmbatch.errors import EXIT_OK

SECTIONS = ("benchmarks", "backends", "rules", "families")


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``list`` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "list",
        help=summary("list"),
        description="List the registered benchmarks (name, answer kind, version, splits and the official files "
        "prepare fetches), the backends, the rule versions extract can apply (choice-rule eras, yes/no rules, "
        "answer kinds) and the model families the test matrix runs, as tables or as JSON.",
    )
    parser.add_argument("sections", nargs="*", metavar="SECTION",
                        help=f"what to list: {', '.join(SECTIONS)} (default: all)")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    return parser


def run(args: argparse.Namespace) -> int:
    """Print the listing; exit 0."""
    import json

    from mmbatch.console import console
    from mmbatch.errors import BadInputError
    from mmbatch.listing import listing
    from mmbatch.listing_tables import print_listing

    unknown = [name for name in args.sections if name not in SECTIONS]
    if unknown:
        raise BadInputError(f"nothing to list as {unknown[0]!r}; choose from {', '.join(SECTIONS)}")
    sections = tuple(dict.fromkeys(args.sections)) or SECTIONS
    found = listing(sections)
    if args.json:
        print(json.dumps(found, indent=1, ensure_ascii=False))
    else:
        print_listing(found, console)
    return EXIT_OK
