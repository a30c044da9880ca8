"""Cost per row of SEED-Bench-2 level 3 on the tiny random models (CPU): picture generation and CLIP comparison.

- ``diffusers``: seconds per row of the tiny Stable Diffusion pipeline (2 denoising steps, 64x64), one prompt per
  call against four per call, interleaved;
- ``clip``: seconds per row of :class:`~mmbatch.extract.clip_ranking.ClipRanker` when every row's four option
  pictures are new (five pictures embedded) against when they are cached (one picture embedded), interleaved.

Tiny models say what the pipeline itself costs around the model, not what a real model costs: a real pipeline's
time is its denoising steps. Usage: python bench/bench_level3.py [--rows 8] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mmbatch.backends.base import Request  # noqa: E402
from tests.support.seed_level3 import draw_image  # noqa: E402
from tests.support.tiny_clip import tiny_clip  # noqa: E402
from tests.support.tiny_diffusion import tiny_stable_diffusion  # noqa: E402


def diffusers_seconds_per_row(backend: object, rows: int, batch_size: int) -> float:
    backend.options = replace(backend.options, batch_size=batch_size)  # type: ignore[attr-defined]
    requests = [Request(index=i, prompt=f"a green square number {i}") for i in range(rows)]
    started = time.perf_counter()
    for _ in backend.generate_images(requests):  # type: ignore[attr-defined]
        pass
    return (time.perf_counter() - started) / rows


def clip_seconds_per_row(folder: Path, rows: int, cached: bool) -> float:
    from mmbatch.extract.clip_ranking import ClipRanker

    ranker = ClipRanker(str(tiny_clip()), batch_size=16, device="cpu")
    options = [folder / f"option-{k}.png" for k in range(4)]
    if cached:
        ranker.embed(options)
    started = time.perf_counter()
    for row in range(rows):
        own = options if cached else [folder / f"row{row}-option-{k}.png" for k in range(4)]
        ranker.similarities(folder / f"generated-{row}.png", own)
    return (time.perf_counter() - started) / rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from mmbatch.backends.diffusers_images import DiffusersBackend, DiffusersOptions

    backend = DiffusersBackend(DiffusersOptions(model=str(tiny_stable_diffusion()), device="cpu", dtype="float32",
                                              image_steps=2, image_size="64x64"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for seed, name in enumerate([f"option-{k}.png" for k in range(4)] + [f"generated-{r}.png" for r in
                                    range(args.rows)] + [f"row{r}-option-{k}.png" for r in range(args.rows)
                                                         for k in range(4)]):
            draw_image(folder / name, seed)
        times: dict[str, list[float]] = {"diffusers batch 1": [], "diffusers batch 4": [], "clip new options": [],
                                         "clip cached options": []}
        diffusers_seconds_per_row(backend, 2, 2)  # warm-up
        for _ in range(args.repeats):
            times["diffusers batch 1"].append(diffusers_seconds_per_row(backend, args.rows, 1))
            times["diffusers batch 4"].append(diffusers_seconds_per_row(backend, args.rows, 4))
            times["clip new options"].append(clip_seconds_per_row(folder, args.rows, cached=False))
            times["clip cached options"].append(clip_seconds_per_row(folder, args.rows, cached=True))
    for name, values in times.items():
        print(f"{name:22s} median {statistics.median(values) * 1000:8.1f} ms/row  (runs: "
              + ", ".join(f"{v * 1000:.1f}" for v in values) + ")")
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"diffusers batch 4 against batch 1: {median['diffusers batch 1'] / median['diffusers batch 4']:.2f}x")
    print(f"clip cached against new options:   {median['clip new options'] / median['clip cached options']:.2f}x")


if __name__ == "__main__":
    main()
