"""SmolVLM (and SmolVLM2): a SigLIP tower over tiles plus a global view, pixel shuffle, a SmolLM2 (Llama) text model.
Like ``HuggingFaceTB/SmolVLM2-2.2B-Instruct``, the tokenizer adds no BOS, its BOS is ``<|im_start|>`` and the template
writes that text first; turns end with ``<end_of_utterance>``, the EOS. The processor imports ``num2words``."""

from __future__ import annotations

from pathlib import Path

from tests.support.families.parts import family_tokenizer, finish, text_sizes, vision_sizes
from tests.support.video_standin import VideoProcessorStandIn

CHAT_TEMPLATE = (
    "<|im_start|>"
    "{% for message in messages %}"
    "{{ message['role'] | capitalize }}"
    "{% if message['content'][0]['type'] == 'image' %}{{ ':' }}{% else %}{{ ': ' }}{% endif %}"
    "{% for line in message['content'] %}"
    "{% if line['type'] == 'text' %}{{ line['text'] }}"
    "{% elif line['type'] == 'image' %}{{ '<image>' }}"
    "{% elif line['type'] == 'video' %}{{ '<video>' }}{% endif %}"
    "{% endfor %}"
    "<end_of_utterance>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)
"""SmolVLM2's template: ``<|im_start|>User:<image>{text}<end_of_utterance>\\nAssistant:``."""

TILE, PATCH, SCALE = 28, 7, 2
"""Tile side and vision patch side in pixels, and the pixel-shuffle factor: (28 / 7)² / 2² = 4 tokens per tile."""
SPECIAL_TOKENS = ["<image>", "<video>", "<fake_token_around_image>", "<global-img>",
                  *(f"<row_{row}_col_{col}>" for row in range(1, 5) for col in range(1, 5))]
"""The placeholders the processor writes around image tokens (one per tile position, up to 4 × 4)."""


def build_smolvlm(directory: Path, video_processor=None) -> None:
    """Save a tiny SmolVLM that splits images into tiles of 28 px (longest edge up to 56 px) plus a global view.

    Args:
        directory: Where to save it.
        video_processor: What fills the processor's video slot (the stand-in that refuses video by default).
    """
    import torch
    from transformers import (
        LlamaConfig,
        SmolVLMConfig,
        SmolVLMForConditionalGeneration,
        SmolVLMImageProcessorPil,
        SmolVLMProcessor,
        SmolVLMVisionConfig,
    )

    tokenizer = family_tokenizer(SPECIAL_TOKENS, bos="<|im_start|>", eos="<end_of_utterance>", pad="<|im_end|>",
                                 add_bos=False)
    image_processor = SmolVLMImageProcessorPil(size={"longest_edge": 2 * TILE}, max_image_size={"longest_edge": TILE})
    if video_processor is None:
        # SmolVLM's apply_chat_template reads the video processor's frame settings even for images (SmolVLM2's).
        video_processor = VideoProcessorStandIn(num_frames=64, fps=1)
    processor = SmolVLMProcessor(image_processor=image_processor, tokenizer=tokenizer, video_processor=video_processor,
                                 image_seq_len=(TILE // PATCH) ** 2 // SCALE**2, chat_template=CHAT_TEMPLATE)
    config = SmolVLMConfig(
        vision_config=SmolVLMVisionConfig(**vision_sizes(TILE, PATCH)),
        text_config=LlamaConfig(**text_sizes(tokenizer)),
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"), scale_factor=SCALE,
    )
    torch.manual_seed(0)
    model = SmolVLMForConditionalGeneration(config)
    finish(model, processor, directory)
