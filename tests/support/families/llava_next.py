"""LLaVA-NeXT (LLaVA-1.6): a CLIP vision tower that sees the image whole and in tiles ("anyres": the grid that best
fits the image's aspect ratio), a Mistral text model whose tokenizer adds BOS; the chat template writes none
(``[INST] <image>\\n{text} [/INST]``, as ``llava-hf/llava-v1.6-mistral-7b-hf``)."""

from __future__ import annotations

from pathlib import Path

from tests.support.families.parts import finish, text_sizes, vision_sizes
from tests.support.tiny_tokenizer import train_tokenizer

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'user' %}[INST] "
    "{% for part in message['content'] if part['type'] == 'image' %}<image>\n{% endfor %}"
    "{% for part in message['content'] if part['type'] == 'text' %}{{ part['text'] }}{% endfor %}"
    " [/INST]"
    "{% else %} {{ message['content'][0]['text'] }}</s>{% endif %}"
    "{% endfor %}"
)
"""The Mistral variant's template: no BOS (the tokenizer adds it), the assistant's turn follows ``[/INST]``."""

TILE, PATCH = 28, 14
"""Side of the base view and of each tile, and of a vision patch: 2 × 2 image tokens per view."""
GRID_PINPOINTS = [[TILE, 2 * TILE], [2 * TILE, TILE], [2 * TILE, 2 * TILE]]
"""The anyres grids (in pixels) an image may be tiled into, up to 2 × 2 tiles."""


def build_llava_next(directory: Path) -> None:
    """Save a tiny LLaVA-NeXT: 28 px tiles of 14 px patches, grids up to 2x2, Mistral without a sliding window."""
    import torch
    from transformers import (
        CLIPVisionConfig,
        LlavaNextConfig,
        LlavaNextForConditionalGeneration,
        LlavaNextImageProcessorPil,
        LlavaNextProcessor,
        MistralConfig,
    )

    tokenizer = train_tokenizer(["<image>"], add_bos=True)
    image_processor = LlavaNextImageProcessorPil(
        size={"shortest_edge": TILE}, crop_size={"height": TILE, "width": TILE}, image_grid_pinpoints=GRID_PINPOINTS)
    processor = LlavaNextProcessor(
        image_processor=image_processor, tokenizer=tokenizer, patch_size=PATCH,
        vision_feature_select_strategy="default", num_additional_image_tokens=1, chat_template=CHAT_TEMPLATE)
    config = LlavaNextConfig(
        vision_config=CLIPVisionConfig(**vision_sizes(TILE, PATCH), projection_dim=32),
        # llava-v1.6-mistral's text model has no sliding window (Mistral 7B v0.2).
        text_config=MistralConfig(**text_sizes(tokenizer), sliding_window=None),
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"), image_grid_pinpoints=GRID_PINPOINTS,
        vision_feature_select_strategy="default", vision_feature_layer=-2,
    )
    torch.manual_seed(0)
    finish(LlavaNextForConditionalGeneration(config), processor, directory)
