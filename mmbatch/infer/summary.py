"""The end-of-run summary of ``infer``: what was done, what failed, how fast."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mmbatch.errors import EXIT_OK, EXIT_ROWS_FAILED

MAX_FAILED_SHOWN = 5


@dataclass(frozen=True)
class InferSummary:
    """What one ``infer`` run did."""

    output: Path
    """The file written."""
    shard: str
    """``K/N`` of the run."""
    rows: int
    """Rows in the output (the shard's rows)."""
    reused: int
    """Rows already finished by an earlier run and not run again."""
    ran: int
    """Rows given to the model (or failed while loading their media) in this run."""
    failed: int
    """Rows of the output with an ``error``."""
    output_tokens: int
    """Tokens generated in this run."""
    wall_s: float
    """Seconds this run took, loading included."""
    failed_examples: tuple[str, ...] = ()
    """``index: error`` for the first few failed rows."""
    shard_label: str = ""
    """``shard K/N`` in messages; empty for an unsharded run."""

    @property
    def exit_status(self) -> int:
        """0 when every row is fine, 3 when some failed (docs/contract.md §2)."""
        return EXIT_ROWS_FAILED if self.failed else EXIT_OK

    def lines(self) -> list[str]:
        """The summary as plain lines for the terminal and logs."""
        rate = self.ran / self.wall_s if self.wall_s > 0 else 0.0
        tokens_rate = self.output_tokens / self.wall_s if self.wall_s > 0 else 0.0
        where = f" ({self.shard_label})" if self.shard_label else ""
        lines = [
            f"infer: wrote {self.output}{where}: {self.rows} rows, {self.ran} run now, "
            f"{self.reused} reused from earlier progress, {self.failed} failed",
            f"infer: {self.output_tokens} output tokens, {self.wall_s:.1f} s wall, {rate:.2f} rows/s, "
            f"{tokens_rate:.1f} tokens/s",
        ]
        if self.failed:
            lines += [f"infer: failed row index={example}" for example in self.failed_examples]
            if self.failed > len(self.failed_examples):
                lines.append(f"infer: ... and {self.failed - len(self.failed_examples)} more failed rows; "
                             "rerun the same command to retry them")
        return lines
