"""Aya Vision: a SigLIP vision tower over 28 px tiles plus a global view (GOT-OCR2's tiling), a pixel-shuffle SwiGLU
projector, a Cohere 2 text model (sliding-window and full layers, as ``CohereForAI/aya-vision-8b``). The tokenizer
adds BOS and the chat template writes it too."""

from __future__ import annotations

from pathlib import Path

from tests.support.families.parts import family_tokenizer, finish, text_sizes, vision_sizes

CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "<|START_OF_TURN_TOKEN|>"
    "{{ {'user': '<|USER_TOKEN|>', 'assistant': '<|CHATBOT_TOKEN|>', 'system': '<|SYSTEM_TOKEN|>'}[message['role']] }}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<image>{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "<|END_OF_TURN_TOKEN|>"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>{% endif %}"
)
"""Aya Vision's Command-style turns; the processor expands ``<image>`` into the tiles' tokens."""

IMAGE_TOKENS = ("<image>", "<|START_OF_IMG|>", "<|END_OF_IMG|>", "<|IMG_PATCH|>", "<|IMG_LINE_BREAK|>", "TILE",
                "TILE_GLOBAL")
"""The image placeholders Aya Vision's processor writes (``TILE_1``... are plain text after ``TILE``)."""


def build_aya_vision(directory: Path) -> None:
    """Save a tiny Aya Vision: 28 px tiles (up to 4 and a global view) of 7 px patches, shuffled 2x2 into 4 tokens."""
    import torch
    from transformers import (
        AyaVisionConfig,
        AyaVisionForConditionalGeneration,
        AyaVisionProcessor,
        Cohere2Config,
        GotOcr2ImageProcessorPil,
        SiglipVisionConfig,
    )

    tokenizer = family_tokenizer(
        [*IMAGE_TOKENS, "<|START_OF_TURN_TOKEN|>", "<|USER_TOKEN|>", "<|CHATBOT_TOKEN|>", "<|SYSTEM_TOKEN|>"],
        bos="<BOS_TOKEN>", eos="<|END_OF_TURN_TOKEN|>", pad="<PAD>", add_bos=True)
    tile, patch, downsample = 28, 7, 2
    image_processor = GotOcr2ImageProcessorPil(
        size={"height": tile, "width": tile}, crop_to_patches=True, min_patches=1, max_patches=4)
    processor = AyaVisionProcessor(
        image_processor=image_processor, tokenizer=tokenizer, patch_size=patch, img_size=tile,
        downsample_factor=downsample, chat_template=CHAT_TEMPLATE)
    config = AyaVisionConfig(
        vision_config=SiglipVisionConfig(**vision_sizes(tile, patch)),
        text_config=Cohere2Config(**text_sizes(tokenizer), sliding_window=512,
                                  layer_types=["sliding_attention", "full_attention"]),
        downsample_factor=downsample, image_token_index=tokenizer.convert_tokens_to_ids("<|IMG_PATCH|>"),
    )
    torch.manual_seed(0)
    finish(AyaVisionForConditionalGeneration(config), processor, directory)
