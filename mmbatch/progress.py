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

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from mmbatch.console import error_console

LOG_INTERVAL_S = 30.0
"""Seconds between plain progress lines when stderr is not a terminal."""


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
            self._rich.update(self._task, advance=n, rates=self._rates())
        elif time.monotonic() - self._last_log >= self.log_interval_s:
            self._last_log = time.monotonic()
            error_console.print(self.line(), soft_wrap=True)

    @property
    def elapsed_s(self) -> float:
        """Seconds since the bar started."""
        return time.monotonic() - self._start

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
    columns = (
        TextColumn("{task.description}", style="bold", markup=False),  # a model name may hold "[/]"
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[rates]}", markup=False),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=error_console, transient=False) as rich_progress:
        bar._rich = rich_progress
        bar._task = rich_progress.add_task(description, total=total, rates="")
        yield bar
