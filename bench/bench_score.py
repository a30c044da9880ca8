"""Benchmark of ``mmbatch score``: a 1,000,000-row MMBench-style extracted file, with and without --bootstrap.

Builds a synthetic extracted Parquet file (250,000 questions x 4 circular copies, 20 categories in 6 L2 abilities,
realistic column set and text sizes), then runs ``mmbatch score`` in fresh subprocesses, alternating the two
settings, and reports each run's wall time and peak memory (``os.wait4`` rusage of that child) and the medians.

Usage: python bench/bench_score.py [--rows 1000000] [--repeats 3] [--bootstrap 1000] [--keep DIR]
Goals (issue 5): under 10 s without bootstrap, under 60 s with 1,000 replicates, on the 2-core CI machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mmbatch.tableio import write_table  # noqa: E402

OFFSET = 1_000_000
L2 = ("attribute_reasoning", "coarse_perception", "finegrained_perception (cross-instance)",
      "finegrained_perception (instance-level)", "logic_reasoning", "relation_reasoning")


def synthetic_extracted(rows: int, seed: int = 0) -> pl.DataFrame:
    """``rows`` extracted rows in circular groups of 4, about 80 % of rows right and 1 % unmatched."""
    rng = np.random.default_rng(seed)
    questions = rows // 4
    question = np.repeat(np.arange(questions, dtype=np.int64), 4)
    copy = np.tile(np.arange(4, dtype=np.int64), questions)
    category = question % 20
    answer = np.array(list("ABCD"))[(question + copy) % 4]
    draw = rng.random(question.shape[0])
    wrong = np.array(list("BCDA"))[(question + copy) % 4]
    extracted = np.where(draw < 0.8, answer, wrong).astype(object)
    extracted[draw > 0.99] = None
    frame = pl.DataFrame({
        "index": question + copy * OFFSET,
        "g_index": question,
        "answer": answer,
        "category": category,
        "extracted": pl.Series(extracted, dtype=pl.String),
        "extract_method": np.where(draw > 0.99, "unmatched", "rule"),
    })
    prompt = ("Question: What is shown in picture {}?\nOptions:\nA. a red car\nB. a blue car\nC. a green bus\n"
              "D. a yellow truck\nPlease select the correct answer from the options above. \n")
    frame = frame.select(
        "index", "g_index", pl.lit("mmbench").alias("benchmark"),
        pl.format("What is shown in picture {}?", "g_index").alias("question"),
        pl.lit(None, dtype=pl.String).alias("hint"),
        pl.lit("a red car").alias("A"), pl.lit("a blue car").alias("B"), pl.lit("a green bus").alias("C"),
        pl.lit("a yellow truck").alias("D"), "answer",
        pl.format("category_{}", "category").alias("category"),
        pl.col("category").mod(6).replace_strict(dict(enumerate(L2)), return_dtype=pl.String).alias("l2-category"),
        pl.lit("dev").alias("split"),
        pl.format(prompt, "g_index").alias("prompt"),
        pl.lit("vlmevalkit").alias("prompt_template"),
        pl.col("g_index").hash().cast(pl.String).str.slice(0, 16).alias("prompt_hash"),
        pl.lit("generate").alias("mode"),
        pl.col("extracted").fill_null("I cannot tell.").alias("prediction"),
        pl.lit("synthetic-model").alias("model"),
        pl.lit(None, dtype=pl.String).alias("error"),
        pl.lit(1, dtype=pl.Int64).alias("output_tokens"),
        pl.lit(12.5).alias("latency_ms"),
        "extracted", "extract_method",
        pl.lit(None, dtype=pl.String).alias("judge_model"),
        pl.lit(None, dtype=pl.String).alias("judge_raw"),
    )
    return frame


def run_once(extracted: Path, output: Path, bootstrap: int) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) of one ``mmbatch score`` subprocess.

    CPU seconds are reported because the shared machine's wall time depends on what else runs.
    """
    command = [sys.executable, "-m", "mmbatch", "score", "--input", str(extracted), "--output", str(output)]
    if bootstrap:
        command += ["--bootstrap", str(bootstrap), "--seed", "0"]
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"mmbatch score failed: {process.stderr.read().decode() if process.stderr else status}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # ru_maxrss is in KiB on Linux


def main() -> None:
    """Build the file, time both settings alternately, print per-run figures and medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--keep", type=Path, help="write the synthetic file and outputs here instead of a temp dir")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        extracted = folder / "extracted.parquet"
        start = time.perf_counter()
        write_table(synthetic_extracted(args.rows), extracted, {"stage": "extracted"})
        size = extracted.stat().st_size / 2**20
        print(f"synthetic extracted file: {args.rows:,} rows, {size:.0f} MiB, built in "
              f"{time.perf_counter() - start:.1f} s")
        settings = {"no bootstrap": 0, f"--bootstrap {args.bootstrap}": args.bootstrap}
        results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in settings}
        for repeat in range(args.repeats):
            for name, replicates in settings.items():
                wall, cpu, peak = run_once(extracted, folder / f"metrics-{replicates}.parquet", replicates)
                results[name].append((wall, cpu, peak))
                print(f"  run {repeat + 1} {name:>16}: {wall:6.2f} s wall, {cpu:6.2f} s CPU, "
                      f"{peak:6.0f} MiB peak RSS, load {os.getloadavg()[0]:.1f}")
        for name, runs in results.items():
            wall, cpu, peak = (statistics.median(run[i] for run in runs) for i in range(3))
            print(f"median {name:>16}: {wall:6.2f} s wall, {cpu:6.2f} s CPU, {peak:6.0f} MiB peak RSS "
                  f"(over {len(runs)} runs)")
        base = statistics.median(run[0] for run in results["no bootstrap"])
        boot = statistics.median(run[0] for run in results[f"--bootstrap {args.bootstrap}"])
        print(f"bootstrap / no bootstrap wall-time ratio: {boot / base:.2f}")


if __name__ == "__main__":
    main()
