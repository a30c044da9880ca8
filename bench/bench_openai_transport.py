"""Benchmark: rows per second of ``infer --backend openai`` against a fast local server, by transport.

Runs the real ``infer`` stage in process (prepared file -> requests with their PNG data URLs -> HTTP -> journal ->
output) against :mod:`bench.fast_chat_server` (asyncio, keep-alive, one fixed answer, its own process), once through
mmbatch's keep-alive connections (``lean``, what a plain ``http://`` URL gets) and once through the ``openai`` package
(``package``, what ``https://`` and proxied URLs get), alternating the two in every round because this machine's CPU
speed drifts 3-5x over tens of seconds. Prints each run (wall, rows/s, client CPU per row) and, per concurrency, the
lean/package ratio of rows/s of every round with its min/median/max.

Usage: ``python bench/bench_openai_transport.py [--rows 4000] [--concurrency 16 64] [--rounds 3]``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

TRANSPORTS = ("lean", "package")


def one_run(prepared: Path, port: int, concurrency: int, transport: str) -> tuple[float, float]:
    """Run infer over ``prepared`` through ``transport``; (rows per second, client CPU ms per row)."""
    import polars as pl

    from mmbatch.infer.settings import InferOptions
    from mmbatch.infer.stage import run_infer

    rows = pl.scan_parquet(prepared).select(pl.len()).collect().item()
    # The package's path is what the client takes when lean_transport_applies says no (https, a proxy).
    with (tempfile.TemporaryDirectory(prefix="bench-openai-transport-") as folder,
          mock.patch("mmbatch.openai_client.lean_transport_applies", lambda url: transport == "lean")):
        start, cpu = time.perf_counter(), time.process_time()
        summary = run_infer(InferOptions(input=prepared, output=Path(folder) / "preds.parquet", backend="openai",
                                         model="local-model", base_url=f"http://127.0.0.1:{port}/v1",
                                         concurrency=concurrency))
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert summary.ran == rows and summary.failed == 0, summary
    return rows / wall, 1000 * cpu / rows


def main() -> None:
    """Alternate the transports for each concurrency and round; print every run and the ratios."""
    from bench.bench_infer_scale import scaled_prepared

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, str(REPO_ROOT / "bench" / "fast_chat_server.py")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().split()[1])
        with tempfile.TemporaryDirectory(prefix="bench-openai-prepared-") as folder:
            prepared = scaled_prepared(args.rows, Path(folder))
            for concurrency in args.concurrency:
                ratios = []
                for round_number in range(1, args.rounds + 1):
                    rates = {}
                    order = TRANSPORTS if round_number % 2 else TRANSPORTS[::-1]
                    for transport in order:
                        rate, cpu_ms = one_run(prepared, port, concurrency, transport)
                        rates[transport] = rate
                        print(f"concurrency {concurrency:3d} round {round_number} {transport:8s} {rate:7,.0f} rows/s "
                              f"client CPU {cpu_ms:.2f} ms/row", flush=True)
                    ratios.append(rates["lean"] / rates["package"])
                print(f"concurrency {concurrency:3d}: lean/package rows/s ratio per round "
                      f"{', '.join(f'{r:.2f}' for r in ratios)} (min {min(ratios):.2f}, median "
                      f"{statistics.median(ratios):.2f}, max {max(ratios):.2f})", flush=True)
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
