"""How ``score`` asks polars' allocator to hand freed memory back to the system.

polars allocates through its own jemalloc, which keeps the pages a program frees for a while before returning them
(polars sets 0.5 s, then 1 s more), and returns them only while the program allocates. ``score`` builds its unit
types over every scored row, frees them, then writes the hits file: with those settings the freed pages were still
resident while it wrote, and a million TextVQA rows peaked at 508-523 MiB. With freed pages returned after 100 ms by
jemalloc's background thread (the setting jemalloc's authors recommend for bounded resident memory) the same run
peaked at 444-466 MiB for 1-3 % more CPU. ``extract`` is not tuned: it frees a batch at a time, its peak was already
lower (453 MiB) and the purging cost it 7-15 % more CPU (docs/benchmarks.md).

jemalloc reads its settings once, when polars' library loads, from ``_RJEM_MALLOC_CONF``: they are set before
anything imports polars. A value the user set is kept; polars' own defaults are not the user's: polars writes them
into the variable when it is imported, so a process started by one that imported polars (a benchmark script, an
Airflow worker) inherits them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

SETTING = "_RJEM_MALLOC_CONF"
"""The environment variable polars' jemalloc reads its options from."""
TABLE_STAGE_OPTIONS = "background_thread:true,dirty_decay_ms:100,muzzy_decay_ms:0"
"""Freed pages go back to the system after 100 ms, from jemalloc's background thread (not from the stage's own)."""
TABLE_COMMANDS = frozenset({"score"})
"""The commands tuned (those measured to gain memory for little CPU)."""
POLARS_DEFAULTS = "dirty_decay_ms:500,muzzy_decay_ms:1000"
"""What polars 2.1's ``__init__`` puts first in the variable (its defaults, followed by any value found there)."""


def tune_for(argv: Sequence[str]) -> None:
    """Set :data:`TABLE_STAGE_OPTIONS` for a command line of one of :data:`TABLE_COMMANDS` (its first word), unless
    polars is loaded already (too late: the Python API's callers have their own process) or the user set options."""
    command = argv[0] if argv else None
    if command not in TABLE_COMMANDS or "polars" in sys.modules:
        return
    found = os.environ.get(SETTING, "")
    if found in ("", POLARS_DEFAULTS):
        os.environ[SETTING] = TABLE_STAGE_OPTIONS
