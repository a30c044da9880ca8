"""Benchmark: ``mmbatch prepare`` against a plain ``polars.read_csv`` of the same MMBench-style TSV.

Builds a 4,000-row TSV with ~100 KB base64 images (~400 MB) in a temporary folder, then times, in fresh
subprocesses, interleaved and repeated: the raw read, a raw read + write back (the floor for any stage that rewrites
the file), and ``mmbatch prepare`` to TSV and to Parquet. Peak memory is
the child's maximum RSS (``resource.getrusage(RUSAGE_CHILDREN)`` of a wrapper process that runs one child). Ratios
are also taken round by round (each round runs every command once), which holds when the machine's speed drifts.
Both checkouts' modules are compiled to bytecode first, as an installed package's are.
Goal (issues 2 and 21): prepare within 2x the raw read time, peak RSS under 2x the file size.

Usage: ``python bench/bench_prepare.py [--rows 4000] [--image-kb 100] [--repeats 3] [--baseline CHECKOUT]``
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

_MEASURE = r"""
import json, resource, subprocess, sys, time
start = time.perf_counter()
status = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
seconds = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"status": status, "seconds": seconds, "cpu_seconds": usage.ru_utime + usage.ru_stime,
                  "peak_rss_mb": usage.ru_maxrss / 1024}))
