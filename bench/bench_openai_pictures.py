"""Benchmark: ``infer --backend openai`` over photo-sized pictures, this checkout against another.

Each row's picture is sent as a PNG data URL, encoded from the decoded picture, so with real pictures the client's
CPU goes to zlib, not to HTTP (bench/bench_openai_transport.py uses tiny pictures and measures the transport). The
file: ``--rows`` MMBench rows, each with its own 640x480 photo-like JPEG (blurred noise, ~60 KB), prepared by
``mmbatch prepare``. Each checkout runs the real stage in a child process against bench/fast_chat_server.py
answering each completion after ``--latency-ms``, the checkouts alternating in every round (the CPU speed drifts).
Prints each run (wall, rows/s, client CPU per row) and the rows/s ratio of this checkout to the other per round.

Usage: ``python bench/bench_openai_pictures.py --baseline CHECKOUT [--rows 1024] [--concurrency 64]
[--latency-ms 200] [--rounds 3]``
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def photo_like_jpeg(rng: random.Random) -> bytes:
    """A 640x480 JPEG of blurred noise: compresses like a photo, unlike plain noise."""
    from PIL import Image, ImageFilter

    picture = Image.frombytes("RGB", (640, 480), rng.randbytes(640 * 480 * 3)).filter(ImageFilter.GaussianBlur(3))
    buffer = io.BytesIO()
    picture.save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


def build_tsv(path: Path, rows: int) -> None:
    """An MMBench-style TSV whose rows each have their own photo-like picture."""
    sys.path.insert(0, str(REPO_ROOT))
    from bench.bench_prepare import distinct_copy

    rng = random.Random(0)
    pool = [photo_like_jpeg(rng) for _ in range(8)]
    header = ["index", "question", "A", "B", "C", "D", "answer", "category", "image"]
    with path.open("w", encoding="utf-8") as handle:
        handle.write("\t".join(header) + "\n")
        for i in range(rows):
            image = base64.b64encode(distinct_copy(pool[i % len(pool)], rng)).decode()
            cells = [str(i), f"What is in picture {i}?", "a", "b", "c", "d", "ABCD"[i % 4], "photo", image]
            handle.write("\t".join(cells) + "\n")


_CHILD = r"""
import json, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from mmbatch.infer.settings import InferOptions
from mmbatch.infer.stage import run_infer
prepared, port, concurrency = Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
with tempfile.TemporaryDirectory(prefix="bench-openai-pictures-") as folder:
    start, cpu = time.perf_counter(), time.process_time()
    summary = run_infer(InferOptions(input=prepared, output=Path(folder) / "preds.parquet", backend="openai",
                                     model="local-model", base_url=f"http://127.0.0.1:{port}/v1",
                                     concurrency=concurrency))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
assert summary.failed == 0, summary
print(json.dumps({"rows": summary.ran, "wall_s": wall, "cpu_s": cpu}))
"""


def one_run(checkout: Path, prepared: Path, port: int, concurrency: int) -> dict[str, float]:
    """Run ``checkout``'s infer stage in a child process; its figures."""
    child = subprocess.run([sys.executable, "-c", _CHILD, str(checkout), str(prepared), str(port), str(concurrency)],
                           capture_output=True, text=True, check=True, cwd=checkout)
    figures: dict[str, float] = json.loads(child.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    """Build the file, alternate the checkouts every round, print every run and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the other checkout")
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    checkouts = {"this": REPO_ROOT, "baseline": args.baseline.resolve()}
    for checkout in checkouts.values():  # bytecode, as an installed package has
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(checkout / "mmbatch")], check=True)
    server = subprocess.Popen([sys.executable, str(REPO_ROOT / "bench" / "fast_chat_server.py"), "--latency-ms",
                               str(args.latency_ms)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().split()[1])
        with tempfile.TemporaryDirectory(prefix="bench-openai-pictures-prepared-") as folder:
            source, prepared = Path(folder) / "photos.tsv", Path(folder) / "photos.parquet"
            build_tsv(source, args.rows)
            subprocess.run([sys.executable, "-m", "mmbatch", "prepare", "--benchmark", "mmbench", "--input",
                            str(source), "--output", str(prepared)], check=True, cwd=REPO_ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            bound = args.rows * args.latency_ms / 1000 / args.concurrency
            print(f"{args.rows} rows of 640x480 pictures, concurrency {args.concurrency}, {args.latency_ms:g} ms "
                  f"per completion (latency bound {bound:.2f} s)", flush=True)
            ratios = []
            for round_number in range(1, args.rounds + 1):
                rates = {}
                for name in checkouts if round_number % 2 else list(checkouts)[::-1]:
                    started = time.perf_counter()
                    figures = one_run(checkouts[name], prepared, port, args.concurrency)
                    rates[name] = figures["rows"] / figures["wall_s"]
                    print(f"round {round_number} {name:8s} {figures['wall_s']:6.2f} s ({figures['wall_s'] / bound:.2f}x"
                          f" the bound), {rates[name]:6,.0f} rows/s, client CPU "
                          f"{1000 * figures['cpu_s'] / figures['rows']:.2f} ms/row "
                          f"(child {time.perf_counter() - started:.1f} s)", flush=True)
                ratios.append(rates["this"] / rates["baseline"])
            print(f"this/baseline rows/s per round {', '.join(f'{r:.2f}' for r in ratios)} "
                  f"(median {statistics.median(ratios):.2f})", flush=True)
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
