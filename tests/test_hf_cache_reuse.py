"""Models whose option passes must not reuse the prompt's cache with 1-D positions get a full pass per option.

The detector is checked on real (tiny, random-weight) model objects of each kind; the full-pass path is checked to
give the same log-probs as the cache-reusing path on a model where both are right.
"""

from __future__ import annotations

import pytest
from PIL import Image

from mmbatch.backends.base import Request
from mmbatch.backends.hf import create_backend
from mmbatch.backends.hf.cache_reuse import cache_reuse_blocker
from mmbatch.backends.hf.likelihood import score_request
from mmbatch.backends.hf.options import HfOptions
from tests.support import single_torch_thread
from tests.support.tiny_models import build_llava, session_model_dir


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    with single_torch_thread():
        yield


def tiny_qwen2_vl():
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    config = Qwen2VLConfig(
        text_config={"vocab_size": 128, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                     "num_attention_heads": 2, "num_key_value_heads": 1,
                     "rope_parameters": {"rope_type": "default", "mrope_section": [2, 2, 4], "rope_theta": 10000.0}},
        vision_config={"depth": 1, "embed_dim": 32, "hidden_size": 32, "num_heads": 2, "mlp_ratio": 2,
                       "in_channels": 3, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2})
    return Qwen2VLForConditionalGeneration(config)


def test_plain_llava_reuses_its_cache() -> None:
    model, _ = build_llava()
    assert cache_reuse_blocker(model) is None


def test_m_rope_is_detected() -> None:
    assert cache_reuse_blocker(tiny_qwen2_vl()) == "multimodal rotary positions (M-RoPE)"


def test_sliding_window_text_model_is_detected() -> None:
    from transformers import CLIPVisionConfig, LlavaConfig, LlavaForConditionalGeneration, MistralConfig

    config = LlavaConfig(
        vision_config=CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                       num_attention_heads=2, image_size=28, patch_size=14),
        text_config=MistralConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                  num_attention_heads=2, num_key_value_heads=1, sliding_window=16))
    assert cache_reuse_blocker(LlavaForConditionalGeneration(config)) == "sliding-window attention"


def test_full_pass_per_option_equals_the_cache_reusing_path(tmp_path_factory) -> None:
    backend = create_backend(HfOptions(model=str(session_model_dir(tmp_path_factory, "llava-bos"))))
    request = Request(index=1, prompt="What is shown in the image?", images=[Image.new("RGB", (40, 30), "teal")],
                      options=["a red square", "a blue circle", "a cat"])
    reused = score_request(backend.loaded, request)
    separate = score_request(backend.loaded, request, separately=True)
    assert reused.error is None and separate.error is None
    assert separate.choice_ntokens == reused.choice_ntokens
    assert separate.choice_logprobs == pytest.approx(reused.choice_logprobs, abs=1e-4)
