"""The ``mmbatch`` command line: parses options and calls a stage; nothing else.

Each command lives in ``mmbatch/commands/<name>.py`` and provides ``register(subparsers)`` (its options) and
``run(args) -> int`` (its exit status); ``mmbatch/commands/__init__.py`` names its module and its one-line summary.
A command line builds the parser of its own command only, and ``mmbatch --help`` none (the summaries suffice).
Command modules import only light packages at top level, so building the parser stays fast; heavy imports happen
inside ``run``.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import importlib.util
import os
import re
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any, NoReturn

from mmbatch import __version__
from mmbatch.allocator import tune_for
from mmbatch.commands import COMMANDS
from mmbatch.errors import EXIT_BAD_INPUT, MmbatchError
from mmbatch.options import apply_environment_defaults, unknown_variable_warnings
from mmbatch.secret_values import guard_streams

OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM,
                           errno.EIO})
"""File system failures that are the environment's, not a bug (a full disk or quota, a file-size limit, a read-only
or failing disk, permissions): reported in one line (exit 2), not as a traceback."""
KEEPS_PROGRESS = frozenset({"infer", "extract", "run"})
"""Commands that commit finished rows as they go (``run`` through its infer and extract), so a rerun resumes."""
_RUST_OS_ERROR = re.compile(r"\(os error (\d+)\)")
"""polars raises ``OSError`` without ``errno`` and puts the number in the message: ``File too large (os error 27)``."""

def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser, with every option's default also read from ``MMBATCH_<OPTION>``: every command's, or only the
    command ``only``'s (the one a command line names: importing and building the other twelve costs ~40 ms of a
    start that ``score`` wants under 0.3 s)."""
    parser, subparsers = _top_level()
    for name, command in COMMANDS.items():
        if only is not None and name != only:
            continue
        try:
            module = importlib.import_module(command.module)
        except ModuleNotFoundError as exc:
            if exc.name != command.module:
                raise
            continue
        sub = module.register(subparsers)
        sub.set_defaults(_run=module.run)
        apply_environment_defaults(sub)
    return parser


def commands_parser() -> argparse.ArgumentParser:
    """The parser of a line that names no command (``--help``, ``--version``, nothing, an unknown word): every command
    with its summary and none of their options, so no command module is imported (most of a start's cost). Its help
    and its errors are the full parser's."""
    parser, subparsers = _top_level()
    for name, command in COMMANDS.items():
        if importlib.util.find_spec(command.module) is not None:
            subparsers.add_parser(name, help=command.summary)
    return parser


def _top_level() -> tuple[argparse.ArgumentParser, Any]:
    parser = argparse.ArgumentParser(
        prog="mmbatch",
        description="Evaluate multimodal LLMs on MMBench, MME and SEED-Bench in four resumable stages.",
        epilog="Every option also reads MMBATCH_<OPTION> (e.g. MMBATCH_BATCH_SIZE). Exit status: 0 all rows done, "
        "2 bad input or usage, 3 finished with failed rows.",
    )
    parser.add_argument("--version", action="version", version=f"mmbatch {__version__}")
    return parser, parser.add_subparsers(dest="command", metavar="COMMAND", required=True)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line ``argv`` (default: the process's) run; returns the exit status.

    API keys are registered for scrubbing by the stages that read one to use it (not here: a stage that sends no key
    must not change a cell that looks like one).
    """
    with guard_streams():
        return _run(argv)


def console() -> NoReturn:
    """The ``mmbatch`` console script (and ``python -m mmbatch``): :func:`main`, then the process ends without the
    interpreter's teardown where that is safe (:mod:`mmbatch.quick_exit`)."""
    from mmbatch.quick_exit import leave

    leave(main(), sys.argv[1:])


def _run(argv: Sequence[str] | None) -> int:
    # Only the main thread may set a handler (the Python API may run commands in others); restored at the end, so
    # that calling main() in-process leaves the caller's handler as it was.
    previous = signal.signal(signal.SIGTERM, _terminated) if threading.current_thread() is threading.main_thread() \
        else None
    command = None
    tune_for(sys.argv[1:] if argv is None else argv)  # before any stage imports polars
    try:
        parser = _parser_for(list(sys.argv[1:] if argv is None else argv))
        for warning in unknown_variable_warnings(parser):
            print(warning, file=sys.stderr)
        args = parser.parse_args(argv)
        command = args.command
        return int(args._run(args))
    except MmbatchError as exc:
        _print_error(str(exc))
        return exc.exit_code
    except OSError as exc:
        if _errno_of(exc) == errno.ENOMEM:  # polars says "Cannot allocate memory (os error 12)" under a limit
            _print_error(f"not enough memory ({exc.strerror or exc}): give the command more memory (or a smaller "
                         "input, e.g. split by --shard), then rerun")
            return EXIT_BAD_INPUT
        if _errno_of(exc) not in OUTPUT_ERRNOS:
            raise
        where = f" {exc.filename}" if exc.filename else ""
        kept = " (finished rows are kept)" if command in KEEPS_PROGRESS else ""
        _print_error(f"the file system refused{where}: {exc.strerror or exc}; free space or fix permissions, then "
                     f"rerun{kept}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted (Ctrl-C); infer and extract keep their finished rows: rerun to resume", file=sys.stderr)
        return 130
    except Terminated:
        print("terminated (SIGTERM); infer and extract keep their finished rows: rerun to resume", file=sys.stderr)
        return 128 + signal.SIGTERM
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _parser_for(words: Sequence[str]) -> argparse.ArgumentParser:
    """The parser a command line needs: every command's when an ``MMBATCH_*`` variable is set (telling a typo from
    another command's option needs them all); only its command's when it names one; the commands and their summaries
    alone when it can only print the help, the version or an error listing the commands (nothing, a top-level
    ``-h``/``--help``/``--version``, or an unknown word first); every command's otherwise (an unknown option first)."""
    if any(name.startswith("MMBATCH_") for name in os.environ):
        return build_parser()
    if words and words[0] in COMMANDS:
        return build_parser(words[0])
    if not words or words[0] in ("-h", "--help", "--version") or not words[0].startswith("-"):
        return commands_parser()
    return build_parser()


class Terminated(BaseException):
    """Raised in the main thread by SIGTERM (what Kubernetes, Slurm and Airflow send to stop a task), so that the
    same cleanup runs as for Ctrl-C and the log says why the command stopped instead of ending silently."""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


def _errno_of(exc: OSError) -> int | None:
    if exc.errno is not None:
        return exc.errno
    found = _RUST_OS_ERROR.search(str(exc))
    return int(found.group(1)) if found else None


def _print_error(message: str) -> None:
    from rich.text import Text

    from mmbatch.console import error_console

    # The message is plain text: an index like "[/]" or a path like "[bold]x.tsv" must print as it is.
    error_console.print(Text("error: ", style="bold red") + Text(message), highlight=False, soft_wrap=True)


if __name__ == "__main__":
    console()
