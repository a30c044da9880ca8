"""How the table stages ask polars' allocator to hand freed memory back to the system.

polars allocates through its own jemalloc, which by default keeps the pages a program frees for ten seconds before
returning them, and returns them only while the program allocates. A stage that reads, decides and writes its file
a batch at a time frees each batch's memory as it goes; with that default its resident memory still grew as if it
held much of the file (a million TextVQA rows: ``score`` 566-575 MiB, ``extract`` 496-528 MiB). With freed pages
returned after 100 ms by jemalloc's background thread (the setting jemalloc's authors recommend for bounded resident
memory) the same runs peaked at 443-457 and 453 MiB, for 3-10 % more CPU (docs/benchmarks.md).

jemalloc reads its settings once, when polars' library loads, from ``_RJEM_MALLOC_CONF``: they are set for the
commands that work on tables before anything imports polars. A value the user set is kept; polars' own defaults are
not the user's: polars writes them into the variable when it is imported, so a process started by one that imported
polars (a benchmark script, an Airflow worker) inherits them. ``infer`` is left alone: it forks data-loading workers
and runs model servers, which have their own allocators and needs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

SETTING = "_RJEM_MALLOC_CONF"
"""The environment variable polars' jemalloc reads its options from."""
TABLE_STAGE_OPTIONS = "background_thread:true,dirty_decay_ms:100,muzzy_decay_ms:0"
"""Freed pages go back to the system after 100 ms, from jemalloc's background thread (not from the stage's own)."""
TABLE_COMMANDS = frozenset({"prepare", "extract", "score", "merge", "import", "export", "validate", "compare"})
"""The commands that read and write whole stage files."""
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
