"""vLLM and ``hf`` on the same tiny family models, with the same ``transformers``: the answers and option scores of
every family both backends run must be the same (greedy answers and token counts equal, option log-probs within 1e-4
in float32), and every family vLLM cannot run faithfully is refused at start with the reason (docs/models.md).

The models are the matrix's families built with text heads of 32 dimensions (``family_model(name, vllm=True)``:
vLLM's CPU attention takes no smaller head) and CLIP/SigLIP towers saved under their published weight names. vLLM runs
in its own virtualenv (``make vllm-env``, which installs the ``transformers`` that constraints.txt pins over vLLM's
older one): one subprocess runs every family through mmbatch's ``vllm`` backend
(``tests/support/vllm_families.py``), and this process runs them through the ``hf`` backend. The families whose
processors need torchvision are built, and run through ``hf``, by one subprocess in the torchvision test environment
(``tests/support/hf_families.py``), before vLLM's.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mmbatch.backends.hf import create_backend
from mmbatch.backends.hf.options import HfOptions
from tests.support import single_torch_thread
from tests.support.families import family_model
from tests.support.family_rows import family_rows
from tests.test_infer_vllm import INSTALLED_MARKER, VLLM_PYTHON
from tests.test_torchvision_families import TORCHVISION_VENV

COMPARED = ("Qwen2-VL", "Qwen2.5-VL", "Qwen3-VL", "LLaVA-NeXT", "VipLLaVA", "LLaVA-OneVision", "SmolVLM", "InternVL",
            "Idefics3", "Mistral3", "GLM-4V")
"""Families both backends run (LLaVA-1.5: tests/test_infer_vllm.py)."""
TORCHVISION_COMPARED = ("Llama 4",)
"""Families both backends run whose processors need torchvision (their hf side runs in its test environment)."""
SEVERAL_IMAGES_REFUSED = {"LLaVA-OneVision": "encodes the several images of a LLaVA-OneVision prompt otherwise"}
"""Families whose rows with several images the vllm backend fails, with the reason (their one-image rows agree)."""
REFUSED = {
    "Qwen3.5": "in bfloat16 only",
    "Gemma 3": "reads the image tokens",
    "PaliGemma": "reads the image tokens",
    "Gemma 4": "'Gemma4VisionConfig' object has no attribute 'default_output_length'",
    "GLM-4.5V": "'Glm4vMoeTextConfig' object has no attribute 'use_qk_norm'",
    "Qwen3-VL-MoE": "'Qwen3VLMoeTextConfig' object has no attribute 'norm_topk_prob'",
}
TORCHVISION_REFUSED = {
    "Cohere2-Vision": "up to 2.57 nats from those of transformers",
    "LFM2-VL": "'Lfm2Config' object has no attribute 'conv_dim'",
    "Molmo2": "'Molmo2Config' object has no attribute 'image_col_id'",
    "Kimi-K2.5": "expert parallel group is not initialized",
    "MiniCPM-V 4.6": "in bfloat16 only",
    "MiniCPM-V 4.7": "in bfloat16 only",
    "MiniCPM-OCR": "in bfloat16 only",
    "Phi-4-multimodal": "as a text-only model",
}
"""Families the vllm backend refuses at start (exit 2), and the words of the reason."""
MAX_NEW_TOKENS = 6
LOGPROB_TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def vllm_results(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], dict[str, Any]]:
    """Every family's model folder, and what the vllm backend made of it."""
    if not INSTALLED_MARKER.exists():
        pytest.skip("the vLLM venv is missing: `make vllm-env` (which `make test` runs) creates it")
    models = {name: str(family_model(name, vllm=True)) for name in (*COMPARED, *REFUSED)}
    folder = tmp_path_factory.mktemp("vllm-families")
    spec, results = folder / "spec.json", folder / "results.json"
    hf_results: dict[str, Any] = {}
    if (TORCHVISION_VENV / "installed").exists():
        hf_spec, hf_out = folder / "hf-spec.json", folder / "hf-results.json"
        hf_spec.write_text(json.dumps({"build": [*TORCHVISION_COMPARED, *TORCHVISION_REFUSED],
                                       "compare": list(TORCHVISION_COMPARED), "max_new_tokens": MAX_NEW_TOKENS}))
        built = subprocess.run([str(TORCHVISION_VENV / "bin" / "python"), "tests/support/hf_families.py",
                                str(hf_spec), str(hf_out)], capture_output=True, text=True, timeout=600,
                               env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
                                    "HF_HUB_OFFLINE": "1"},
                               cwd=Path(__file__).resolve().parents[1])
        assert built.returncode == 0, built.stderr[-4000:]
        torchvision_side = json.loads(hf_out.read_text())
        models.update(torchvision_side["models"])
        hf_results = torchvision_side["results"]
    spec.write_text(json.dumps({"models": models, "max_new_tokens": MAX_NEW_TOKENS, "likelihood": list(models)}))
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env.update(VLLM_ENABLE_V1_MULTIPROCESSING="0", TORCHDYNAMO_DISABLE="1", HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", VLLM_LOGGING_LEVEL="ERROR")
    run = subprocess.run([str(VLLM_PYTHON), "tests/support/vllm_families.py", str(spec), str(results)],
                         capture_output=True, text=True, env=env, cwd=Path(__file__).resolve().parents[1],
                         timeout=900)
    assert run.returncode == 0, run.stderr[-4000:]
    return models, {**json.loads(results.read_text()), "hf": hf_results}


@pytest.mark.slow
@pytest.mark.parametrize("family", COMPARED)
def test_vllm_gives_the_hf_answers_and_option_scores(vllm_results, family: str) -> None:
    import transformers

    models, results = vllm_results
    theirs = results[family]
    assert "answers" in theirs, theirs
    assert theirs["settings"]["transformers"] == transformers.__version__, "the same transformers on both sides"
    with single_torch_thread():
        backend = create_backend(HfOptions(model=models[family], dtype="float32", device="cpu", batch_size=4))
        generated = sorted((r for chunk in backend.generate(family_rows(), max_new_tokens=MAX_NEW_TOKENS)
                            for r in chunk), key=lambda r: r.index)
        scored = sorted((r for chunk in backend.loglikelihood(family_rows()) for r in chunk), key=lambda r: r.index)
        backend.close()
    rows = range(len(generated))
    if family in SEVERAL_IMAGES_REFUSED:
        rows = range(len(generated) - 1)  # the last row has two images
        for errors in (theirs["errors"], theirs["likelihood_errors"]):
            assert SEVERAL_IMAGES_REFUSED[family] in (errors[-1] or "")
    assert [theirs["errors"][row] for row in rows] == [None] * len(rows)
    assert [theirs["answers"][row] for row in rows] == [generated[row].prediction for row in rows]
    assert [theirs["tokens"][row] for row in rows] == [generated[row].output_tokens for row in rows]
    assert len({generated[row].prediction for row in rows}) >= 2, "answers this alike would make the test weak"
    for row in rows:
        assert theirs["likelihood_errors"][row] is None
        assert theirs["logprobs"][row] == pytest.approx(scored[row].choice_logprobs, abs=LOGPROB_TOLERANCE)


@pytest.mark.slow
@pytest.mark.parametrize("family", TORCHVISION_COMPARED)
def test_vllm_gives_the_hf_answers_and_option_scores_on_the_torchvision_families(vllm_results, family: str) -> None:
    import transformers

    _, results = vllm_results
    if family not in results["hf"]:
        pytest.skip("the torchvision test environment is missing: `make torchvision-env` (which `make test` runs)")
    theirs, ours = results[family], results["hf"][family]
    assert "answers" in theirs, theirs
    assert theirs["settings"]["transformers"] == transformers.__version__, "the same transformers on both sides"
    assert theirs["errors"] == ours["errors"] == [None] * len(ours["answers"])
    assert theirs["answers"] == ours["answers"]
    assert theirs["tokens"] == ours["tokens"]
    assert len(set(ours["answers"])) >= 2, "answers this alike would make the test weak"
    assert theirs["likelihood_errors"] == ours["likelihood_errors"] == [None] * len(ours["answers"])
    for row, scores in enumerate(ours["logprobs"]):
        assert theirs["logprobs"][row] == pytest.approx(scores, abs=LOGPROB_TOLERANCE)


@pytest.mark.slow
@pytest.mark.parametrize(("family", "reason"), REFUSED.items())
def test_families_vllm_cannot_run_faithfully_are_refused_with_the_reason(vllm_results, family: str,
                                                                           reason: str) -> None:
    _, results = vllm_results
    assert reason in results[family].get("refused", ""), results[family]


@pytest.mark.slow
@pytest.mark.parametrize(("family", "reason"), TORCHVISION_REFUSED.items())
def test_torchvision_families_vllm_cannot_run_faithfully_are_refused_with_the_reason(vllm_results, family: str,
                                                                                     reason: str) -> None:
    _, results = vllm_results
    if family not in results:
        pytest.skip("the torchvision test environment is missing: `make torchvision-env` (which `make test` runs)")
    assert reason in results[family].get("refused", ""), results[family]
