"""Phi-4-multimodal's vision LoRA adapter (``vision-lora/`` in its checkpoint) is applied by the ``hf`` backend, or the
run is refused before any row: never the base weights in silence.

The tiny Phi-4-multimodal of the matrix is saved with a small random adapter made by ``peft`` on the modules the
published adapter targets (the text model's fused QKV, output, gate-up and down projections). Through the real
loader, it must answer and score options as the same model with the adapter loaded by hand through ``transformers``'
documented calls (``load_adapter`` with ``subfolder``, ``set_adapter``), and not as the base weights. Its processor
needs torchvision, so those tests run in the torchvision environment (``make torchvision-env``), where
``tests/test_torchvision_families.py`` runs them with the matrix.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from mmbatch.backends.hf.modality_adapter import adapter_resume_settings
from tests.support.families import TORCHVISION_ONLY

TARGETS = r"model\.layers\.\d+\.((self_attn\.(qkv|o)_proj)|(mlp\.(gate_up|down)_proj))"
"""The published vision adapter's targets: every text layer's attention and MLP projections (not the towers')."""
IN_TORCHVISION_ENV = pytest.mark.skipif(not os.environ.get(TORCHVISION_ONLY),
                                        reason="runs in the torchvision environment (test_torchvision_families.py)")
ADAPTER_TESTS = 3
"""Tests of this file that need torchvision: tests/test_torchvision_families.py runs them in its environment."""


def checkpoint_files(directory: Path, *, adapter: bool) -> Path:
    """A checkpoint folder holding only what the resume settings read: its configuration, and the adapter's."""
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps({"model_type": "phi4_multimodal"}))
    if adapter:
        (directory / "vision-lora").mkdir()
        (directory / "vision-lora" / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA"}))
    return directory


def test_the_adapter_is_part_of_the_resume_settings(tmp_path) -> None:
    import peft

    with_adapter = checkpoint_files(tmp_path / "with", adapter=True)
    without = checkpoint_files(tmp_path / "without", adapter=False)
    assert adapter_resume_settings(str(with_adapter), None) == {
        "adapter": {"subfolder": "vision-lora", "peft": peft.__version__}}
    assert adapter_resume_settings(str(without), None) == {}
    assert adapter_resume_settings(str(tmp_path / "missing"), None) == {}  # loading says why


@pytest.fixture(scope="module")
def adapted(tmp_path_factory) -> Path:
    """The tiny Phi-4-multimodal with a random vision adapter saved in ``vision-lora/``, as the published one is."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from tests.support.families import family_model

    directory = tmp_path_factory.mktemp("phi4") / "model"
    shutil.copytree(family_model("Phi-4-multimodal"), directory)
    base = AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32)
    torch.manual_seed(1)
    # Random B as well as A (init_lora_weights=False): a fresh adapter would otherwise change nothing.
    config = LoraConfig(r=4, lora_alpha=8, target_modules=TARGETS, init_lora_weights=False)
    get_peft_model(base, config).save_pretrained(directory / "vision-lora")
    return directory


@pytest.fixture(scope="module")
def backend(adapted):
    from mmbatch.backends.hf import create_backend
    from mmbatch.backends.hf.options import HfOptions
    from tests.support import single_torch_thread

    with single_torch_thread():
        loaded = create_backend(HfOptions(model=str(adapted), dtype="float32", device="cpu", batch_size=1))
        yield loaded
        loaded.close()


def by_hand(directory: Path, *, adapter: bool):
    """The model as ``transformers`` documents loading it: base weights, then the vision adapter made active."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32).eval()
    if adapter:
        model.load_adapter(str(directory), adapter_name="vision", adapter_kwargs={"subfolder": "vision-lora"})
        model.set_adapter("vision")
    return model


def own_answers_and_scores(model, processor) -> tuple[list[str], list[list[float]]]:
    """Greedy answers on the model's own chat-template inputs, and each option's summed log-probability in a plain
    forward pass over the prompt and the option (joined as the backend documents)."""
    import torch

    from mmbatch.backends.hf.boundaries import join_text
    from mmbatch.backends.hf.messages import chat_text
    from tests.support.families import FAMILIES
    from tests.test_family_matrix import own_template_inputs, requests

    family = FAMILIES["Phi-4-multimodal"]
    answers, scores = [], []
    for request in requests(family):
        inputs = own_template_inputs(processor, request, family)
        context = inputs["input_ids"][0].tolist()
        with torch.inference_mode():
            out = model.generate(**inputs, max_new_tokens=family.max_new_tokens, do_sample=False)
        answers.append(processor.tokenizer.decode(out[0, len(context):], skip_special_tokens=True).strip())
        prompt = chat_text(processor, request)
        row = []
        for option in request.options:
            full = processor(text=[prompt + join_text(prompt) + option], images=[request.images],
                             return_tensors="pt").to(dtype=torch.float32)
            ids = full["input_ids"][0].tolist()
            assert ids[: len(context)] == context
            with torch.inference_mode():
                logits = model(**full).logits[0].float()
            logprobs = torch.log_softmax(logits[len(context) - 1: -1], dim=-1)
            row.append(logprobs.gather(-1, torch.tensor(ids[len(context):]).unsqueeze(-1)).sum().item())
        scores.append(row)
    return answers, scores


@IN_TORCHVISION_ENV
def test_the_backend_runs_the_adapted_model_not_the_base_weights(backend, adapted) -> None:
    from tests.support import single_torch_thread
    from tests.support.families import FAMILIES
    from tests.test_family_matrix import answers_of, logprobs_of, requests

    rows = requests(FAMILIES["Phi-4-multimodal"])
    ours = answers_of(backend, rows, FAMILIES["Phi-4-multimodal"])
    our_scores = logprobs_of(backend, rows)
    processor = backend.loaded.processor
    with single_torch_thread():
        adapted_answers, adapted_scores = own_answers_and_scores(by_hand(adapted, adapter=True), processor)
        _, base_scores = own_answers_and_scores(by_hand(adapted, adapter=False), processor)
    assert ours == adapted_answers
    for got, expected in zip(our_scores, adapted_scores, strict=True):
        assert got == pytest.approx(expected, abs=1e-4)
    # The adapter changes the numbers, so this test fails when the backend runs the base weights.
    assert not any(got == pytest.approx(base, abs=1e-3) for got, base in zip(our_scores, base_scores, strict=True))


@IN_TORCHVISION_ENV
def test_the_settings_name_the_adapter(backend) -> None:
    settings = backend.settings()
    assert settings["adapter"] == {"subfolder": "vision-lora", "active": "vision"}
    assert backend.loaded.model.active_adapters() == ["vision"]


@IN_TORCHVISION_ENV
def test_without_peft_the_run_is_refused_naming_the_pip_command(adapted, monkeypatch) -> None:
    from mmbatch.backends.hf import create_backend
    from mmbatch.backends.hf.options import HfOptions
    from mmbatch.errors import BadInputError

    monkeypatch.setitem(sys.modules, "peft", None)  # import peft raises ImportError, as where it is not installed
    with pytest.raises(BadInputError, match=r"vision-lora/.*pip install peft"):
        create_backend(HfOptions(model=str(adapted), dtype="float32", device="cpu", batch_size=1))
