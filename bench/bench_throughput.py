"""Throughput figures: group prefix sharing (a, b), the vllm backend (c), likelihood through a server (d).

(a) MMBench-style generation, 4 circular copies per question, shared vs unshared group prefix (hf backend);
(b) MME-style pairs (two questions per image), shared vs unshared; (c) the ``vllm`` backend vs ``hf`` for generation
and likelihood; (d) likelihood rows through the test log-prob server (``openai`` backend) vs ``hf`` in-process.

The model is a random-weight LLaVA of realistic shape (576 image tokens, 8-layer text model of width 512, attention
heads of 64 dimensions, which vLLM's CPU attention takes), saved once under ``.cache/bench-models`` and loaded by
every method through its normal loading path. The compared methods alternate round by round (which goes first
alternates too), because this machine's CPU speed drifts; each figure is min / median / max over the rounds, and
ratios are per round (same load for both methods), with their min / median / max.

(c) needs vLLM: when it is not importable here, the script runs part (c) with ``.cache/vllm-venv/bin/python``
(``make vllm-env``), where ``hf`` and ``vllm`` run in the same process on the same threads.

Usage: ``python bench/bench_throughput.py [--only a|c|d] [--rounds N]``; on a GPU:
``python bench/bench_throughput.py --only a --only c --device cuda --dtype bfloat16`` (with CUDA vLLM installed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(REPO_ROOT / "tests"))
sys.path.insert(0, str(REPO_ROOT / "bench"))

from bench_infer import SHAPES, likelihood_rows  # noqa: E402

MODEL_DIR = REPO_ROOT / ".cache" / "bench-models" / "llava-cpu-shape"
VLLM_PYTHON = REPO_ROOT / ".cache" / "vllm-venv" / "bin" / "python"
VLLM_CPU_ENGINE: dict[str, Any] = {"kv_cache_memory_bytes": 1 << 30, "enforce_eager": True, "max_model_len": 2048}
"""On the CPU build: a fixed KV cache (its gpu_memory_utilization is a share of host memory) and no compile step."""


def bench_model() -> Path:
    """The realistic-shape LLaVA on disk, with published weight names (built once)."""
    if (MODEL_DIR / "model.safetensors").is_file():
        return MODEL_DIR
    from support.tiny_models import build_llava, save_with_published_names

    model, processor = build_llava(SHAPES["cpu"])
    save_with_published_names(model, processor, MODEL_DIR)
    return MODEL_DIR


def spread(values: list[float]) -> str:
    """``min / median / max`` of ``values``."""
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def compare(name: str, methods: dict[str, Callable[[], Any]], rounds: int, rows: int) -> dict[str, list[Any]]:
    """Run the methods alternately for ``rounds`` rounds; print rows/s of each and the per-round ratio.

    Returns:
        Each method's outputs, round by round.
    """
    times: dict[str, list[float]] = {method: [] for method in methods}
    outputs: dict[str, list[Any]] = {method: [] for method in methods}
    order = list(methods)
    for round_number in range(rounds):
        for method in order if round_number % 2 == 0 else order[::-1]:
            started = time.perf_counter()
            outputs[method].append(methods[method]())
            times[method].append(time.perf_counter() - started)
    first, second = order
    print(f"{name} ({rows} rows, {rounds} rounds; rows/s min / median / max):")
    for method in order:
        print(f"  {method:<22} {spread([rows / seconds for seconds in times[method]])} rows/s")
    ratios = [slow / fast for slow, fast in zip(times[second], times[first], strict=True)]
    print(f"  {first} vs {second}: {spread(ratios)}x per round (min / median / max)")
    return outputs


def max_difference(ours: dict[int, list[float] | None], theirs: dict[int, list[float] | None]) -> float:
    """The largest |difference| between two methods' option log-probs (inf when a row failed in either)."""
    worst = 0.0
    for index, scores in theirs.items():
        other = ours.get(index)
        if scores is None or other is None or len(scores) != len(other):
            return float("inf")
        worst = max(worst, *(abs(a - b) for a, b in zip(other, scores, strict=True)))
    return worst


def generation_rows(count: int) -> list[Any]:
    """MMBench-style rows: options listed in the prompt, one image each."""
    return likelihood_rows(count, letters=True)


def circular_rows(questions: int) -> list[Any]:
    """MMBench-style rows: ``questions`` questions x 4 circular copies (options rotated), one image per question."""
    from bench_infer import QUESTIONS, make_image

    from mmbatch.backends.base import Request

    rows = []
    for number in range(questions):
        question, options = QUESTIONS[number % len(QUESTIONS)]
        image = make_image(number)
        for shift in range(4):
            rotated = options[shift:] + options[:shift]
            listed = "".join(f"\n{letter}. {text}" for letter, text in zip("ABCD", rotated, strict=True))
            prompt = f"{question}{listed}\nAnswer with the option's letter from the given choices directly."
            rows.append(Request(index=len(rows), prompt=prompt, images=[image], group=number))
    return rows


def pair_rows(pairs: int) -> list[Any]:
    """MME-style rows: two yes/no questions per image."""
    from bench_infer import make_image

    from mmbatch.backends.base import Request

    rows = []
    for number in range(pairs):
        image = make_image(100 + number)
        for question in ("Is there a man holding an umbrella in this image?", "Is the umbrella in the image red?"):
            rows.append(Request(index=len(rows), prompt=f"{question} Please answer yes or no.", images=[image],
                                group=number))
    return rows


