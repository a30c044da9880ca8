"""A tiny random-weight Janus (the image-generating VLM) saved with ``save_pretrained``, so tests load it through
``AutoProcessor`` / ``AutoModelForImageTextToText`` exactly as a real Janus-Pro checkpoint is loaded."""

from __future__ import annotations

from pathlib import Path

from tests.support.build_once import build_once
from tests.support.tiny_tokenizer import train_tokenizer

REPO_ROOT = Path(__file__).resolve().parents[2]
JANUS_CACHE = REPO_ROOT / ".cache" / "tiny-models" / "janus-v1"
"""Built once and reused across test runs (the name changes whenever the recipe does)."""
IMAGE_TOKENS = 16
"""Image tokens per picture: a 4x4 grid, decoded to 16x16 pixels."""
CHAT_TEMPLATE = (
    "{% for message in messages %}<|User|>: "
    "{% for part in message['content'] if part['type'] == 'text' %}{{ part['text'] }}{% endfor %}\n"
    "{% endfor %}{% if add_generation_prompt %}<|Assistant|>:{% endif %}"
)


def build_tiny_janus(directory: Path, *, seed: int = 0) -> Path:
    """Save a 2-layer Janus (Llama text model, 32-pixel vision tower, 64-code VQ model) with its processor."""
    model, processor = make_janus(seed=seed)
    processor.save_pretrained(directory)
    model.save_pretrained(directory)
    return directory


def make_janus(*, seed: int = 0, add_bos: bool = False, chat_template: str = CHAT_TEMPLATE,
               use_default_system_prompt: bool = False, others: tuple[str, ...] = (),
               weight_scale: float | None = None, tie_word_embeddings: bool = True):
    """Make the tiny Janus and its processor in memory.

    Args:
        seed: Seed of the random weights.
        add_bos: Whether the tokenizer adds BOS (Janus-Pro's does).
        chat_template: The chat template.
        use_default_system_prompt: Whether the processor puts Janus's system prompt before text-mode prompts.
        others: More special tokens kept whole (the turn markers of the real template).
        weight_scale: Standard deviation of the random weights of the text model and vision tower (None: the
            configuration's default, 0.02).
        tie_word_embeddings: Whether the output layer shares the input embeddings (Janus-Pro's checkpoints have
            their own ``lm_head``).

    Returns:
        ``(model, processor)``.
    """
    import torch
    from transformers import (
        GenerationConfig,
        JanusConfig,
        JanusForConditionalGeneration,
        JanusProcessor,
        PreTrainedTokenizerFast,
    )
    from transformers.models.janus.image_processing_pil_janus import JanusImageProcessorPil

    torch.manual_seed(seed)
    specials = {"image_token": "<image_placeholder>", "boi_token": "<begin_of_image>", "eoi_token": "<end_of_image>"}
    trained = train_tokenizer([*specials.values(), *others], vocab_size=300, add_bos=add_bos)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=trained.backend_tokenizer, bos_token="<s>", eos_token="</s>",
                                        pad_token="<pad>", extra_special_tokens=specials)
    scale = {} if weight_scale is None else {"initializer_range": weight_scale}
    config = JanusConfig(
        text_config={"model_type": "llama", "vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "max_position_embeddings": 128, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2,
                     **scale},
        vision_config={"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "image_size": 32,
                       "patch_size": 8, "projection_dim": 32, "num_image_tokens": IMAGE_TOKENS, "depth": 1, **scale},
        vq_config={"embed_dim": 8, "num_embeddings": 64, "latent_channels": 32, "base_channels": 32,
                   "channel_multiplier": [1, 1, 2], "num_res_blocks": 1, "num_patches": 4, "projection_dim": 32,
                   "image_token_embed_dim": 32, "num_hidden_layers": 1},
        image_token_id=tokenizer.convert_tokens_to_ids(specials["image_token"]),
        tie_word_embeddings=tie_word_embeddings, **scale,
    )
    model = JanusForConditionalGeneration(config).eval()
    model.generation_config = GenerationConfig(
        bos_token_id=1, pad_token_id=0, eos_token_id=2, guidance_scale=2.0, max_new_tokens=8,
        generation_kwargs={"boi_token_id": tokenizer.convert_tokens_to_ids(specials["boi_token"])})
    processor = JanusProcessor(JanusImageProcessorPil(size={"height": 32, "width": 32}), tokenizer,
                               chat_template=chat_template, num_image_tokens=IMAGE_TOKENS,
                               use_default_system_prompt=use_default_system_prompt)
    return model, processor


def tiny_janus() -> Path:
    """The cached tiny Janus, built on first use (:func:`~tests.support.build_once.build_once`)."""
    return build_once(JANUS_CACHE, build_tiny_janus, finished_marker="model.safetensors")
