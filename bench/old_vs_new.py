"""Shared by the extract and score benchmarks: the real MMBench-dev answers scaled up, the code before the columnar
rules as a baseline, and one stage run as a measured subprocess.

The scaled file repeats LLaVA-1.5-13B's MMBench-dev predictions (4,377 rows, 1,176 circular groups, CircularEval
67.6871 %) as many times as asked, each copy with its own ``index`` and ``g_index`` (shifted by 10,000,000), so every
circular group stays a group and CircularEval stays 67.6871 %: 229 copies are 1,002,333 rows.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import polars as pl  # noqa: E402

from mmbatch.extract.input_adapter import adapt_predictions  # noqa: E402
from mmbatch.tableio import read_table, write_table  # noqa: E402

MMBENCH_DEV = REPO.parent / "shared" / "data" / "llava15_13b" / "mmbench" / \
    "mmbench_dev_20230712_llava-v1.5-13b_upload.xlsx"
"""LLaVA-1.5-13B's MMBench-dev upload file: CircularEval 796 / 1,176 = 67.6871 % with the rules alone."""
COPY_SHIFT = 10_000_000
"""``index`` and ``g_index`` of copy k are shifted by k times this (the file's own indices stay below 4,000,000)."""
BASELINE = "97e1ec4"
"""The commit before answer kinds and the columnar rules: what "old" runs."""
CIRCULAR_ACC = 100 * 796 / 1176
NO_KEYS = {"OPENAI_API_KEY": "", "MMBATCH_JUDGE_API_KEY": "", "OPENAI_BASE_URL": ""}


@dataclass(frozen=True)
class Run:
    """One stage run in a fresh process."""

    wall_s: float
    """Wall seconds (the shared machine's load changes it: compare runs interleaved)."""
    cpu_s: float
    """User + system CPU seconds of the process."""
    peak_mib: float
    """Peak resident memory (``ru_maxrss``) in MiB."""


def scaled_mmbench(copies: int, path: Path) -> Path:
    """Write ``copies`` copies of the MMBench-dev predictions as one predictions file at ``path``."""
    table = read_table(MMBENCH_DEV)
    frame, _ = adapt_predictions(table.frame, path=MMBENCH_DEV, benchmark="mmbench", model_name="llava-v1.5-13b")
    shifted = [frame.with_columns(pl.col("index") + k * COPY_SHIFT, pl.col("g_index") + k * COPY_SHIFT)
               for k in range(copies)]
    return write_table(pl.concat(shifted), path, {"stage": "predictions"})


def baseline_tree(folder: Path, revision: str = BASELINE) -> Path:
    """The ``mmbatch`` package as it was at ``revision``, unpacked under ``folder`` (for ``PYTHONPATH``).

    Raises:
        SystemExit: not a git checkout, or no such revision.
    """
    done = subprocess.run(["git", "-C", str(REPO), "archive", revision, "mmbatch"], capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"cannot read the baseline {revision} from git: {done.stderr.decode().strip()}")
    with tarfile.open(fileobj=BytesIO(done.stdout)) as archive:
        archive.extractall(folder, filter="data")
    return folder


_MEASURED = (
    "import sys\n"
    "from mmbatch import cli\n"
    "status = cli.main(sys.argv[1:])\n"
    "peak = next(line for line in open('/proc/self/status') if line.startswith('VmHWM:'))\n"
    "sys.stderr.write('\\n' + peak)\n"
    "if hasattr(cli, 'console'):\n"
    "    from mmbatch.quick_exit import leave\n"
    "    leave(status, sys.argv[1:])\n"
    "sys.exit(status)\n"
)
"""Runs the CLI, then reports the process's own peak RSS: ``VmHWM`` starts afresh at ``exec``, whereas
``ru_maxrss`` of a child also counts the memory of the (large) benchmark process it was forked from. The process
ends as the checkout's console script ends it (:mod:`mmbatch.quick_exit`; one from before it exits normally: asked of
its ``cli`` module, since an editable install would find ``quick_exit`` in its own checkout for any other)."""


def run_stage(code: Path, *args: str) -> Run:
    """``mmbatch ARGS`` with ``code`` first on ``PYTHONPATH``: wall and CPU seconds (``os.wait4``), peak RSS.

    Raises:
        SystemExit: the command failed (its message is shown).
    """
    env = {**os.environ, **NO_KEYS, "PYTHONPATH": str(code)}
    started = time.perf_counter()
    # run from the code's own folder: Python puts the working folder first on the path
    process = subprocess.Popen([sys.executable, "-c", _MEASURED, *args], cwd=code, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    message = process.stderr.read().decode() if process.stderr else ""
    if status != 0:
        raise SystemExit(f"mmbatch {' '.join(args)} failed: {message}")
    peak_kib = int(message.rsplit("VmHWM:", 1)[1].split()[0])
    return Run(wall, usage.ru_utime + usage.ru_stime, peak_kib / 1024)


def same_rows(old: Path, new: Path, added: tuple[str, ...]) -> None:
    """Assert that ``new`` holds exactly ``old``'s rows and columns, plus the ``added`` columns.

    Raises:
        AssertionError: naming the first column that differs.
    """
    before, after = pl.read_parquet(old), pl.read_parquet(new)
    kept = after.drop(list(added))
    assert kept.columns == before.columns, (kept.columns, before.columns)
    for name in before.columns:
        assert before[name].equals(kept[name]), f"column {name} differs between the old and the new output"
