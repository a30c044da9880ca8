"""Option scoring on the architecture matrix's tiny models: the prompt's cache continued vs a full pass per option.

M-RoPE models (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, GLM-4V) continue the prompt's cache at the model's own positions
(``rope_deltas``) and Qwen3.5 its linear-attention state; before that, each option took a full forward pass. Both
paths run here on the same rows, interleaved round by round (the CPU speed drifts), with the scores compared.

    python bench/bench_family_likelihood.py [--rounds 3] [--families Qwen2-VL GLM-4V ...]

Models come from ``tests/support/families`` (built once into ``.cache/tiny-families``), torch on one thread.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

DEFAULT_FAMILIES = ("LLaVA-1.5", "Qwen2-VL", "Qwen2.5-VL", "Qwen3-VL", "GLM-4V", "Qwen3.5")
"""A plain-RoPE reference, the M-RoPE families and the linear-attention one."""
OPTIONS = ["a red square", "a blue circle", "a cat", "a green tree"]


def rows() -> list:
    """Four rows with one 200x200 picture each and four option texts."""
    from PIL import Image

    from mmbatch.backends.base import Request

    return [Request(index=n, prompt="What is shown in the image?" + " Look carefully." * n,
                    images=[Image.new("RGB", (200, 200), (50 * n, 120, 200 - 40 * n))], options=OPTIONS)
            for n in range(4)]


def seconds_per_row(loaded, requests, *, separately: bool) -> tuple[float, list[list[float]]]:
    """Wall seconds per row of ``score_request`` on ``requests``, and the scores."""
    from mmbatch.backends.hf.likelihood import score_request

    started = time.perf_counter()
    results = [score_request(loaded, request, separately=separately) for request in requests]
    elapsed = (time.perf_counter() - started) / len(requests)
    for result in results:
        if result.error:
            raise RuntimeError(result.error)
    return elapsed, [list(result.choice_logprobs or []) for result in results]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--families", nargs="+", default=list(DEFAULT_FAMILIES))
    args = parser.parse_args()

    import torch

    from mmbatch.backends.hf.cache_reuse import cache_reuse_blocker
    from mmbatch.backends.hf.loading import load_model
    from tests.support.families import family_model

    torch.set_num_threads(1)
    requests = rows()
    print("| family | cache continued (ms/row, min / median / max) | full pass per option (ms/row) | "
          "speed-up per round (min / median / max) | max score difference |")
    print("|---|---|---|---|---|")
    for name in args.families:
        loaded = load_model(str(family_model(name)), revision=None, dtype="float32", device="cpu")
        if cache_reuse_blocker(loaded.model) is not None:
            print(f"| {name} | - | - | full pass only: {cache_reuse_blocker(loaded.model)} | - |")
            continue
        seconds_per_row(loaded, requests[:1], separately=False)  # warm-up
        continued, separate, ratios, difference = [], [], [], 0.0
        for round_number in range(args.rounds):
            order = (False, True) if round_number % 2 == 0 else (True, False)
            timed = {}
            for separately in order:
                timed[separately] = seconds_per_row(loaded, requests, separately=separately)
            continued.append(timed[False][0] * 1000)
            separate.append(timed[True][0] * 1000)
            ratios.append(timed[True][0] / timed[False][0])
            pairs = zip(timed[False][1], timed[True][1], strict=True)
            difference = max(difference, *(abs(a - b) for fast, slow in pairs for a, b in zip(fast, slow, strict=True)))
        print(f"| {name} | {min(continued):.0f} / {statistics.median(continued):.0f} / {max(continued):.0f} | "
              f"{min(separate):.0f} / {statistics.median(separate):.0f} / {max(separate):.0f} | "
              f"{min(ratios):.2f} / {statistics.median(ratios):.2f} / {max(ratios):.2f}x | {difference:.1e} |",
              flush=True)


if __name__ == "__main__":
    main()
