"""Gemma 4: a vision encoder over variable-size patch grids (the image is resized, keeping its aspect ratio, to at
most ``max_soft_tokens`` × pooling² patches) pooled into soft tokens, a Gemma 4 text model with per-layer input
embeddings and sliding plus full attention layers. Like ``google/gemma-4-E2B-it``, the tokenizer adds BOS and the
chat template writes it too; turns are ``<|turn>role\\n...<turn|>``."""

from __future__ import annotations

from pathlib import Path

from tests.support.families.parts import family_tokenizer, finish, text_sizes
from tests.support.tiny_models import WEIGHT_SCALE
from tests.support.video_standin import VideoProcessorStandIn

CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}"
    "{{ '<|turn>' + role + '\n' }}"
    "{% if message['content'] is string %}{{ message['content'] | trim }}{% else %}"
    "{% for item in message['content'] %}"
    "{% if item['type'] == 'image' %}{{ '<|image|>' }}"
    "{% elif item['type'] == 'video' %}{{ '<|video|>' }}"
    "{% elif item['type'] == 'text' %}{{ item['text'] | trim }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<turn|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|turn>model\n' }}{% endif %}"
)
"""Gemma 4's turn format; the processor expands each ``<|image|>`` into ``<|image>``, the soft tokens, ``<image|>``."""

TOKENS = {"image_token": "<|image|>", "boi_token": "<|image>", "eoi_token": "<image|>",
          "audio_token": "<|audio|>", "boa_token": "<|audio>", "eoa_token": "<audio|>"}
"""The media tokens Gemma 4's processor reads from its tokenizer (it refuses a tokenizer without the audio ones)."""
PATCH, POOLING, SOFT_TOKENS = 4, 2, 70
"""Vision patch side in pixels, pooling kernel, most soft tokens per image (the smallest budget the image processor
accepts): up to 280 patches of 4 px, pooled 2 × 2."""


def build_gemma4(directory: Path, video_processor=None) -> None:
    """Save a tiny Gemma 4 (one sliding and one full attention layer).

    Args:
        directory: Where to save it.
        video_processor: What fills the processor's video slot (the stand-in that refuses video by default; the
            processor reads its patch settings).
    """
    import torch
    from transformers import (
        Gemma4AudioFeatureExtractor,
        Gemma4Config,
        Gemma4ForConditionalGeneration,
        Gemma4ImageProcessorPil,
        Gemma4Processor,
        Gemma4TextConfig,
        Gemma4VisionConfig,
    )

    tokenizer = family_tokenizer(["<|turn>", "<turn|>"], bos="<bos>", eos="<turn|>", pad="<pad>", add_bos=True,
                                 named=TOKENS)
    image_processor = Gemma4ImageProcessorPil(patch_size=PATCH, pooling_kernel_size=POOLING,
                                              max_soft_tokens=SOFT_TOKENS)
    if video_processor is None:
        video_processor = VideoProcessorStandIn(patch_size=PATCH, pooling_kernel_size=POOLING,
                                                max_soft_tokens=SOFT_TOKENS)
    processor = Gemma4Processor(
        feature_extractor=Gemma4AudioFeatureExtractor(), image_processor=image_processor, tokenizer=tokenizer,
        video_processor=video_processor, chat_template=CHAT_TEMPLATE, image_seq_length=SOFT_TOKENS)
    ids = {name: tokenizer.convert_tokens_to_ids(token) for name, token in TOKENS.items()}
    config = Gemma4Config(
        # The processor added its video token to the tokenizer: the vocabulary is counted after it.
        text_config=Gemma4TextConfig(
            **text_sizes(tokenizer), vocab_size_per_layer_input=len(tokenizer), hidden_size_per_layer_input=8,
            sliding_window=512, layer_types=["sliding_attention", "full_attention"]),
        vision_config=Gemma4VisionConfig(
            hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
            head_dim=16, patch_size=PATCH, pooling_kernel_size=POOLING, position_embedding_size=64,
            initializer_range=WEIGHT_SCALE),
        image_token_id=ids["image_token"], boi_token_id=ids["boi_token"], eoi_token_id=ids["eoi_token"],
        audio_token_id=ids["audio_token"], boa_token_id=ids["boa_token"], eoa_token_index=ids["eoa_token"],
        video_token_id=processor.video_token_id, initializer_range=WEIGHT_SCALE,
    )
    torch.manual_seed(0)
    model = Gemma4ForConditionalGeneration(config)
    finish(model, processor, directory)