"""

_RAW_READ = "import polars, sys; polars.read_csv(sys.argv[1], separator='\\t', infer_schema=False)"
_READ_WRITE = ("import polars, sys; frame = polars.read_csv(sys.argv[1], separator='\\t', infer_schema=False); "
               "frame.write_csv(sys.argv[2], separator='\\t')")


def noisy_jpeg(rng: random.Random, target_bytes: int) -> bytes:
    """A JPEG of random noise of about ``target_bytes`` (noise does not compress, so size tracks pixels)."""
    from PIL import Image

    side = 64
    while True:
        pixels = rng.randbytes(side * side * 3)
        buffer = io.BytesIO()
        Image.frombytes("RGB", (side, side), pixels).save(buffer, "JPEG", quality=90)
        if buffer.tell() >= target_bytes:
            return buffer.getvalue()
        side = int(side * 1.25)


def distinct_copy(jpeg: bytes, rng: random.Random) -> bytes:
    """``jpeg`` with 256 bytes of its entropy-coded data replaced, so that every row's payload differs.

    Real MMBench rows all have different images; identical payloads would let Parquet's dictionary encoding
    shrink the file and flatter the figures. No JPEG marker may be created: the patch holds no 0xFF byte, and does
    not start right after one (whose stuffed 0x00 it would replace; the picture then no longer decodes).
    """
    start = jpeg.index(b"\xff\xda") + 64  # inside the scan, after the SOS header
    offset = rng.randrange(start, len(jpeg) - 300)
    while jpeg[offset - 1] == 0xFF:
        offset += 1
    patch = bytes(min(b, 0xFE) for b in rng.randbytes(256))
    return jpeg[:offset] + patch + jpeg[offset + 256:]


def build_tsv(path: Path, rows: int, image_kb: int) -> None:
    """Write an MMBench-style TSV: 4 options, hints, categories, one distinct ~``image_kb`` KB payload per row."""
    rng = random.Random(0)
    pool = [noisy_jpeg(rng, image_kb * 1024 * 3 // 4) for _ in range(8)]
    header = ["index", "question", "hint", "A", "B", "C", "D", "answer", "category", "l2-category", "split", "image"]
    with path.open("w", encoding="utf-8") as handle:
        handle.write("\t".join(header) + "\n")
        for i in range(rows):
            hint = f"Hint number {i}" if i % 3 else ""
            image = base64.b64encode(distinct_copy(pool[i % len(pool)], rng)).decode()
            cells = [str(i), f"Which shape is shown in picture {i}?", hint, "circle", "square", "triangle", "star",
                     "ABCD"[i % 4], f"category_{i % 20}", f"l2_{i % 6}", "dev", image]
            handle.write("\t".join(cells) + "\n")


def measure(command: list[str], checkout: Path = REPO_ROOT) -> dict[str, float]:
    """Run ``command`` in a fresh wrapper process, in ``checkout`` (``python -m mmbatch`` imports its code); its wall
    time and peak RSS."""
    result = subprocess.run([sys.executable, "-c", _MEASURE, *command], capture_output=True, text=True, check=True,
                            cwd=checkout, env={**os.environ, "PYTHONPATH": str(checkout)})
    figures = json.loads(result.stdout)
    if figures["status"] != 0:
        raise SystemExit(f"command failed ({figures['status']}): {' '.join(command)}")
    return figures


def main() -> int:
    """Build the file, run the interleaved measurements, print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--image-kb", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", type=Path,
                        help="another checkout whose `prepare -> parquet` runs too, in the same rounds")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_prepare_") as tmp:
        folder = Path(tmp)
        source = folder / "mmbench_bench.tsv"
        build_tsv(source, args.rows, args.image_kb)
        size_mb = source.stat().st_size / 2**20
        commands = {
            "polars.read_csv": [sys.executable, "-c", _RAW_READ, str(source)],
            # The floor for any tool that reads the file and writes it back: polars alone, no checks, no prompts.
            "read_csv+write_csv": [sys.executable, "-c", _READ_WRITE, str(source), str(folder / "copy.tsv")],
            "prepare -> tsv": [sys.executable, "-m", "mmbatch", "prepare", "--benchmark", "mmbench", "--input",
                               str(source), "--output", str(folder / "out.tsv")],
            "prepare -> parquet": [sys.executable, "-m", "mmbatch", "prepare", "--benchmark", "mmbench", "--input",
                                   str(source), "--output", str(folder / "out.parquet")],
        }
        checkouts = {name: REPO_ROOT for name in commands}
        if args.baseline is not None:
            commands["baseline -> parquet"] = commands["prepare -> parquet"]
            checkouts["baseline -> parquet"] = args.baseline.resolve()
        # Bytecode for each checkout: without it (PYTHONDONTWRITEBYTECODE, as on the benchmarks' box) every prepare
        # compiles its ~70 modules again, ~0.1 s of a 2 s run.
        for checkout in set(checkouts.values()):
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(checkout / "mmbatch")], check=True,
                           stdout=subprocess.DEVNULL)
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in commands}
        for _ in range(args.repeats):
            for name, command in commands.items():  # interleaved: the CPU speed drifts
                _remove_outputs(folder, source)
                runs[name].append(measure(command, checkouts[name]))
        print(f"machine: {platform.processor() or platform.machine()}, {_cpu_count()} cores, python "
              f"{platform.python_version()}; file: {args.rows} rows, {size_mb:.0f} MB; {args.repeats} repeats")
        raw = statistics.median(r["seconds"] for r in runs["polars.read_csv"])
        raw_cpu = statistics.median(r["cpu_seconds"] for r in runs["polars.read_csv"])
        for name, figures in runs.items():
            seconds = statistics.median(r["seconds"] for r in figures)
            cpu = statistics.median(r["cpu_seconds"] for r in figures)
            rss = statistics.median(r["peak_rss_mb"] for r in figures)
            print(f"{name:20s} wall {seconds:6.2f} s ({seconds / raw:4.2f}x raw read)  "
                  f"CPU {cpu:6.2f} s ({cpu / raw_cpu:4.2f}x)  peak RSS {rss:6.0f} MB ({rss / size_mb:4.2f}x file size)")
        # Each round ran the commands one after the other, so a ratio within a round compares them under the same load.
        for name, figures in runs.items():
            if name == "polars.read_csv":
                continue
            pairs = list(zip(figures, runs["polars.read_csv"], strict=True))
            walls = _spread(r["seconds"] / raw_run["seconds"] for r, raw_run in pairs)
            cpus = _spread(r["cpu_seconds"] / raw_run["cpu_seconds"] for r, raw_run in pairs)
            rss_ratios = _spread(r["peak_rss_mb"] / size_mb for r in figures)
            print(f"{name:20s} per round vs the raw read (min / median / max): wall {walls}, CPU {cpus}; "
                  f"peak RSS vs file size {rss_ratios}")
    return 0


def _remove_outputs(folder: Path, source: Path) -> None:
    """Delete what the commands before wrote. Replacing a 425 MB file costs the writer the old file's release
    (on this box's ext4, mounted with ``discard``, 0.3-1.0 s, every other run): a cost of the file system and of
    the order the commands run in, not of the command measured."""
    for path in folder.iterdir():
        if path != source:
            path.unlink()
    os.sync()  # and the writes before flushed: each command starts with nothing of another's left to write


def _spread(values: Iterable[float]) -> str:
    ordered = sorted(values)
    return f"{ordered[0]:.2f} / {statistics.median(ordered):.2f} / {ordered[-1]:.2f}x"


def _cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


if __name__ == "__main__":
    raise SystemExit(main())
