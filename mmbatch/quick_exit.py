"""How the ``mmbatch`` console script ends its process: without the interpreter's teardown, once nothing is left to do.

When a command returns, its files are written and closed and its summary printed. What the interpreter does next,
clearing the ~530 modules that a stage imports (polars' ~390 of them) and collecting their objects, changes nothing
anyone sees and costs 0.1-0.2 s on the 2-core box: a fifth of a 12-row ``score``, paid again by every stage of a
pipeline (docs/benchmarks.md, "start-up"). mypy leaves its process the same way for the same reason.

What the teardown does that matters is done first. The functions registered with :mod:`atexit` run: logging's
flush, the tracking clients' run endings, temporary folders' removal, the MathVision worker's stop. Then the standard
streams are flushed. The process takes the normal way out whenever it might still own something that only finalizers
clean up: a live thread that is not a daemon; a flush that fails (the interpreter reports it); the commands that host
models, engines and worker processes (:data:`TORN_DOWN`); a profiler or a tracer (``python -m cProfile -m mmbatch``,
coverage), which writes its findings after the program returns. ``mmbatch.cli.main`` called in-process (the tests,
the Python API) is not affected.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Sequence
from typing import NoReturn

TORN_DOWN = frozenset({"infer", "run"})
"""Commands whose process always ends through the interpreter's teardown: they load backends (torch, vLLM, Ray,
servers' clients) whose child processes and devices may be released only by finalizers."""


def may_skip_teardown(argv: Sequence[str]) -> bool:
    """Whether the process of the command line ``argv`` (without the program name) may end without the teardown."""
    command = argv[0] if argv else None
    if command is None or command in TORN_DOWN or sys.getprofile() is not None or sys.gettrace() is not None:
        return False
    main = threading.main_thread()
    return not any(thread is not main and not thread.daemon and thread.is_alive() for thread in threading.enumerate())


def leave(status: int, argv: Sequence[str]) -> NoReturn:
    """End the process with ``status``: at once after the exit functions and a flush where that is safe
    (:func:`may_skip_teardown`), else through ``sys.exit``."""
    if not may_skip_teardown(argv):
        sys.exit(status)
    atexit._run_exitfuncs()  # the interpreter's own first exit step (typeshed declares it)
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):  # a closed pipe (``| head``): the interpreter reports it as it always does
        sys.exit(status)
    os._exit(status)
