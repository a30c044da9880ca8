"""Benchmark of the extract judge: concurrency and the cache, against a local OpenAI-compatible server.

2,000 rows whose answers only the judge can match; the server (tests/support/openai_server.py, real HTTP on
127.0.0.1) answers each request after 50 ms, like a fast hosted judge. Measured through the real CLI:

- seconds spent judging with ``--concurrency 32`` and with ``--concurrency 1`` (goal: >= 10x), interleaved
  32, 1, 32, 1. By default the concurrency-1 runs judge a subset (``--serial-rows``, 300) and their time per row
  is extrapolated to all rows: one request after another is linear in rows, and a full serial run takes minutes
  on a loaded 2-core machine. ``--serial-rows 0`` runs it on all rows;
- requests the server receives when the same rows are extracted again with the same cache (goal: 0).

Usage: python bench/bench_extract.py [--rows 2000] [--serial-rows 300] [--delay 0.05]
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
sys.path.insert(0, str(REPO / "tests"))

from support.extract_rows import judged_rows, write_predictions  # noqa: E402
from support.openai_server import OpenAIServer, ServerScript  # noqa: E402

from mmbatch.tableio import read_metadata  # noqa: E402


def run_extract(inp: Path, out: Path, cache: Path, url: str, concurrency: int) -> dict[str, float]:
    """One CLI run; returns the process's wall seconds, and the run's own and its judge phase's seconds."""
    env = {**os.environ, "OPENAI_API_KEY": "", "MMBATCH_JUDGE_API_KEY": ""}
    command = [sys.executable, "-m", "mmbatch", "extract", "--input", str(inp), "--output", str(out),
               "--judge-base-url", url, "--judge-cache", str(cache), "--concurrency", str(concurrency)]
    started = time.monotonic()
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    if result.returncode != 0:
        raise SystemExit(f"extract failed ({result.returncode}): {result.stderr}")
    counts = read_metadata(out)["extract"]["counts"]
    return {"process_s": wall, "run_s": float(counts["wall_s"]), "judge_s": float(counts["judge"]["judge_s"])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--serial-rows", type=int, default=300,
                        help="rows of the concurrency-1 runs, extrapolated to --rows (0: all rows)")
    parser.add_argument("--delay", type=float, default=0.05, help="server seconds per answer (default 0.05)")
    args = parser.parse_args()
    serial_rows = args.serial_rows or args.rows

    with tempfile.TemporaryDirectory(prefix="bench-extract-") as tmp, \
            OpenAIServer(ServerScript(reply="A", delay_s=args.delay)) as server:
        folder = Path(tmp)
        inputs = {32: write_predictions(folder / "pred.parquet", judged_rows(args.rows)),
                  1: write_predictions(folder / "serial.parquet", judged_rows(serial_rows))}
        times: dict[int, list[dict[str, float]]] = {32: [], 1: []}
        for position, concurrency in enumerate((32, 1, 32, 1)):
            server.reset()
            cache = folder / f"cache-{position}.sqlite"  # a fresh cache: every row is asked
            run = run_extract(inputs[concurrency], folder / f"out-{position}.parquet", cache, server.base_url,
                              concurrency)
            times[concurrency].append(run)
            asked = len(server.chat_requests)
            rows = args.rows if concurrency == 32 else serial_rows
            assert asked == rows, asked
            print(f"concurrency {concurrency:>2}: {rows} rows, {asked} requests, judging {run['judge_s']:.1f} s, "
                  f"run {run['run_s']:.1f} s, process {run['process_s']:.1f} s", flush=True)
        server.reset()
        run_extract(inputs[32], folder / "again.parquet", folder / "cache-0.sqlite", server.base_url, 32)
        repeated = len(server.received)

    fast = statistics.median(t["judge_s"] for t in times[32])
    fast_process = statistics.median(t["process_s"] for t in times[32])
    scale = args.rows / serial_rows
    slow = statistics.median(t["judge_s"] for t in times[1]) * scale
    # Only the judging part grows with the rows; start-up, reading and writing are paid once.
    slow_process = statistics.median(t["process_s"] - t["judge_s"] for t in times[1]) + slow
    figures = {
        "rows": args.rows, "server_delay_s": args.delay, "serial_rows_measured": serial_rows,
        "judging_s_concurrency_32": round(fast, 2), "judging_s_concurrency_1": round(slow, 1),
        "speedup_judging": round(slow / fast, 1),
        "process_s_concurrency_32": round(fast_process, 2), "process_s_concurrency_1": round(slow_process, 1),
        "speedup_process": round(slow_process / fast_process, 1),
        "requests_on_second_run": repeated,
    }
    if scale != 1:
        figures["note"] = f"concurrency-1 figures measured on {serial_rows} rows and scaled by {scale:g}"
    print(json.dumps(figures, indent=2))
    ok = figures["speedup_judging"] >= 10 and repeated == 0
    print("goals (>= 10x, 0 repeated requests):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
