"""Benchmark of ``infer --executor ray`` against the local executor: rows/s, fixed and per-row overhead.

One local Ray cluster (every address on 127.0.0.1) is started once and serves every Ray run, as a lab's standing
cluster would; each run still starts its own actor pool (the model is loaded in each actor), which is part of what a
run costs. Two workloads, the two executors interleaved and repeated, medians reported (this machine's CPU drifts):

- ``echo``: the stage's own work (an MMBench-like file with a 512x384 JPEG per question, its circular copies referring
  to it; one result per row, like a server backend), at two sizes: the difference gives the cost per row, the rest is
  the fixed cost of a run (for Ray: joining the cluster, starting the actor and the decoding tasks);
- ``hf``: the tiny random-weight LLaVA of the tests, a model small enough that the executor's costs show.

On a GPU machine, the same script compares the two on a model of LLaVA-1.5-7B's shapes (random weights, saved and
loaded through the real code), with actors sharing the GPU so that one's host-side work overlaps another's forward
pass::

    python bench/bench_ray.py --workloads hf --hf-shape llava-7b --device cuda --dtype bfloat16 --hf-rows 2000 \\
        --batch-size 16 --actors 2 --gpus-per-actor 0.5 --cpus-per-actor 4 --decode-cpus 1 --cluster-cpus 16

Usage: ``python bench/bench_ray.py [--workloads echo hf] [--echo-rows 200 800] [--hf-rows 48] [--repeats 2]``
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))


def jpeg_base64(seed: int) -> str:
    """A 512x384 noise JPEG as base64 (decoding it costs what a photo of that size costs)."""
    import numpy as np
    from PIL import Image

    pixels = (np.random.default_rng(seed).random((384, 512, 3)) * 255).astype("uint8")
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="JPEG", quality=85)
    return base64.b64encode(buffer.getvalue()).decode()


def build_prepared(path: Path, rows: int) -> Path:
    """``rows`` rows in groups of 4 circular copies; each group's first row holds a JPEG, the others refer to it."""
    import polars as pl

    from tests.support.prepared_files import prepared_frame, write_prepared

    frame = prepared_frame(max(rows // 4, 1), copies=4).head(rows)
    images = {index: jpeg_base64(index) for index in frame.filter(pl.col("index") < 1_000_000)["index"].to_list()}
    frame = frame.with_columns(pl.Series("image", [images.get(index, cell) for index, cell in
                                                   zip(frame["index"], frame["image"], strict=True)]))
    return write_prepared(path, frame)


def start_cluster(cpus: int, gpus: int) -> str:
    """A local Ray cluster on 127.0.0.1 joined by this process; its temporary folder."""
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # read when ray is imported: loopback addresses only
    import ray

    temp_dir = tempfile.mkdtemp(prefix="mmbatch-bench-ray-", dir="/tmp")
    ray.init(num_cpus=cpus, num_gpus=gpus, include_dashboard=False, _temp_dir=temp_dir, configure_logging=False)
    return temp_dir


def timed_run(args: list[str]) -> float:
    """Wall seconds of one ``mmbatch infer`` run in this process (a failed run stops the benchmark)."""
    from mmbatch.cli import main

    start = time.perf_counter()
    status = main(args)
    elapsed = time.perf_counter() - start
    if status not in (0, 3):
        raise SystemExit(f"infer exited {status}: {' '.join(args)}")
    return elapsed


def build_model(folder: Path, shape_name: str) -> Path:
    """The tiny test LLaVA (``tiny``) or a random-weight model of LLaVA-1.5-7B's shapes (``llava-7b``), saved."""
    if shape_name == "tiny":
        from tests.support.tiny_models import build_cached

        return build_cached("llava", folder / "tiny-llava")
    from tests.support.tiny_models import LlavaShape, build_llava

    shape = LlavaShape(image_size=336, patch_size=14, vision_hidden=1024, vision_layers=24, vision_heads=16,
                       text_hidden=4096, text_intermediate=11008, text_layers=32, text_heads=32, text_kv_heads=32,
                       vocab_size=32064, weight_scale=0.02)
    model, processor = build_llava(shape)
    target = folder / "llava-7b-shape"
    model.save_pretrained(target)
    processor.save_pretrained(target)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", nargs="+", choices=("echo", "hf"), default=["echo", "hf"])
    parser.add_argument("--echo-rows", nargs=2, type=int, default=[200, 800], metavar=("SMALL", "LARGE"))
    parser.add_argument("--hf-rows", type=int, default=48)
    parser.add_argument("--hf-shape", choices=("tiny", "llava-7b"), default="tiny")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--max-new-tokens", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--actors", type=int, default=1)
    parser.add_argument("--gpus-per-actor", type=float, default=None)
    parser.add_argument("--cpus-per-actor", type=float, default=1.0)
    parser.add_argument("--decode-cpus", type=float, default=0.5)
    parser.add_argument("--cluster-cpus", type=int, default=2)
    parser.add_argument("--cluster-gpus", type=int, default=None, help="default: what torch sees")
    options = parser.parse_args()

    import torch

    gpus = options.cluster_gpus if options.cluster_gpus is not None else torch.cuda.device_count()
    work = Path(tempfile.mkdtemp(prefix="mmbatch-bench-ray-work-"))
    ray_temp = start_cluster(options.cluster_cpus, gpus)
    ray_flags = ["--executor", "ray", "--ray-actors", str(options.actors), "--ray-cpus-per-actor",
                 str(options.cpus_per_actor), "--ray-decode-cpus", str(options.decode_cpus),
                 *(["--ray-gpus-per-actor", str(options.gpus_per_actor)] if options.gpus_per_actor is not None
                   else [])]
    # The local executor gets the threads an actor gets, so both run the model the same way.
    torch.set_num_threads(max(int(options.cpus_per_actor), 1))
    try:
        if "echo" in options.workloads:
            echo(work, options, ray_flags)
        if "hf" in options.workloads:
            hf(work, options, ray_flags)
    finally:
        import ray

        ray.shutdown()
        shutil.rmtree(ray_temp, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    return 0


def echo(work: Path, options: argparse.Namespace, ray_flags: list[str]) -> None:
    """Both executors over two sizes of file with the echo backend; the per-row slope and the fixed cost."""
    medians: dict[tuple[str, int], float] = {}
    for rows in options.echo_rows:
        prepared = build_prepared(work / f"echo-{rows}.parquet", rows)
        times: dict[str, list[float]] = {"local": [], "ray": []}
        for repeat in range(options.repeats):
            for executor in ("local", "ray"):
                output = work / f"echo-{rows}-{executor}-{repeat}.parquet"
                args = ["infer", "--input", str(prepared), "--output", str(output), "--backend", "echo",
                        "--model", "answer", *(ray_flags if executor == "ray" else [])]
                times[executor].append(timed_run(args))
        for executor, values in times.items():
            medians[executor, rows] = statistics.median(values)
            print(f"echo {rows} rows, {executor}: " + ", ".join(f"{value:.1f} s" for value in values)
                  + f" (median {medians[executor, rows]:.1f} s, {rows / medians[executor, rows]:.1f} rows/s)")
    small, large = options.echo_rows
    for executor in ("local", "ray"):
        per_row = (medians[executor, large] - medians[executor, small]) / (large - small)
        fixed = medians[executor, small] - per_row * small
        print(f"echo, {executor}: {per_row * 1000:.1f} ms per row, {fixed:.1f} s fixed per run")


def hf(work: Path, options: argparse.Namespace, ray_flags: list[str]) -> None:
    """Both executors on the same file with an hf model; medians and the Ray/local ratio."""
    model = build_model(work, options.hf_shape)
    prepared = build_prepared(work / "hf.parquet", options.hf_rows)
    times: dict[str, list[float]] = {"local": [], "ray": []}
    for repeat in range(options.repeats):
        for executor in ("local", "ray"):
            output = work / f"hf-{executor}-{repeat}.parquet"
            args = ["infer", "--input", str(prepared), "--output", str(output), "--backend", "hf", "--model",
                    str(model), "--device", options.device, "--dtype", options.dtype, "--batch-size",
                    str(options.batch_size), "--max-new-tokens", str(options.max_new_tokens),
                    *(ray_flags if executor == "ray" else [])]
            times[executor].append(timed_run(args))
    local, on_ray = statistics.median(times["local"]), statistics.median(times["ray"])
    for executor, values in times.items():
        median = statistics.median(values)
        print(f"hf {options.hf_shape} {options.hf_rows} rows, {executor}: "
              + ", ".join(f"{value:.1f} s" for value in values)
              + f" (median {median:.1f} s, {options.hf_rows / median:.2f} rows/s)")
    print(f"hf: Ray / local wall {on_ray / local:.2f}x, {(on_ray - local) / options.hf_rows * 1000:.0f} ms per row "
          "more (fixed costs included)")


if __name__ == "__main__":
    raise SystemExit(main())
