"""Which rows a shard processes: ``--shard K/N`` or the scheduler's environment.

A shard is every N-th row of the file ordered by ``index``, starting at K (datatrove's ``rows[rank::world_size]``),
so N shards partition the rows whatever their order in the file. Progress is keyed by ``index``, so partial work
stays reusable when the shard count changes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mmbatch.errors import BadInputError

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True)
class Shard:
    """Shard ``k`` (0-based) of ``n``."""

    k: int
    """This shard's number, 0 <= k < n."""
    n: int
    """How many shards share the rows."""

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"

    @property
    def label(self) -> str:
        """``shard K/N`` for messages, or "" for an unsharded run (where "shard 0/1" only puzzles users)."""
        return "" if self.is_whole else f"shard {self}"

    @property
    def is_whole(self) -> bool:
        """True for the single shard that holds every row."""
        return self.n == 1

    def select(self, frame: pl.DataFrame) -> pl.DataFrame:
        """This shard's rows of ``frame``, ordered by ``index``."""
        ordered = frame.sort("index")
        if self.is_whole:
            return ordered
        return ordered.gather_every(self.n, offset=self.k)


WHOLE = Shard(0, 1)


def parse_shard(text: str) -> Shard:
    """Parse ``K/N`` (0-based K)."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match:
        raise BadInputError(f"--shard {text!r} is not K/N (for example 0/4)")
    k, n = int(match.group(1)), int(match.group(2))
    if n < 1 or not 0 <= k < n:
        raise BadInputError(f"--shard {text}: K must satisfy 0 <= K < N")
    return Shard(k, n)


def shard_from_environment(environ: dict[str, str] | None = None) -> Shard:
    """The shard the scheduler assigned, or the whole file.

    Looks at ``SLURM_ARRAY_TASK_ID``/``SLURM_ARRAY_TASK_COUNT`` (Slurm arrays, counted from
    ``SLURM_ARRAY_TASK_MIN`` so ``--array=1-4`` works too), then ``JOB_COMPLETION_INDEX``
    (Kubernetes Indexed Jobs); ``MMBATCH_NUM_SHARDS``, when set, gives the count for either.
    """
    env = os.environ if environ is None else environ
    count = env.get("MMBATCH_NUM_SHARDS")
    for index_var, count_var in (("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT"), ("JOB_COMPLETION_INDEX", None)):
        if index_var not in env:
            continue
        n_text = count or (env.get(count_var) if count_var else None)
        if n_text is None:
            raise BadInputError(f"{index_var} is set but the shard count is not: set MMBATCH_NUM_SHARDS")
        if not env[index_var].strip().isdigit() or not n_text.strip().isdigit():
            raise BadInputError(f"{index_var}={env[index_var]!r} with {n_text!r} shards is not a valid shard")
        k = int(env[index_var]) - int(env.get("SLURM_ARRAY_TASK_MIN", "0") if count_var else 0)
        return parse_shard(f"{k}/{n_text}")
    return WHOLE


def resolve_shard(option: str | None, environ: dict[str, str] | None = None) -> Shard:
    """``--shard`` when given, else the environment's shard, else the whole file."""
    return parse_shard(option) if option else shard_from_environment(environ)
