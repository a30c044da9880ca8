"""The consoles every command prints through: results to stdout, progress and messages to stderr.

Markup and emoji codes are off in both: what is printed holds paths, model names, subtask and image names from the
user's files, and rich would read ``[/]`` in them as a closing tag (a ``MarkupError`` traceback), ``[bold]x.tsv`` as
``x.tsv`` and ``run:x:2.tsv`` as ``run❌2.tsv``. Styling is given as ``Text`` styles instead, never written into the
string.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from rich.console import Console

WIDTH_OFF_TERMINAL = 10_000
"""Line width when printing to a pipe or a file (Airflow, Kubernetes and Slurm logs): tables keep their natural
width instead of rich's default 80 columns, which cut names and wrapped intervals."""


def line_width(stream: TextIO) -> int | None:
    """The width to print ``stream`` at: None (rich's own: the terminal's width, or ``COLUMNS``) on a terminal or
    when ``COLUMNS`` is set; otherwise :data:`WIDTH_OFF_TERMINAL` (no tables or messages here fill the width)."""
    if os.environ.get("COLUMNS", "").strip().isdigit():
        return None
    isatty = getattr(stream, "isatty", None)
    return None if isatty is not None and isatty() else WIDTH_OFF_TERMINAL


console = Console(highlight=False, markup=False, emoji=False, width=line_width(sys.stdout))
"""Standard output: summaries and tables a user may pipe."""

error_console = Console(stderr=True, highlight=False, markup=False, emoji=False, width=line_width(sys.stderr))
"""Standard error: progress, warnings and errors."""
