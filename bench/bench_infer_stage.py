"""Benchmark of the ``infer`` stage itself (no model): how many rows per second it can feed a backend.

Builds an MMBench-dev-sized prepared file (4,377 rows: 1,176 questions with a 512x384 JPEG each, the circular
copies referring to them) and runs the stage with the ``echo`` backend, so what is timed is the stage's own work:
reading and validating the file, decoding every row's image, committing a progress part per result list, and writing
the output. Also times a rerun with everything already done (reading the progress back) and, for comparison with a
model, the per-row cost. Repeated; medians are reported because this machine's CPU speed drifts.

Usage: ``python bench/bench_infer_stage.py [--questions N] [--repeats N]``
"""

from __future__ import annotations

import argparse
import base64
import io
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

CPU_SECONDS: list[float] = []
"""CPU time (all threads) of each timed run: less sensitive to the other jobs on the machine than wall time."""


def jpeg_base64(seed: int) -> str:
    """A 512x384 JPEG with some structure (so it is not trivially compressible), as base64."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    pixels = (rng.random((384, 512, 3)) * 255).astype("uint8")
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="JPEG", quality=85)
    return base64.b64encode(buffer.getvalue()).decode()


def build_prepared(folder: Path, questions: int) -> Path:
    """An MMBench-dev-like prepared file: 938/149/89-style groups of 4, 3 and 2 rows with referenced images."""
    import polars as pl

    from tests.support.prepared_files import prepared_frame, write_prepared

    frame = prepared_frame(questions, copies=4)
    sizes = [4 if i % 8 < 6 else (3 if i % 8 == 6 else 2) for i in range(1, questions + 1)]
    keep = pl.Series([k < sizes[(index % 1_000_000) - 1] for index, k in
                      zip(frame["index"].to_list(), [i // 1_000_000 for i in frame["index"].to_list()], strict=True)])
    frame = frame.filter(keep)
    images = {i: jpeg_base64(i) for i in range(1, questions + 1)}
    frame = frame.with_columns(
        pl.Series("image", [images[i] if i < 1_000_000 else str(i % 1_000_000) for i in frame["index"].to_list()]))
    return write_prepared(folder / "prep.parquet", frame)


def timed_run(prepared: Path, output: Path, **options: object) -> tuple[float, int]:
    from mmbatch.infer.settings import InferOptions
    from mmbatch.infer.stage import run_infer

    start, cpu_start = time.perf_counter(), time.process_time()
    summary = run_infer(InferOptions(input=prepared, output=output, backend="echo", model="answer", **options))
    CPU_SECONDS.append(time.process_time() - cpu_start)
    return time.perf_counter() - start, summary.rows


def main() -> None:
    """Build the file, run the stage ``--repeats`` times, print medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1176)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-infer-stage-"))
    try:
        prepared = build_prepared(folder, args.questions)
        fresh, rerun, sharded = [], [], []
        rows = 0
        fresh_cpu = []
        for repeat in range(args.repeats):
            output = folder / f"run{repeat}.parquet"
            seconds, rows = timed_run(prepared, output)
            fresh.append(seconds)
            fresh_cpu.append(CPU_SECONDS[-1])
            rerun.append(timed_run(prepared, output)[0])
            shard_seconds = 0.0
            for k in range(4):
                shard_seconds += timed_run(prepared, folder / f"shard{repeat}.parquet", shard=f"{k}/4")[0]
            sharded.append(shard_seconds)
        print(f"infer stage, echo backend, {rows} rows ({args.questions} JPEG images 512x384, copies by reference)")
        print(f"  fresh run:             median {statistics.median(fresh):6.2f} s  "
              f"({rows / statistics.median(fresh):7.1f} rows/s, {1000 * statistics.median(fresh) / rows:.2f} ms/row)")
        print(f"  fresh run CPU time:    median {statistics.median(fresh_cpu):6.2f} s  "
              f"({1000 * statistics.median(fresh_cpu) / rows:.2f} ms/row)")
        print(f"  rerun, all done:       median {statistics.median(rerun):6.2f} s")
        print(f"  4 shards one by one:   median {statistics.median(sharded):6.2f} s in all")
        print(f"  runs: fresh {[round(s, 2) for s in fresh]}, rerun {[round(s, 2) for s in rerun]}, "
              f"4 shards {[round(s, 2) for s in sharded]}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
