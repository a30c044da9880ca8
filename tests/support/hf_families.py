"""The ``hf`` side of ``tests/test_vllm_families.py`` for the families that need torchvision: mmbatch's ``hf`` backend
on their tiny vLLM-variant models, run in the torchvision test environment (``make torchvision-env``), one model after
another in one process.

Usage: ``TORCHVISION_PYTHON tests/support/hf_families.py SPEC.json RESULTS.json``. ``SPEC.json`` holds ``{"build":
[family...], "compare": [family...], "max_new_tokens": N}``: the families whose vLLM-variant models to build (their
processors exist only in the torchvision build of ``transformers``) and those of them to run. ``RESULTS.json`` gets
``{"models": {family: folder}, "results": {family: ...}}``: per family run, the answers, token counts and errors of
:func:`family_rows` and their option log-probabilities and errors, in the rows' order.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout, run as a script

from tests.support import single_torch_thread
from tests.support.family_rows import family_rows


def run_family(folder: str, max_new_tokens: int) -> dict[str, Any]:
    """One family's answers and option scores through the hf backend, in float32 on the CPU."""
    from mmbatch.backends.hf import create_backend
    from mmbatch.backends.hf.options import HfOptions

    with single_torch_thread():
        backend = create_backend(HfOptions(model=folder, dtype="float32", device="cpu", batch_size=4))
        try:
            generated = sorted((result for chunk in backend.generate(family_rows(), max_new_tokens=max_new_tokens)
                                for result in chunk), key=lambda result: result.index)
            scored = sorted((result for chunk in backend.loglikelihood(family_rows()) for result in chunk),
                            key=lambda result: result.index)
        finally:
            backend.close()
    return {"answers": [result.prediction for result in generated],
            "tokens": [result.output_tokens for result in generated],
            "errors": [result.error for result in generated],
            "logprobs": [result.choice_logprobs for result in scored],
            "likelihood_errors": [result.error for result in scored]}


def main(argv: list[str]) -> int:
    """Run every family of the spec and write the results."""
    from tests.support.families import family_model

    spec = json.loads(Path(argv[1]).read_text())
    models = {name: str(family_model(name, vllm=True)) for name in spec["build"]}
    results = {name: run_family(models[name], spec["max_new_tokens"]) for name in spec["compare"]}
    Path(argv[2]).write_text(json.dumps({"models": models, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
