"""Benchmark: does the ``infer`` stage's cost per row stay flat from 10K to 1M rows?

Each size runs in its own process (so peak memory is that run's): build a prepared file of ``N`` rows (one tiny PNG
per question, its 3 circular copies referring to it), run ``infer`` in process with the ``echo`` backend (one result,
hence one journal commit, per row, like a server backend), then run it again with every row done (the resume path).
Reported: wall and CPU seconds, CPU milliseconds per row, peak resident memory, progress bytes on disk at the end of
the run, and the time to read everything back.

``--backend openai`` against a fast local server is timed by bench/bench_openai_transport.py.

Usage: ``python bench/bench_infer_scale.py [--rows 10000 100000 1000000]``; the 1M run takes
minutes and ~2 GB, run it niced.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))


def scaled_prepared(rows: int, folder: Path) -> Path:
    """A prepared file of ``rows`` rows: questions of 4 circular copies, each question with the same small PNG.

    Built by repeating one question of :func:`tests.support.prepared_files.prepared_frame` (whose image sizes grow
    with the question number, which would make the cost per row grow with the file for the wrong reason).
    """
    import polars as pl

    from tests.support.prepared_files import prepared_frame, write_prepared

    template = prepared_frame(1, copies=4)
    questions = rows // 4
    frame = pl.concat([template] * questions)
    question = pl.int_range(1, questions + 1, eager=True).repeat_by(4).explode()
    copy = pl.Series([0, 1, 2, 3] * questions)
    frame = frame.with_columns(
        (question + copy * 1_000_000).alias("index"), question.alias("g_index"),
        pl.when(copy == 0).then(pl.col("image")).otherwise(question.cast(pl.String)).alias("image"))
    return write_prepared(folder / "prepared.parquet", frame)


def one_size(rows: int, folder: Path) -> dict[str, float]:
    """Build, run and rerun ``rows`` rows in this process; the figures as a dict."""
    from mmbatch.infer.settings import InferOptions
    from mmbatch.infer.stage import run_infer
    from mmbatch.journal import committed_rows, partial_dir
    prepared = scaled_prepared(rows, folder)
    output = folder / "preds.parquet"
    progress_bytes = 0
    import mmbatch.journal as journal_module

    seal = journal_module.RowJournal.seal

    def measured_seal(self: journal_module.RowJournal) -> None:  # progress size just before the run's last seal
        nonlocal progress_bytes
        progress_bytes = sum(p.stat().st_size for p in partial_dir(output).iterdir() if p.is_file())
        seal(self)

    journal_module.RowJournal.seal = measured_seal  # type: ignore[method-assign]
    start, cpu = time.perf_counter(), time.process_time()
    summary = run_infer(InferOptions(input=prepared, output=output, backend="echo", model="answer"))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert summary.ran == rows and summary.failed == 0
    start = time.perf_counter()
    again = run_infer(InferOptions(input=prepared, output=output, backend="echo", model="answer"))
    rerun = time.perf_counter() - start
    assert again.ran == 0 and committed_rows(partial_dir(output)) is None
    return {"rows": rows, "wall_s": wall, "cpu_s": cpu, "cpu_ms_per_row": 1000 * cpu / rows,
            "rows_per_s": rows / wall, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "progress_mb": progress_bytes / 2**20, "rerun_all_done_s": rerun}


def main() -> None:
    """Run each size in a child process and print one line per size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        with tempfile.TemporaryDirectory(prefix="bench-infer-scale-") as folder:
            print(json.dumps(one_size(args.child, Path(folder))))
        return
    for rows in args.rows:
        child = subprocess.run([sys.executable, __file__, "--child", str(rows)], capture_output=True, text=True,
                               check=True)
        figures = json.loads(child.stdout.strip().splitlines()[-1])
        print(f"{rows:>9,} rows: {figures['wall_s']:7.1f} s wall, {figures['cpu_s']:7.1f} s CPU "
              f"({figures['cpu_ms_per_row']:.3f} ms/row, {figures['rows_per_s']:,.0f} rows/s), peak RSS "
              f"{figures['peak_rss_mb']:,.0f} MB, progress {figures['progress_mb']:.1f} MB, "
              f"rerun with all done {figures['rerun_all_done_s']:.1f} s", flush=True)


if __name__ == "__main__":
    main()
