"""Benchmark: what a command costs before and around its work (issue 21 item 3).

Runs, in fresh processes and interleaved round after round: ``python -c pass`` (the interpreter alone), ``mmbatch
--help``, a usage error (``mmbatch infer`` without its options), and ``mmbatch score`` on a 12-row extracted file.
Wall and CPU seconds (user + system) of each child come from ``os.wait4``; medians are printed, with each command's
cost above the bare interpreter measured in the same round. ``--baseline PATH`` runs the same commands from another
checkout too (``PYTHONPATH=PATH``), alternating with this one, and prints the per-round ratio of the two.

Goals: ``mmbatch --help`` < 0.15 s wall, ``mmbatch score`` on 12 rows < 0.3 s wall.

Usage: ``python bench/bench_startup.py [--rounds 15] [--baseline PATH]``
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

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))


def timed(command: list[str], checkout: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``command`` with ``checkout`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime


def twelve_rows(folder: Path) -> Path:
    """A 12-row extracted MMBench file (3 questions x 4 circular copies)."""
    from bench.bench_score import synthetic_extracted
    from mmbatch.tableio import write_table

    return write_table(synthetic_extracted(12), folder / "extracted-12.parquet")


def main() -> int:
    """Run every command once per round, in turn; print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with, run alternately")
    args = parser.parse_args()
    checkouts = {"this": REPO_ROOT, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        folder = Path(tmp)
        extracted = twelve_rows(folder)
        python = [sys.executable]
        commands = {
            "python -c pass": [*python, "-c", "pass"],
            "mmbatch --help": [*python, "-m", "mmbatch", "--help"],
            "usage error": [*python, "-m", "mmbatch", "infer"],
            "score, 12 rows": [*python, "-m", "mmbatch", "score", "--input", str(extracted), "--output",
                               str(folder / "metrics.json")],
        }
        runs: dict[tuple[str, str], list[tuple[float, float]]] = {(c, n): [] for c in checkouts for n in commands}
        for round_number in range(args.rounds):
            order = list(checkouts) if round_number % 2 == 0 else list(checkouts)[::-1]
            for name, command in commands.items():
                for checkout in order:
                    runs[checkout, name].append(timed(command, checkouts[checkout]))
    load = os.getloadavg()
    print(f"{args.rounds} rounds, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end")
    for checkout in checkouts:
        bare = runs[checkout, "python -c pass"]
        for name in commands:
            figures = runs[checkout, name]
            wall, cpu = statistics.median(w for w, _ in figures), statistics.median(c for _, c in figures)
            above = statistics.median(w - b[0] for (w, _), b in zip(figures, bare, strict=True))
            print(f"{checkout:8s} {name:16s} wall median {wall:.3f} s (min {min(w for w, _ in figures):.3f}), CPU "
                  f"median {cpu:.3f} s; wall above the bare interpreter of its round: median {above:.3f} s")
    if "baseline" in checkouts:
        for name in commands:
            ratios = sorted(w / b for (w, _), (b, _) in zip(runs["this", name], runs["baseline", name], strict=True))
            cpu_ratios = sorted(c / b for (_, c), (_, b) in zip(runs["this", name], runs["baseline", name],
                                                                 strict=True))
            print(f"this / baseline {name:16s} wall per round min {ratios[0]:.2f} / median "
                  f"{statistics.median(ratios):.2f} / max {ratios[-1]:.2f}; "
                  f"CPU median {statistics.median(cpu_ratios):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
