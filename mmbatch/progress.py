"""Progress reporting: a rich bar on a terminal, periodic plain lines in logs.

Usage::

    with progress("infer", total=len(rows), unit="rows") as bar:
        bar.advance(8, tokens=412)
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mmbatch.console import error_console

if TYPE_CHECKING:  # rich's progress module is imported only to draw a bar on a terminal (~15 ms of every start)
    from rich.progress import Progress, ProgressColumn, TaskID


LOG_INTERVAL_S = 30.0
"""Seconds between plain progress lines when stderr is not a terminal."""
FULL_LAYOUT_ROOM = 100
"""Columns the full layout needs beside the description (bar, counts, percentage, rates, elapsed time, time left).
A narrower terminal (80 columns is the common default) gets the compact layout, which leaves out the percentage,
the elapsed time and the extra rates, so that the counts, the rate and the time left are printed whole instead of
being cut to ``2…`` and ``ETA 0:…``."""


@dataclass
class ProgressBar:
    """Counts finished units and extra counters (tokens, calls...) and shows their rates."""

    description: str
    total: int
    unit: str
    log_interval_s: float = LOG_INTERVAL_S
    done: int = 0
    counters: dict[str, float] = field(default_factory=dict)
    _rich: Progress | None = None
    _task: TaskID | None = None
    _start: float = field(default_factory=time.monotonic)
    _last_log: float = field(default_factory=time.monotonic)

    def advance(self, n: int = 1, **counters: float) -> None:
        """Mark ``n`` more units done and add to the named counters."""
        self.done += n
        for name, value in counters.items():
            self.counters[name] = self.counters.get(name, 0) + value
        if self._rich is not None and self._task is not None:
            self._rich.update(self._task, advance=n, rates=self._rates(), rate=self._rate())
        elif time.monotonic() - self._last_log >= self.log_interval_s:
            self._last_log = time.monotonic()
            error_console.print(self.line(), soft_wrap=True)

    @property
    def elapsed_s(self) -> float:
        """Seconds since the bar started."""
        return time.monotonic() - self._start

    def _rate(self) -> str:
        return f"{self.done / max(self.elapsed_s, 1e-9):.1f} {self.unit}/s"

    def _rates(self) -> str:
        elapsed = max(self.elapsed_s, 1e-9)
        parts = [f"{self.done / elapsed:.1f} {self.unit}/s"]
        parts += [f"{value / elapsed:.0f} {name}/s" for name, value in self.counters.items()]
        return ", ".join(parts)

    def line(self) -> str:
        """A plain progress line for logs."""
        pct = 100 * self.done / self.total if self.total else 100.0
        rate = self.done / max(self.elapsed_s, 1e-9)
        eta = (self.total - self.done) / rate if rate > 0 else float("inf")
        eta_text = "?" if eta == float("inf") else f"{eta:.0f}s"
        return f"{self.description}: {self.done}/{self.total} {self.unit} ({pct:.1f}%), {self._rates()}, ETA {eta_text}"


@contextmanager
def progress(description: str, total: int, unit: str = "rows", *, log_interval_s: float = LOG_INTERVAL_S
             ) -> Iterator[ProgressBar]:
    """A progress bar for ``total`` units: rich on a terminal, plain lines every ``log_interval_s`` otherwise."""
    bar = ProgressBar(description, total, unit, log_interval_s)
    if not error_console.is_terminal:
        yield bar
        return
    from rich.progress import Progress

    shown, columns = bar_layout(description, error_console.width)
    with Progress(*columns, console=error_console, transient=False) as rich_progress:
        bar._rich = rich_progress
        bar._task = rich_progress.add_task(shown, total=total, rates="", rate="")
        yield bar


def bar_layout(description: str, width: int) -> tuple[str, tuple[ProgressColumn, ...]]:
    """The description as shown and the bar's columns, for a terminal ``width`` characters wide.

    The full layout when ``description`` and :data:`FULL_LAYOUT_ROOM` fit; otherwise the compact one, where a model
    path keeps only its last part (``infer /models/llava-1.5-7b-hf`` -> ``infer llava-1.5-7b-hf``) and the text at
    most a third of the width, so the numbers after it keep their room.
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    name = TextColumn("{task.description}", style="bold", markup=False)  # a model name may hold "[/]"
    if len(description) + FULL_LAYOUT_ROOM <= width:
        return description, (name, BarColumn(bar_width=None), MofNCompleteColumn(), TaskProgressColumn(),
                             TextColumn("{task.fields[rates]}", markup=False), TimeElapsedColumn(),
                             TextColumn("ETA"), TimeRemainingColumn())
    words = [word.rstrip("/").rsplit("/", 1)[-1] or word for word in description.split(" ")]
    text = " ".join(words)
    limit = max(8, width // 3)
    shown = text if len(text) <= limit else text[:limit - 1] + "…"
    return shown, (name, BarColumn(bar_width=None), MofNCompleteColumn(),
                   TextColumn("{task.fields[rate]}", markup=False), TextColumn("ETA"), TimeRemainingColumn())
