"""Benchmark: does ``infer`` decode the next chunk's pictures the quicker way (beside the model, or after it)?

:mod:`mmbatch.infer.decode_schedule` times both ways during the run and keeps the quicker. This script runs the real
``infer`` stage in process three ways over the same prepared file: as shipped (``chosen``), and with the schedule
fixed to each way (``beside``, ``after``), interleaved in every round because this machine's CPU speed drifts. Two
backends, at the two ends:

- ``echo``: answers at once in Python, so a decoder beside it only takes turns with it at the interpreter's lock;
- ``openai`` at ``--concurrency`` against bench/fast_chat_server.py answering each completion after
  ``--latency-ms`` (a model server: the client waits outside the lock).

The file: ``--rows`` MMBench rows, each with its own noise JPEG of ~``--image-kb`` KB (bench/bench_prepare.py's),
prepared by ``mmbatch prepare``. Prints each run (wall, rows/s, CPU ms per row, how often ``chosen`` picked each
way) and per backend the chosen/best-fixed ratio of rows/s, round by round.

Usage: ``python bench/bench_decode_schedule.py [--rows 4096] [--image-kb 40] [--concurrency 16]
[--latency-ms 20] [--rounds 2]``
"""

from __future__ import annotations

import argparse
import collections
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

WAYS = ("chosen", "beside", "after")


def one_run(prepared: Path, way: str, backend: dict[str, Any]) -> tuple[float, float, dict[str, int]]:
    """Run infer over ``prepared`` with ``backend``'s options, the schedule as shipped or fixed to ``way``; (rows per
    second, CPU ms per row, cycles per way)."""
    import polars as pl

    import mmbatch.infer.decode_schedule as schedule_module
    from mmbatch.infer.settings import InferOptions
    from mmbatch.infer.stage import run_infer

    cycles: collections.Counter[str] = collections.Counter()
    shipped_next_way, shipped_record = schedule_module.DecodeSchedule.next_way, schedule_module.DecodeSchedule.record

    def fixed_next_way(self: schedule_module.DecodeSchedule) -> schedule_module.DecodeWay:
        return schedule_module.DecodeWay.BESIDE if way == "beside" else schedule_module.DecodeWay.AFTER

    def counted_record(self: schedule_module.DecodeSchedule, chosen: schedule_module.DecodeWay, seconds: float,
                       rows: int) -> None:
        cycles[chosen.name.lower()] += 1
        if way == "chosen":
            shipped_record(self, chosen, seconds, rows)

    schedule_module.DecodeSchedule.record = counted_record  # type: ignore[method-assign]
    if way != "chosen":
        schedule_module.DecodeSchedule.next_way = fixed_next_way  # type: ignore[method-assign]
    rows = pl.scan_parquet(prepared).select(pl.len()).collect().item()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-decode-schedule-") as folder:
            start, cpu = time.perf_counter(), time.process_time()
            summary = run_infer(InferOptions(input=prepared, output=Path(folder) / "preds.parquet", **backend))
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    finally:
        schedule_module.DecodeSchedule.next_way = shipped_next_way  # type: ignore[method-assign]
        schedule_module.DecodeSchedule.record = shipped_record  # type: ignore[method-assign]
    assert summary.ran == rows and summary.failed == 0, summary
    return rows / wall, 1000 * cpu / rows, dict(cycles)


def prepared_file(folder: Path, rows: int, image_kb: int) -> Path:
    """An MMBench TSV of ``rows`` distinct pictures, through ``mmbatch prepare``."""
    from bench.bench_prepare import build_tsv

    source, prepared = folder / "mmbench.tsv", folder / "prepared.parquet"
    build_tsv(source, rows, image_kb)
    subprocess.run([sys.executable, "-m", "mmbatch", "prepare", "--benchmark", "mmbench", "--input", str(source),
                    "--output", str(prepared)], check=True, cwd=REPO_ROOT, stdout=subprocess.DEVNULL)
    return prepared


def main() -> None:
    """Alternate the ways for each backend and round; print every run and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--image-kb", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, str(REPO_ROOT / "bench" / "fast_chat_server.py"), "--latency-ms",
                               str(args.latency_ms)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().split()[1])
        backends = {
            "echo": {"backend": "echo", "model": "answer"},
            f"openai c={args.concurrency} {args.latency_ms:g} ms": {
                "backend": "openai", "model": "local-model", "base_url": f"http://127.0.0.1:{port}/v1",
                "concurrency": args.concurrency},
        }
        with tempfile.TemporaryDirectory(prefix="bench-decode-schedule-prepared-") as folder:
            prepared = prepared_file(Path(folder), args.rows, args.image_kb)
            print(f"{args.rows} rows, ~{args.image_kb} KB JPEG each", flush=True)
            for name, backend in backends.items():
                ratios = []
                for round_number in range(1, args.rounds + 1):
                    rates = {}
                    for way in WAYS if round_number % 2 else WAYS[::-1]:
                        rate, cpu_ms, cycles = one_run(prepared, way, backend)
                        rates[way] = rate
                        print(f"{name:24s} round {round_number} {way:7s} {rate:7,.0f} rows/s, CPU {cpu_ms:.3f} ms/row"
                              f", cycles {cycles}", flush=True)
                    ratios.append(rates["chosen"] / max(rates["beside"], rates["after"]))
                print(f"{name:24s} chosen/best fixed rows/s per round {', '.join(f'{r:.2f}' for r in ratios)} "
                      f"(median {statistics.median(ratios):.2f})", flush=True)
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
