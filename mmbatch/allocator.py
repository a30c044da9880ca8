"""How the table stages (``prepare``, ``extract``, ``score``) ask polars' allocator to hand freed memory back, and how
``prepare``'s image checks ask glibc's to keep it (:func:`keep_freed_heap`).

polars allocates through its own jemalloc, which keeps the pages a program frees for a while before returning them
(polars sets 0.5 s, then 1 s more), and returns them only while the program allocates. Each of these stages frees a
large part of what it holds before the part that peaks: ``prepare`` the parse of its TSV before the write, ``extract``
each batch before the next, ``score`` its unit types before the hits file. With freed pages returned after 100 ms by
jemalloc's background thread (the setting jemalloc's authors recommend for bounded resident memory), measured against
polars' settings in the same rounds (docs/benchmarks.md): ``prepare`` of a 425 MB MMBench TSV peaked at 1.78-1.92x its
size against 2.04-2.10x (the goal is 2x); a million TextVQA rows' ``extract`` at 396-407 MiB against 452-477 (the goal
is 500 MB, 476.8 MiB) and their ``score`` at 444-466 against 508-523. The price is time where a stage frees and
allocates again often: a million MMBench rows' ``extract`` took ~10 % more CPU (1.45 -> 1.60 s) for 265-286 MiB
against 300-327, TextVQA's 1-3 %; ``prepare``'s and ``score``'s were within this box's noise (``prepare``: +14 %
in one run of alternating pairs, -7 % in another). ``run`` and ``infer`` are left alone: what they hold is mostly
a model's.

jemalloc reads its settings once, when polars' library loads, from ``_RJEM_MALLOC_CONF``: they are set before
anything imports polars. A value the user set is kept; polars' own defaults are not the user's: polars writes them
into the variable when it is imported, so a process started by one that imported polars (a benchmark script, an
Airflow worker) inherits them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from functools import cache

SETTING = "_RJEM_MALLOC_CONF"
"""The environment variable polars' jemalloc reads its options from."""
TABLE_STAGE_OPTIONS = "background_thread:true,dirty_decay_ms:100,muzzy_decay_ms:0"
"""Freed pages go back to the system after 100 ms, from jemalloc's background thread (not from the stage's own)."""
TABLE_COMMANDS = frozenset({"prepare", "extract", "score"})
"""The commands tuned: those whose peak it was measured to lower (the module's docstring says at what CPU)."""
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


HEAP_KEPT_BYTES = 64 << 20
"""Freed memory glibc's malloc keeps at the top of its heap (its default: 128 KB)."""
HEAP_OBJECT_BYTES = 32 << 20
"""Objects under this size come from the heap, not from a mapping of their own (glibc's largest such setting)."""
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
"""``mallopt``'s parameter numbers (glibc's malloc.h)."""


@cache
def keep_freed_heap() -> bool:
    """Have glibc's malloc keep up to :data:`HEAP_KEPT_BYTES` of freed memory for the next allocations instead of
    handing it back at once; True where it took the settings (glibc), False elsewhere (musl has no ``mallopt``).

    Python's objects over 512 bytes come from glibc's malloc, not from polars' jemalloc. ``prepare``'s image checks
    take the payloads as Python strings, 64 at a time, and with glibc's defaults each batch's ~6 MB went back to the
    system when it was freed (more than 128 KB free at the top of the heap) and was faulted in again by the next:
    110,000 page faults for a 425 MB column, 0.27 s of system time against 0.1 s of work (``bench/bench_prepare.py``,
    docs/benchmarks.md). Objects under :data:`HEAP_OBJECT_BYTES` come from the heap, not from a mapping of their own
    that is unmapped when freed. The settings are the process's, so this runs once, where a stage allocates
    that way; what it keeps is at most 64 MB, against the hundreds of MB such a stage holds.
    """
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(M_TRIM_THRESHOLD, HEAP_KEPT_BYTES) and mallopt(M_MMAP_THRESHOLD, HEAP_OBJECT_BYTES))
