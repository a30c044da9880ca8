"""Benchmark of the hf backend: shared-prefix option scoring vs one pass per option, and batched generation.

Uses a random-weight LLaVA of realistic shape (CLIP-like vision tower at 336 px / patch 14 = 576 image tokens,
Llama-like text model of width 512 and 8 layers, 32K vocabulary), built in memory. The compared methods are
interleaved row by row and repeated, and medians and ratios are reported, because this machine's CPU speed drifts.

Usage: ``python bench/bench_infer.py [--quick] [--threads N] [--shape cpu|llava-7b --device cuda --dtype bfloat16]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.support.tiny_models import LlavaShape, build_llava  # noqa: E402

SHAPES = {
    "cpu": LlavaShape(image_size=336, patch_size=14, vision_hidden=256, vision_layers=4, vision_heads=4,
                      text_hidden=512, text_intermediate=1376, text_layers=8, text_heads=8, text_kv_heads=8,
                      vocab_size=32000, weight_scale=0.02),
    "llava-7b": LlavaShape(image_size=336, patch_size=14, vision_hidden=1024, vision_layers=24, vision_heads=16,
                           text_hidden=4096, text_intermediate=11008, text_layers=32, text_heads=32,
                           text_kv_heads=32, vocab_size=32064, weight_scale=0.02),
}
"""Model shapes: ``cpu`` for this machine, ``llava-7b`` (LLaVA-1.5-7B's) for a GPU."""

QUESTIONS = [
    ("What is the man in the picture holding in his hands?",
     ["a red umbrella over his head", "a small brown dog on a leash", "a cup of hot coffee and a newspaper",
      "nothing, his hands are empty"]),
    ("Where is the bicycle parked in this image?",
     ["next to the green tree in the park", "in front of the old house", "on the street near a blue car",
      "inside a garage with the door open"]),
    ("How many apples are on the wooden table?",
     ["three apples and two oranges", "one green apple", "there are ten red apples on it", "no apples at all"]),
    ("What is the weather like in the scene shown?",
     ["sunny with a clear blue sky", "it is raining and the street is wet", "snow is falling on the trees",
      "a thick fog covers everything"]),
]
"""SEED-style questions with four option texts of 7-15 tokens."""


def make_image(seed: int, size: tuple[int, int] = (400, 300)):
    """A noise image (a real photo would cost the same: the processor resizes it to 336 px)."""
    import numpy as np
    from PIL import Image

    pixels = np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    return Image.fromarray(pixels)


def likelihood_rows(count: int, letters: bool = False):
    """``count`` rows of the seed-likelihood kind (``Question: ...\\nAnswer:``), each with its own image."""
    from mmbatch.backends.base import Request

    rows = []
    for number in range(count):
        question, options = QUESTIONS[number % len(QUESTIONS)]
        prompt = f"Question: {question}\nAnswer:"
        if letters:
            listed = "".join(f"\n{letter}. {text}" for letter, text in zip("ABCD", options, strict=True))
            prompt = f"{question}{listed}\nAnswer with the option's letter from the given choices directly."
            options = list("ABCD")
        rows.append(Request(index=number, prompt=prompt, images=[make_image(number)], options=list(options)))
    return rows


def naive_scores(loaded, request):
    """One full pass over image + prompt + option per option (how the SEED-Bench and lmms-eval code score)."""
    from mmbatch.backends.hf.boundaries import split_continuation
    from mmbatch.backends.hf.likelihood import score_full_sequence
    from mmbatch.backends.hf.messages import chat_text

    context = chat_text(loaded.processor, request)
    return [
        score_full_sequence(loaded, split_continuation(loaded.processor.tokenizer, context, option), request.images)
        for option in request.options
    ]


def timed(function, *args):
    """``(seconds, result)`` of one call."""
    started = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - started, result


class ForwardCounter:
    """Counts the model's forward passes (a hook on its top module)."""

    def __init__(self, model) -> None:
        """Start counting ``model``'s forward calls."""
        self.calls = 0
        self.handle = model.register_forward_pre_hook(self._count)

    def _count(self, *_) -> None:
        self.calls += 1

    def take(self) -> int:
        """The calls since the last ``take``."""
        calls, self.calls = self.calls, 0
        return calls


def bench_likelihood(loaded, rows, letters: bool) -> None:
    """Shared prefix vs naive on the same rows, in the order shared, naive, naive, shared for every row.

    The CPU is shared with other processes, which only ever add time: each method's time for a row is the minimum of
    its two runs, and the speed-up is the ratio of the summed minimums (the median of the per-row ratios is printed
    too).
    """
    from mmbatch.backends.hf.likelihood import score_options

    methods = {"shared": score_options, "naive": naive_scores}
    best: dict[str, list[float]] = {"shared": [], "naive": []}
    passes: dict[str, set[int]] = {"shared": set(), "naive": set()}
    max_diff = 0.0
    counter = ForwardCounter(loaded.model)
    for request in rows:
        runs: dict[str, list[float]] = {"shared": [], "naive": []}
        scores = {}
        for name in ("shared", "naive", "naive", "shared"):
            counter.take()
            seconds, result = timed(methods[name], loaded, request)
            passes[name].add(counter.take())
            runs[name].append(seconds)
            scores[name] = [score.logprob for score in result]
        for name in runs:
            best[name].append(min(runs[name]))
        max_diff = max(max_diff, *(abs(a - b) for a, b in zip(scores["shared"], scores["naive"], strict=True)))
    counter.handle.remove()
    kind = "letters A-D" if letters else "4 option texts"
    shared, naive = sum(best["shared"]) / len(rows), sum(best["naive"]) / len(rows)
    ratios = sorted(round(n / s, 2) for s, n in zip(best["shared"], best["naive"], strict=True))
    print(f"likelihood ({kind}, {len(rows)} rows, prompt {prompt_tokens(loaded, rows[0])} tokens):")
    print(f"  shared prefix {shared:.3f} s/question ({1 / shared:.2f} q/s), forward passes per row {passes['shared']}")
    print(f"  naive         {naive:.3f} s/question ({1 / naive:.2f} q/s), forward passes per row {passes['naive']}")
    print(f"  speed-up {naive / shared:.2f}x; per-row ratios {ratios} (median {statistics.median(ratios):.2f}x)")
    print(f"  max |log-prob difference| {max_diff:.2e}")


def bench_row_batching(loaded, rows, batch_size: int) -> None:
    """The backend's likelihood path with ``batch_size`` rows per prompt pass vs one row per pass (ABBA, best of 2)."""
    from mmbatch.backends.hf.backend import HFBackend
    from mmbatch.backends.hf.options import HfOptions

    def run(size: int):
        backend = HFBackend(HfOptions(model="bench", batch_size=size), loaded)
        backend.rows_per_prompt_pass = size  # what a GPU gets; a CPU backend defaults to 1
        return [result for batch in backend.loglikelihood(rows) for result in batch]

    times: dict[int, list[float]] = {1: [], batch_size: []}
    scores: dict[int, list] = {}
    for size in (batch_size, 1, 1, batch_size):
        seconds, results = timed(run, size)
        times[size].append(seconds)
        scores[size] = [value for result in results for value in result.choice_logprobs]
    single, batched = min(times[1]), min(times[batch_size])
    max_diff = max(abs(a - b) for a, b in zip(scores[1], scores[batch_size], strict=True))
    print(f"likelihood through the backend ({len(rows)} rows, 4 option texts):")
    print(f"  1 row per prompt pass    {len(rows) / single:.2f} q/s")
    print(f"  {batch_size} rows per prompt pass   {len(rows) / batched:.2f} q/s")
    print(f"  ratio {single / batched:.2f}x; max |log-prob difference| {max_diff:.2e}")


def prompt_tokens(loaded, request) -> int:
    """Tokens of the row's prompt as the model sees it (image tokens included)."""
    from mmbatch.backends.hf.messages import chat_text, encode

    inputs = encode(loaded.processor, [chat_text(loaded.processor, request)], [request.images], loaded.device,
                    loaded.dtype)
    return int(inputs["input_ids"].shape[1])


def bench_generation(loaded, rows, batch_size: int, repeats: int, max_new_tokens: int) -> None:
    """Batch ``batch_size`` vs batch 1 on the same rows, alternating which goes first.

    Minimum and median times over the repeats are both printed (contention on a shared CPU only adds time).
    """
    from mmbatch.backends.hf.backend import HFBackend
    from mmbatch.backends.hf.options import HfOptions

    def run(size: int):
        backend = HFBackend(HfOptions(model="bench", batch_size=size), loaded)
        return [result for batch in backend.generate(rows, max_new_tokens=max_new_tokens) for result in batch]

    times: dict[int, list[float]] = {1: [], batch_size: []}
    outputs: dict[int, list[str | None]] = {}
    for repeat in range(repeats):
        for size in (1, batch_size) if repeat % 2 == 0 else (batch_size, 1):
            seconds, results = timed(run, size)
            times[size].append(seconds)
            outputs[size] = [result.prediction for result in results]
            tokens = sum(result.output_tokens or 0 for result in results)
    single, batched = min(times[1]), min(times[batch_size])
    print(f"generation ({len(rows)} rows, {max_new_tokens} new tokens, {repeats} repeats, {tokens} tokens/run):")
    print(f"  batch 1   {single:.2f} s ({len(rows) / single:.2f} rows/s) best; runs {[round(t, 1) for t in times[1]]}")
    print(f"  batch {batch_size:<3} {batched:.2f} s ({len(rows) / batched:.2f} rows/s) best; "
          f"runs {[round(t, 1) for t in times[batch_size]]}")
    median_ratio = statistics.median(times[1]) / statistics.median(times[batch_size])
    print(f"  throughput ratio {single / batched:.2f}x (best runs), {median_ratio:.2f}x (medians); "
          f"identical outputs: {outputs[1] == outputs[batch_size]}")


def main() -> None:
    """Build the model, run both benchmarks and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rows and repeats")
    parser.add_argument("--only", choices=["likelihood", "rows", "generation"], default=None,
                        help="run one part only")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="cpu")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", choices=["float32", "bfloat16", "float16"], default="float32")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads (default 1: on a shared CPU, spinning worker threads slow torch down)")
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()

    import torch

    from mmbatch.backends.hf.loading import LoadedModel

    torch.set_num_threads(args.threads)
    dtype = getattr(torch, args.dtype)
    device = torch.device(args.device)
    started = time.perf_counter()
    with device:
        model, processor = build_llava(SHAPES[args.shape], dtype=dtype)
    loaded = LoadedModel(model=model, processor=processor, device=device, dtype=dtype, revision=None)
    parameters = sum(parameter.numel() for parameter in model.parameters()) / 1e6
    print(f"model: random-weight LLaVA, shape {args.shape} ({parameters:.0f}M parameters), {args.dtype} on "
          f"{device}, {torch.get_num_threads()} CPU threads; built in {time.perf_counter() - started:.1f} s")
    with torch.inference_mode():
        if args.only in (None, "likelihood"):
            bench_likelihood(loaded, likelihood_rows(3 if args.quick else 6), letters=False)
            bench_likelihood(loaded, likelihood_rows(2 if args.quick else 4, letters=True), letters=True)
        if args.only in (None, "rows"):
            bench_row_batching(loaded, likelihood_rows(args.batch_size), batch_size=args.batch_size)
    if args.only in (None, "generation"):
        # MMBench-style rows: the options are listed in the prompt and the model answers with a letter.
        bench_generation(loaded, likelihood_rows(args.batch_size, letters=True), args.batch_size,
                         repeats=2 if args.quick else 3, max_new_tokens=8 if args.quick else 16)


if __name__ == "__main__":
    main()
