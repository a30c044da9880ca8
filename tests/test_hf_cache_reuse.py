"""Option passes continue the prompt's cache at the model's own positions, or take a full pass per option.

The detectors are checked on real (tiny, random-weight) model objects of each kind; the full-pass path is checked to
give the same log-probs as the cache-reusing path on a model where both are right; and on the M-RoPE families of the
matrix every cache-reusing path (one row, left-padded rows sharing a prompt pass as on a GPU, text-only rows) is
checked against a full pass per option.
"""

from __future__ import annotations

import pytest
from PIL import Image

from mmbatch.backends.base import Request
from mmbatch.backends.hf import create_backend
from mmbatch.backends.hf.cache_reuse import cache_reuse_blocker, prefix_sharing_blocker, rope_offsets_holder
from mmbatch.backends.hf.likelihood import score_request
from mmbatch.backends.hf.likelihood_batch import score_batch
from mmbatch.backends.hf.options import HfOptions
from tests.support import single_torch_thread
from tests.support.families import family_model
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


def test_m_rope_continues_its_cache_at_the_offsets_the_model_keeps() -> None:
    model = tiny_qwen2_vl()
    assert cache_reuse_blocker(model) is None
    assert rope_offsets_holder(model) is model.model


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


SIZES = [(52, 46), (100, 50), (120, 120)]
"""Image sizes whose M-RoPE offsets (``rope_deltas``) are not 0 on any of the tiny M-RoPE families, and differ
between the first two on most (an image whose 3-D positions span as many as its tokens would hide a missing offset)."""


def picture(n: int) -> Image.Image:
    return Image.new("RGB", SIZES[n], (50 * n % 256, 90, 160))


def rows(with_images: bool) -> list[Request]:
    """Rows of different lengths (so a shared prompt pass pads them) and image sizes (so their M-RoPE offsets
    differ); the last option is one token, the others several."""
    options = ["a red square", "a blue circle", "a cat", "A"]
    return [Request(index=n, prompt="What is shown?" + " Look carefully." * (2 * n), options=options,
                    images=[picture(n)] if with_images else []) for n in range(3)]


def logprobs(results) -> list[list[float]]:
    assert all(result.error is None for result in results), [result.error for result in results]
    return [list(result.choice_logprobs) for result in results]


@pytest.mark.parametrize("name", ["Qwen2-VL", "Qwen2.5-VL", "Qwen3-VL", "GLM-4V", "Qwen3.5"])
def test_every_likelihood_path_of_m_rope_models_equals_a_full_pass_per_option(name) -> None:
    """The prompt once, options on its cache at the model's own positions (real tokens + the row's ``rope_deltas``):
    per row, and for rows left-padded into one prompt pass (what a GPU runs), with and without images. Qwen3.5's
    linear-attention layers continue their convolution and recurrent states too (they failed with
    'LinearAttentionLayer' object has no attribute 'batch_select_indices')."""
    backend = create_backend(HfOptions(model=str(family_model(name)), dtype="float32", device="cpu"))
    loaded = backend.loaded
    assert cache_reuse_blocker(loaded.model) is None, "the paths under test are the cache-continuing ones"
    for with_images in (True, False):
        batch = rows(with_images)
        expected = logprobs([score_request(loaded, request, separately=True) for request in batch])
        per_row = logprobs([score_request(loaded, request) for request in batch])
        padded = logprobs(score_batch(loaded, batch, rows_per_pass=len(batch)))
        for want, one, together in zip(expected, per_row, padded, strict=True):
            assert one == pytest.approx(want, abs=1e-4)
            assert together == pytest.approx(want, abs=1e-4)
    backend.close()


def circular_groups() -> list[Request]:
    """Two groups of circular copies in one batch: different images (so different M-RoPE offsets) and prompt lengths
    (so the groups' prefixes are left-padded in one prefill), then a row of no group."""
    options = ["a red square", "a blue circle", "a cat", "a green tree"]
    batch = []
    for group, (copies, words) in enumerate([(3, 1), (2, 6)]):
        for shift in range(copies):
            listed = options[shift:] + options[:shift]
            prompt = "Which is shown?" + " Look." * words + " " + " ".join(
                f"{letter}. {text}" for letter, text in zip("ABCD", listed, strict=True))
            batch.append(Request(index=10 * group + shift, prompt=prompt, images=[picture(group)], options=listed,
                                 group=group))
    batch.append(Request(index=99, prompt="What is shown?", images=[picture(2)], options=options))
    return batch


@pytest.mark.parametrize("name", ["Qwen2-VL", "Qwen2.5-VL", "Qwen3-VL", "GLM-4V"])
def test_m_rope_groups_share_their_prefix_and_change_nothing(name) -> None:
    """Circular copies prefill their group's prefix once (images included, the model's own 3-D positions), then
    continue at the model's offsets: answers and option log-probs equal those of the same rows without groups."""
    from dataclasses import replace

    backend = create_backend(HfOptions(model=str(family_model(name)), dtype="float32", device="cpu", batch_size=8))
    grouped = circular_groups()
    strangers = [replace(request, group=None) for request in grouped]

    def answers(batch: list[Request]) -> list[str | None]:
        results = [result for chunk in backend.generate(batch, max_new_tokens=6) for result in chunk]
        assert all(result.error is None for result in results), [result.error for result in results]
        return [result.prediction for result in results]

    assert answers(grouped) == answers(strangers)
    assert backend.sharing.shared_rows == 5
    together = logprobs([result for chunk in backend.loglikelihood(grouped) for result in chunk])
    alone = logprobs([result for chunk in backend.loglikelihood(strangers) for result in chunk])
    for shared, single in zip(together, alone, strict=True):
        assert shared == pytest.approx(single, abs=1e-4)
    assert backend.likelihood_sharing.shared_rows == 5
    backend.close()


def test_linear_attention_shares_no_group_prefix() -> None:
    """Qwen3.5's options continue its cache, but a group's rows would put padding between the shared prefix and their
    own rest, which its linear-attention state would not ignore: they run unshared."""
    backend = create_backend(HfOptions(model=str(family_model("Qwen3.5")), dtype="float32", device="cpu"))
    assert cache_reuse_blocker(backend.loaded.model) is None
    assert prefix_sharing_blocker(backend.loaded.model) == (
        "recurrent layers (linear_attention): padding after a shared prefix would reach their state")
    backend.close()
