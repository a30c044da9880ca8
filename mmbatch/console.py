"""The consoles every command prints through: results to stdout, progress and messages to stderr."""

from __future__ import annotations

from rich.console import Console

console = Console(highlight=False)
"""Standard output: summaries and tables a user may pipe."""

error_console = Console(stderr=True, highlight=False)
"""Standard error: progress, warnings and errors."""
