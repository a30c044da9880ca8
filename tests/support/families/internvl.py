"""InternVL (2.5 / 3, the ``-hf`` checkpoints): an InternViT tower whose tiles are pixel-shuffled (downsample 0.5)
into a Qwen2 text model. Images are cut into up to ``max_patches`` tiles plus a thumbnail (GOT-OCR2's PIL image
processor); each tile becomes ``<img>`` + ``image_seq_length`` × ``<IMG_CONTEXT>`` + ``</img>``. The tokenizer adds
no BOS (Qwen2's); the template is ChatML with ``<IMG_CONTEXT>\\n`` per image and ``<video>\\n`` per video, as in
``OpenGVLab/InternVL3-1B-hf``."""

from __future__ import annotations

from pathlib import Path

from tests.support.families.parts import family_tokenizer, finish, text_sizes, vision_sizes
from tests.support.video_standin import VideoProcessorStandIn

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for content in message['content'] %}"
    "{% if content['type'] == 'image' %}{{ '<IMG_CONTEXT>\n' }}"
    "{% elif content['type'] == 'video' %}{{ '<video>\n' }}"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
"""InternVL3-hf's ChatML template."""

TILE, PATCH, DOWNSAMPLE = 28, 7, 0.5
"""Tile side and vision patch side in pixels, and the pixel-shuffle ratio: (28 / 7)² × 0.5² = 4 tokens per tile."""


def build_internvl(directory: Path, video_processor=None) -> None:
    """Save a tiny InternVL with tiling (at most 4 tiles + a thumbnail per image).

    Args:
        directory: Where to save it.
        video_processor: What fills the processor's video slot (the stand-in that refuses video by default).
    """
    import torch
    from transformers import (
        GotOcr2ImageProcessorPil,
        InternVLConfig,
        InternVLForConditionalGeneration,
        InternVLProcessor,
        InternVLVisionConfig,
        Qwen2Config,
    )

    tokenizer = family_tokenizer(
        ["<|im_start|>"], bos=None, eos="<|im_end|>", pad="<|endoftext|>", add_bos=False,
        named={"start_image_token": "<img>", "end_image_token": "</img>", "context_image_token": "<IMG_CONTEXT>",
               "video_token": "<video>"})
    image_seq_length = int((TILE // PATCH) ** 2 * DOWNSAMPLE**2)
    image_processor = GotOcr2ImageProcessorPil(size={"height": TILE, "width": TILE}, crop_to_patches=True,
                                               max_patches=4)
    if video_processor is None:
        video_processor = VideoProcessorStandIn()
    processor = InternVLProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                  video_processor=video_processor, image_seq_length=image_seq_length,
                                  chat_template=CHAT_TEMPLATE)
    config = InternVLConfig(
        vision_config=InternVLVisionConfig(**vision_sizes(TILE, PATCH)),
        text_config=Qwen2Config(**text_sizes(tokenizer)),
        image_token_id=tokenizer.context_image_token_id, image_seq_length=image_seq_length,
        downsample_ratio=DOWNSAMPLE,
    )
    torch.manual_seed(0)
    model = InternVLForConditionalGeneration(config)
    finish(model, processor, directory)
