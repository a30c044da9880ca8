"""Benchmark: how close ``extract``'s judge comes to the latency bound at high concurrency.

A judge whose every answer takes ``--delay`` seconds can at best make ``calls`` requests in ``calls x delay /
concurrency`` seconds (the latency bound). The real CLI extracts rows only the judge can match against the test
server (tests/support/openai_server.py, real HTTP on 127.0.0.1, answering "A" after ``--delay``), with a fresh judge
cache per run; the judging phase's own seconds (``extract.counts.judge.judge_s`` of the output's metadata) are divided
by the bound. ``--jitter J`` draws each answer's delay uniformly from ``delay x (1 +- J)`` (same mean, so the same
bound), as a real judge's latency varies. Two kinds of rows: single-row groups, and MMBench circular groups of 4
copies whose answer is A (every copy judged right, so every copy is asked, each after the previous copy of its
group). Concurrency 64 (goal: <= 1.5x) and 1 (the reference, on fewer rows) alternate, because this machine's speed
drifts. The CLI process's CPU per row (user + system, start-up included) shows whether the client is the limit.

Usage: ``python bench/bench_judge_concurrency.py [--rows 2000] [--serial-rows 40] [--delay 0.2] [--jitter 0]
[--rounds 3]``
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.extract_rows import mcq_row, write_predictions  # noqa: E402
from support.openai_server import OpenAIServer, ServerScript  # noqa: E402

from mmbatch.tableio import read_metadata  # noqa: E402

COPIES = {"single": 1, "circular": 4}
"""Rows per group of each kind."""


def rows_of(kind: str, count: int) -> list[dict[str, Any]]:
    """``count`` rows (a multiple of the group size) whose predictions no rule matches and whose answer is A."""
    copies = COPIES[kind]
    return [mcq_row(question + copy * 1_000_000, f"the thing numbered {question}, copy {copy}", answer="A")
            for question in range(1, count // copies + 1) for copy in range(copies)]


def answer_after(delay: float, jitter: float) -> Callable[[str, dict[str, Any]], str]:
    """The server's reply function: "A" after ``delay x (1 +- jitter)`` seconds (seeded: every run draws alike)."""
    draw = random.Random(0)
    lock = threading.Lock()

    def reply(prompt: str, body: dict[str, Any]) -> str:
        with lock:  # handlers run in threads
            seconds = delay * (1 + draw.uniform(-jitter, jitter))
        time.sleep(seconds)
        return "A"

    return reply


def run_extract(predictions: Path, out: Path, url: str, concurrency: int) -> dict[str, float]:
    """One CLI run with a fresh cache; its judging seconds and calls, the process's wall and CPU seconds."""
    env = {**os.environ, "OPENAI_API_KEY": "", "MMBATCH_JUDGE_API_KEY": ""}
    command = [sys.executable, "-m", "mmbatch", "extract", "--input", str(predictions), "--output", str(out),
               "--judge-base-url", url, "--judge-cache", str(out.with_suffix(".sqlite")),
               "--concurrency", str(concurrency)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"extract failed ({result.returncode}): {result.stderr}")
    judge = read_metadata(out)["extract"]["counts"]["judge"]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"judge_s": float(judge["judge_s"]), "calls": float(judge["calls"]), "process_s": wall, "cpu_s": cpu}


def main() -> int:
    """Alternate the settings round after round; print every run and the ratios to the latency bound."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--serial-rows", type=int, default=40, help="rows of the concurrency-1 runs")
    parser.add_argument("--delay", type=float, default=0.2, help="server seconds per answer (default 0.2)")
    parser.add_argument("--jitter", type=float, default=0.0, help="relative spread of the delay (default 0)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    settings = [(kind, args.concurrency) for kind in COPIES] + [("single", 1)]
    ratios: dict[tuple[str, int], list[float]] = {setting: [] for setting in settings}
    cpu_ms: dict[tuple[str, int], list[float]] = {setting: [] for setting in settings}
    with tempfile.TemporaryDirectory(prefix="bench-judge-") as tmp, \
            OpenAIServer(ServerScript(reply=answer_after(args.delay, args.jitter))) as server:
        folder = Path(tmp)
        inputs = {(kind, concurrency): write_predictions(
            folder / f"{kind}-{concurrency}.parquet",
            rows_of(kind, args.rows if concurrency > 1 else args.serial_rows)) for kind, concurrency in settings}
        for round_number in range(1, args.rounds + 1):
            for kind, concurrency in settings:
                rows = args.rows if concurrency > 1 else args.serial_rows
                out = folder / f"out-{round_number}-{kind}-{concurrency}.parquet"
                run = run_extract(inputs[kind, concurrency], out, server.base_url, concurrency)
                assert run["calls"] == rows, run  # every row asked once: the bound counts every call
                bound = run["calls"] * args.delay / concurrency
                ratios[kind, concurrency].append(run["judge_s"] / bound)
                cpu_ms[kind, concurrency].append(1000 * run["cpu_s"] / rows)
                print(f"round {round_number} {kind:8s} concurrency {concurrency:3d}: {rows} rows judged in "
                      f"{run['judge_s']:.2f} s, bound {bound:.2f} s, ratio {run['judge_s'] / bound:.2f}x; process "
                      f"{run['process_s']:.1f} s wall, {run['cpu_s']:.2f} s CPU", flush=True)
    for (kind, concurrency), values in ratios.items():
        print(f"{kind:8s} concurrency {concurrency:3d}: ratio to the latency bound min {min(values):.2f} / median "
              f"{statistics.median(values):.2f} / max {max(values):.2f}x; process CPU per row median "
              f"{statistics.median(cpu_ms[kind, concurrency]):.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