def part_ab(args: argparse.Namespace) -> None:
    """Group prefix sharing in the hf backend vs the ordinary batched path, batch 8, greedy, 16 new tokens."""
    from mmbatch.backends.hf import create_backend as create_hf
    from mmbatch.backends.hf.generation import generate_batch
    from mmbatch.backends.hf.options import HfOptions

    backend = create_hf(HfOptions(model=str(bench_model()), dtype=args.dtype, device=args.device, batch_size=8))
    loaded = backend._model()
    for name, rows in (("(a) MMBench-style generation, 2 questions x 4 circular copies", circular_rows(2)),
                       ("(b) MME-style pairs, 4 images x 2 questions", pair_rows(4))):

        def shared(rows: list[Any] = rows) -> list[str | None]:
            return [r.prediction for batch in backend.generate(rows, max_new_tokens=16) for r in batch]

        def unshared(rows: list[Any] = rows) -> list[str | None]:
            return [r.prediction for r in generate_batch(loaded, rows, max_new_tokens=16, temperature=0.0)]

        outputs = compare(f"{name}, 16 new tokens, batch 8", {"shared prefix": shared, "unshared": unshared},
                          args.rounds, len(rows))
        print(f"  identical greedy outputs: {outputs['shared prefix'] == outputs['unshared']}; "
              f"{backend.sharing.line()}")
    backend.close()


def part_c(args: argparse.Namespace) -> None:
    """vllm vs hf on the same model: generation and likelihood, same process, alternating."""
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")
    from mmbatch.backends.hf import create_backend as create_hf
    from mmbatch.backends.hf.options import HfOptions
    from mmbatch.backends.vllm_engine import VllmOptions
    from mmbatch.backends.vllm_engine import create_backend as create_vllm

    model = str(bench_model())
    started = time.perf_counter()
    hf = create_hf(HfOptions(model=model, dtype=args.dtype, device=args.device, batch_size=8))
    hf_start = time.perf_counter() - started
    started = time.perf_counter()
    engine = dict(VLLM_CPU_ENGINE) if args.device == "cpu" else {}
    vllm_backend = create_vllm(VllmOptions(model=model, dtype=args.dtype, **engine))
    print(f"(c) vllm vs hf, {args.dtype} on {args.device}: model load {hf_start:.1f} s (hf), "
          f"{time.perf_counter() - started:.1f} s (vllm engine start)")
    rows = generation_rows(8)

    def generated(backend: Any) -> Callable[[], list[str | None]]:
        return lambda: [r.prediction for batch in backend.generate(rows, max_new_tokens=16) for r in batch]

    outputs = compare("  generation, 16 new tokens (hf batch 8)", {"vllm": generated(vllm_backend),
                                                                  "hf": generated(hf)}, args.rounds, len(rows))
    print(f"  identical greedy outputs: {outputs['vllm'][-1] == outputs['hf'][-1]}")
    scored_rows = likelihood_rows(6)

    def scored(backend: Any) -> Callable[[], dict[int, list[float] | None]]:
        return lambda: {r.index: r.choice_logprobs for batch in backend.loglikelihood(scored_rows) for r in batch}

    outputs = compare("  likelihood, 4 option texts", {"vllm": scored(vllm_backend), "hf": scored(hf)},
                      args.rounds, len(scored_rows))
    print(f"  max |log-prob difference| {max_difference(outputs['vllm'][-1], outputs['hf'][-1]):.2e}")
    vllm_backend.close()
    hf.close()


def part_d(args: argparse.Namespace) -> None:
    """Likelihood rows through the test log-prob server (openai backend) vs the hf backend in-process."""
    from support.logprob_model import ModelReplies
    from support.openai_server import OpenAIServer

    from mmbatch.backends.hf import create_backend as create_hf
    from mmbatch.backends.hf.options import HfOptions
    from mmbatch.backends.openai_chat import OpenAIOptions
    from mmbatch.backends.openai_chat import create_backend as create_openai

    model = bench_model()
    hf = create_hf(HfOptions(model=str(model), dtype="float32", device="cpu", batch_size=8))
    rows = likelihood_rows(4)
    with OpenAIServer(ModelReplies(model, "bench").script()) as server:
        client = create_openai(OpenAIOptions(model="bench", base_url=server.base_url, concurrency=4))
        print("(d) likelihood through the log-prob server (openai backend) vs in-process (hf), float32 on cpu; "
              "the test server runs one full pass per request (no prefix cache, unlike vLLM)")

        def scored(backend: Any) -> Callable[[], dict[int, list[float] | None]]:
            return lambda: {r.index: r.choice_logprobs for batch in backend.loglikelihood(rows) for r in batch}

        outputs = compare("  likelihood, 4 option texts", {"server": scored(client), "hf": scored(hf)},
                          args.rounds, len(rows))
        client.close()
    print(f"  max |log-prob difference| {max_difference(outputs['server'][-1], outputs['hf'][-1]):.2e}")
    hf.close()


def main() -> None:
    """Print the figures of the parts asked for."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["a", "c", "d"], action="append",
                        help="run these parts only, repeatable (a runs (a) and (b): one model load)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per comparison (default 3)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1, as bench_infer.py)")
    args = parser.parse_args()
    parts = args.only or ["a", "c", "d"]

    import torch

    torch.set_num_threads(args.threads)
    bench_model()
    if "a" in parts:
        part_ab(args)
    if "d" in parts:
        part_d(args)
    if "c" in parts:
        try:
            import vllm  # noqa: F401
        except ImportError:
            if not VLLM_PYTHON.is_file():
                print("(c) skipped: vLLM is not installed here and .cache/vllm-venv is missing (make vllm-env)")
                return
            command = [str(VLLM_PYTHON), __file__, "--only", "c", "--rounds", str(args.rounds), "--device",
                       args.device, "--dtype", args.dtype, "--threads", str(args.threads)]
            sys.exit(subprocess.run(command, cwd=REPO_ROOT, check=False).returncode)
        part_c(args)


if __name__ == "__main__":
    main()
