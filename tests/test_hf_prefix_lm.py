"""Models that do not continue a chat template's text: PaliGemma ships no chat template, so the hf backend uses its
processor's own format and scores options as the processor's suffix, records that, refuses a system prompt it cannot
write, and still refuses any other model that has no chat template (the family matrix checks the numbers); an
encoder-decoder model is refused outright."""

from __future__ import annotations

import json
import shutil

import pytest

from mmbatch.backends.hf import create_backend
from mmbatch.backends.hf.boundaries import SUFFIX_RULE
from mmbatch.backends.hf.options import HfOptions
from mmbatch.errors import BadInputError
from tests.support import single_torch_thread
from tests.support.families import family_model


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    with single_torch_thread():
        yield


def test_paligemma_settings_record_its_own_prompt_format_and_suffix_scoring() -> None:
    backend = create_backend(HfOptions(model=str(family_model("PaliGemma")), dtype="float32", device="cpu"))
    likelihood = backend.settings()["likelihood"]
    backend.close()
    assert likelihood["continuation_join"] == SUFFIX_RULE
    assert likelihood["prompt"].startswith("the processor's own format")


def test_paligemma_refuses_a_system_prompt_its_format_cannot_hold() -> None:
    options = HfOptions(model=str(family_model("PaliGemma")), dtype="float32", device="cpu", system_prompt="Be brief.")
    with pytest.raises(BadInputError, match="no system turn"):
        create_backend(options)


def test_another_model_without_a_chat_template_is_still_refused(tmp_path) -> None:
    model = tmp_path / "llava-without-template"
    shutil.copytree(family_model("LLaVA-1.5"), model)
    for name in ("chat_template.jinja", "chat_template.json"):
        (model / name).unlink(missing_ok=True)
    config = json.loads((model / "processor_config.json").read_text())
    config.pop("chat_template", None)
    (model / "processor_config.json").write_text(json.dumps(config))
    with pytest.raises(BadInputError, match="no chat template"):
        create_backend(HfOptions(model=str(model), dtype="float32", device="cpu"))


def test_an_encoder_decoder_model_is_refused() -> None:
    from types import SimpleNamespace

    from mmbatch.backends.hf.loading import refuse_encoder_decoder

    class Florence2ForConditionalGeneration:
        config = SimpleNamespace(is_encoder_decoder=True)

    with pytest.raises(BadInputError, match=r"Florence2ForConditionalGeneration.*encoder-decoder"):
        refuse_encoder_decoder(Florence2ForConditionalGeneration(), "microsoft/Florence-2-base")
    refuse_encoder_decoder(SimpleNamespace(config=SimpleNamespace(is_encoder_decoder=False)), "a/decoder-only")


def test_the_vllm_backend_refuses_likelihood_rows_of_a_prefix_lm() -> None:
    """vLLM would join the option to the prompt as text; PaliGemma's own score is of its processor's suffix."""
    from types import SimpleNamespace

    from transformers import AutoProcessor

    from mmbatch.backends.vllm_engine import VLLMBackend

    engine = VLLMBackend.__new__(VLLMBackend)  # the processor's part alone: no engine is started
    engine.options = SimpleNamespace(model="google/paligemma-3b-mix-224")
    engine.processor = AutoProcessor.from_pretrained(family_model("PaliGemma"))
    assert "--backend hf" in (engine.likelihood_refusal() or "")
    engine.processor = AutoProcessor.from_pretrained(family_model("LLaVA-1.5"))
    assert engine.likelihood_refusal() is None
