"""Benchmark of issue 21's CPU stages: ``extract --no-judge`` + ``score`` at 100K and 1M rows, this checkout against a
baseline, interleaved, each stage in a fresh process, outputs compared.

Files: LLaVA-1.5-13B's real MMBench-dev answers scaled with their circular groups (bench/old_vs_new.py: 23 copies =
100,671 rows, 229 = 1,002,333; CircularEval 67.6871 % on each) and the 18 real VLMEvalKit TextVQA_VAL files repeated
(bench/bench_vqa_score.py: 108,000 and 1,080,000 rows; VQA accuracy 47.677, the mean of the 18 published numbers).
Each round runs every file through the baseline's code and this checkout's, one after the other, so that the
machine's drifting speed hits both alike: extract into a fresh output, then score it. Per stage: wall and CPU seconds
(``os.wait4``) and the process's own peak RSS (``VmHWM``). Asserted on every run: this checkout's extracted file,
hits file and metrics equal the baseline's cell for cell (the baseline's extra or missing columns named by
``--allow-added``), and the headline numbers are the published ones.

A yardstick of the machine's speed is printed first (``python -c pass`` and a pure-Python loop): compare figures
taken on different days by it, never raw seconds.

Usage: python bench/bench_cpu_stages.py [--baseline REV] [--rounds 3] [--only mmbench,textvqa] [--sizes small,large]
[--rerun]
Goals (issue 21): 1M rows extract + score < 5 s wall and < 500 MB peak, 100K < 0.7 s, linear growth; the same for
TextVQA.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import polars as pl  # noqa: E402
from bench_vqa_score import predictions as textvqa_rows  # noqa: E402
from bench_vqa_score import real_rows  # noqa: E402
from old_vs_new import CIRCULAR_ACC, baseline_tree, run_stage, scaled_mmbench  # noqa: E402

from mmbatch.tableio import write_table  # noqa: E402

MB = 1e6 / 2**20
"""MiB in a megabyte (the goal is 500 MB = 476.8 MiB)."""


def yardstick() -> str:
    """How fast this machine is right now: ``python -c pass`` and 10**7 additions in a loop (medians of 3)."""
    starts, loops = [], []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        starts.append(time.perf_counter() - started)
        started = time.perf_counter()
        total = 0
        for value in range(10**7):
            total += value
        loops.append(time.perf_counter() - started)
    return (f"python -c pass {statistics.median(starts):.3f} s, 10**7 additions {statistics.median(loops):.2f} s, "
            f"load {os.getloadavg()[0]:.1f}")


def build_files(folder: Path, only: list[str], sizes: list[str]) -> dict[tuple[str, str], tuple[Path, list[str]]]:
    """(benchmark, size) -> (predictions file, extra extract arguments)."""
    files: dict[tuple[str, str], tuple[Path, list[str]]] = {}
    if "mmbench" in only:
        for size, copies in (("small", 23), ("large", 229)):
            if size in sizes:
                files[("mmbench", size)] = (scaled_mmbench(copies, folder / f"mmbench-{size}.parquet"), [])
    if "textvqa" in only:
        base, _ = real_rows()
        for size, rows in (("small", 108_000), ("large", 1_080_000)):
            if size in sizes:
                path = write_table(textvqa_rows(base, rows), folder / f"textvqa-{size}.parquet",
                                   {"stage": "predictions"})
                files[("textvqa", size)] = (path, ["--kind-option", "rules=vlmevalkit-2024"])
    return files


def same_tables(before: Path, after: Path, added: set[str]) -> None:
    """``after`` holds ``before``'s rows in its columns (those named in ``added`` may be in one only).

    Raises:
        AssertionError: naming the first column that differs.
    """
    old, new = pl.read_parquet(before), pl.read_parquet(after)
    shared = [name for name in old.columns if name not in added]
    assert [name for name in new.columns if name not in added] == shared, (old.columns, new.columns)
    for name in shared:
        assert old[name].equals(new[name]), f"{after.name}: column {name} differs from the baseline's"


def headline(metrics: Path, benchmark: str) -> float:
    rows = json.loads(metrics.read_text(encoding="utf-8"))
    metric = "circular_acc" if benchmark == "mmbench" else "acc"
    return next(row["value"] for row in rows if row["metric"] == metric and row["level"] == "overall")


def main() -> None:
    """Build the files, run both codes interleaved, check the outputs, print per-run figures, medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="6be1afe", help="the commit (or a folder holding a mmbatch package) to "
                        "compare with (default: main before issue 21's streaming stages)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="mmbench,textvqa")
    parser.add_argument("--sizes", default="small,large")
    parser.add_argument("--allow-added", default="", help="columns one code writes and the other not")
    parser.add_argument("--rerun", action="store_true", help="also run each extract again over its finished output "
                        "(a rerun of the same command: every row is taken back from it)")
    args = parser.parse_args()
    print(f"machine: {yardstick()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-cpu-stages-") as tmp:
        folder = Path(tmp)
        given = Path(args.baseline)
        codes = {"baseline": given if (given / "mmbatch").is_dir() else baseline_tree(folder / "baseline",
                                                                                       args.baseline),
                 "this": REPO}
        for code in codes.values():  # bytecode for both (this box sets PYTHONDONTWRITEBYTECODE: ~0.05 s a command)
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(code / "mmbatch")], check=True,
                           stdout=subprocess.DEVNULL)
        files = build_files(folder, args.only.split(","), args.sizes.split(","))
        added = set(filter(None, args.allow_added.split(",")))
        runs: dict[tuple[str, str, str, str], list[tuple[float, float, float]]] = {}
        for round_ in range(1, args.rounds + 1):
            for (benchmark, size), (predictions, extra) in files.items():
                outputs = {}
                # Which code runs first alternates by round: the first process after the 1M files ran slower (the
                # baseline's 100K extract 0.57-0.64 s against 0.32-0.38 s for the same code second), so a fixed order
                # favoured the code that went second.
                order = list(codes.items()) if round_ % 2 else list(codes.items())[::-1]
                for name, code in order:
                    extracted, metrics = folder / f"{name}-{benchmark}-{size}.parquet", folder / f"{name}.json"
                    for stale in folder.glob(f"{name}-{benchmark}-{size}*"):
                        stale.unlink()
                    extract = run_stage(code, "extract", "--input", str(predictions), "--output", str(extracted),
                                        "--no-judge", *extra)
                    score = run_stage(code, "score", "--input", str(extracted), "--output", str(metrics))
                    measured = [("extract", extract), ("score", score)]
                    if args.rerun:  # the same command again: every row is taken back from the finished output
                        first = pl.read_parquet(extracted)
                        measured.append(("rerun", run_stage(code, "extract", "--input", str(predictions),
                                                            "--output", str(extracted), "--no-judge", *extra)))
                        assert pl.read_parquet(extracted).equals(first), f"{name}: the rerun changed the output"
                    for stage, run in measured:
                        runs.setdefault((benchmark, size, name, stage), []).append(
                            (run.wall_s, run.cpu_s, run.peak_mib))
                    print(f"round {round_} {benchmark} {size} {name:>8}: " + ", ".join(
                        f"{stage} {run.wall_s:.3f} s ({run.cpu_s:.2f} CPU, {run.peak_mib:.0f} MiB)"
                        for stage, run in measured) + f"; load {os.getloadavg()[0]:.1f}", flush=True)
                    outputs[name] = (extracted, metrics.with_suffix(".hits.parquet"), headline(metrics, benchmark))
                same_tables(outputs["baseline"][0], outputs["this"][0], added)
                same_tables(outputs["baseline"][1], outputs["this"][1], added)
                assert outputs["baseline"][2] == outputs["this"][2]
                if benchmark == "mmbench":
                    assert abs(outputs["this"][2] - CIRCULAR_ACC) < 1e-9, outputs["this"][2]
                elif size == "large":
                    assert abs(outputs["this"][2] - 47.677) < 5e-4, outputs["this"][2]
        print("outputs identical to the baseline's on every run; CircularEval 67.6871 %, TextVQA 47.677")
        print(f"medians of {args.rounds} (wall, CPU, peak RSS); 500 MB = {500 * MB:.1f} MiB")
        for benchmark, size in files:
            for name in codes:
                ex, sc = (tuple(statistics.median(run[i] for run in runs[(benchmark, size, name, stage)])
                                for i in range(3)) for stage in ("extract", "score"))
                print(f"  {benchmark:>8} {size:>5} {name:>8}: extract + score {ex[0] + sc[0]:.3f} s wall, "
                      f"{ex[1] + sc[1]:.2f} s CPU; peak extract {ex[2]:.0f} / score {sc[2]:.0f} MiB")
            ratio = [statistics.median(
                (a[1] + b[1]) / (c[1] + d[1]) for a, b, c, d in zip(
                    runs[(benchmark, size, "this", "extract")], runs[(benchmark, size, "this", "score")],
                    runs[(benchmark, size, "baseline", "extract")], runs[(benchmark, size, "baseline", "score")],
                    strict=True))]
            print(f"  {benchmark:>8} {size:>5}: CPU this / baseline per round, median {ratio[0]:.2f}")
            if args.rerun:
                for name in codes:
                    wall, cpu, peak = (statistics.median(run[i] for run in runs[(benchmark, size, name, "rerun")])
                                       for i in range(3))
                    print(f"  {benchmark:>8} {size:>5} {name:>8}: extract rerun over its finished output {wall:.3f} s "
                          f"wall, {cpu:.2f} s CPU, peak {peak:.0f} MiB")
        for benchmark in {benchmark for benchmark, _ in files}:
            if (benchmark, "small") in files and (benchmark, "large") in files:
                growth = [statistics.median(runs[(benchmark, size, "this", "extract")][i][0]
                                            + runs[(benchmark, size, "this", "score")][i][0]
                                            for i in range(args.rounds)) for size in ("small", "large")]
                print(f"  {benchmark:>8}: 10x the rows -> {growth[1] / growth[0]:.2f}x the wall time")


if __name__ == "__main__":
    main()
