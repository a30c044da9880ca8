"""LLaVA-NeXT-Video: LLaVA-NeXT's anyres image path, a video path that pools each frame's features (2 × 2 patches to one
token here; its video input is tested in ``tests/test_hf_video.py``), a Llama text model whose tokenizer adds BOS; the
chat template writes none (``USER: <image>\\n{text} ASSISTANT:``, as ``llava-hf/LLaVA-NeXT-Video-7B-hf``'s: images, then
videos, then text)."""

from __future__ import annotations

from pathlib import Path

from tests.support.families import llava_next
from tests.support.families.parts import finish, text_sizes, vision_sizes
from tests.support.tiny_tokenizer import train_tokenizer
from tests.support.video_standin import VideoProcessorStandIn

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] != 'system' %}{{ message['role'].upper() + ': ' }}{% endif %}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'image') %}{{ '<image>\n' }}{% endfor %}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'video') %}{{ '<video>\n' }}{% endfor %}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}"
    "{{ content['text'] + ' ' }}{% endfor %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}"
)
"""The llava-hf template of LLaVA-NeXT-Video: each turn's images, videos, then its text and a space."""

TILE = llava_next.TILE
"""Side of the base view and of each tile, and of a video frame: 2 × 2 patches, pooled to one token per frame."""


def build_llava_next_video(directory: Path, video_processor=None) -> None:
    """Save a tiny LLaVA-NeXT-Video: LLaVA-NeXT's tiles, a Llama text model.

    Args:
        directory: Where to save it.
        video_processor: What fills the processor's video slot (the stand-in that refuses video by default).
    """
    import torch
    from transformers import (
        CLIPVisionConfig,
        LlamaConfig,
        LlavaNextImageProcessorPil,
        LlavaNextVideoConfig,
        LlavaNextVideoForConditionalGeneration,
        LlavaNextVideoProcessor,
    )

    tokenizer = train_tokenizer(["<image>", "<video>"], add_bos=True)
    tile, patch, pinpoints = TILE, llava_next.PATCH, llava_next.GRID_PINPOINTS
    image_processor = LlavaNextImageProcessorPil(
        size={"shortest_edge": tile}, crop_size={"height": tile, "width": tile}, image_grid_pinpoints=pinpoints)
    processor = LlavaNextVideoProcessor(
        video_processor=VideoProcessorStandIn() if video_processor is None else video_processor,
        image_processor=image_processor, tokenizer=tokenizer,
        patch_size=patch, vision_feature_select_strategy="default", num_additional_image_tokens=1,
        chat_template=CHAT_TEMPLATE)
    config = LlavaNextVideoConfig(
        vision_config=CLIPVisionConfig(**vision_sizes(tile, patch), projection_dim=32),
        text_config=LlamaConfig(**text_sizes(tokenizer)),
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        video_token_index=tokenizer.convert_tokens_to_ids("<video>"), image_grid_pinpoints=pinpoints,
        vision_feature_select_strategy="default", vision_feature_layer=-2,
    )
    torch.manual_seed(0)
    finish(LlavaNextVideoForConditionalGeneration(config), processor, directory)
