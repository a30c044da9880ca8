"""What every benchmark reader provides to ``prepare``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import polars as pl

from mmbatch.media import DEFAULT_MAX_PIXELS


@dataclass
class DeferredChecks:
    """Checks a reader leaves for ``prepare`` to run while it writes the file: checks that change no row.

    The image payloads of a 400 MB MMBench file take as long to check as the file takes to write, and polars writes
    without holding the GIL, so the two overlap. The file is put in place only once every check has passed.
    """

    checks: list[Callable[[], None]] = field(default_factory=list)
    """The checks, in the order the reader met them; each raises ``BadInputError`` for the first problem."""

    def add(self, check: Callable[[], None]) -> None:
        """Leave ``check`` for later."""
        self.checks.append(check)

    def run(self) -> None:
        """Run every check left so far, each once, in order."""
        while self.checks:
            self.checks.pop(0)()


@dataclass(frozen=True)
class ReadOptions:
    """Options of ``mmbatch prepare`` that a reader needs."""

    media_root: Path | None = None
    """Folder that ``image_path``/``video_path`` values are relative to (SEED-Bench, MME folders)."""
    circular: bool | None = None
    """Generate circular copies (True), refuse to (False) or follow the benchmark's default (None)."""
    limit: int | None = None
    """Read only the first N questions (all copies of each kept), for dry runs."""
    max_pixels: int = DEFAULT_MAX_PIXELS
    """Images with more pixels are refused (decompression bombs)."""
    deferred_checks: DeferredChecks | None = None
    """Where a reader may leave checks that change no row (:class:`DeferredChecks`); None: run them at once."""


class Reader(Protocol):
    """Reads one benchmark's official format into prepared rows (without the prompt columns).

    The rows carry at least ``index``, ``g_index``, ``benchmark``, ``question`` and the columns of docs/contract.md §3
    that the source has; ``prepare`` then renders ``prompt``, ``prompt_hash``, ``prompt_template`` and ``mode``.
    Bad input raises :class:`~mmbatch.errors.BadInputError` naming the file, row index and column.
    """

    name: str
    """The ``benchmark`` column value."""

    def read(self, path: Path, options: ReadOptions) -> pl.DataFrame:
        """Read the benchmark at ``path`` (a file or a folder)."""
        ...
