"""Video-LLaVA: LanguageBind's CLIP image tower and its video tower (every frame's patches and class token; its video
input is tested in ``tests/test_hf_video.py``), a Llama (Vicuna) text model whose tokenizer adds BOS; the chat template
writes none (``USER: <image>\\n{text} ASSISTANT:``, llava-hf's template for ``LanguageBind/Video-LLaVA-7B-hf``)."""

from __future__ import annotations

from pathlib import Path

from tests.support.families import llava_next_video
from tests.support.families.parts import finish, text_sizes, vision_sizes
from tests.support.tiny_tokenizer import train_tokenizer
from tests.support.video_standin import VideoProcessorStandIn

TILE, PATCH = 28, 14
"""Side of an image (and of a video frame) and of a vision patch: 4 image tokens, 5 video tokens per frame."""


def build_video_llava(directory: Path, video_processor=None) -> None:
    """Save a tiny Video-LLaVA: 28 px images of 14 px patches.

    Args:
        directory: Where to save it.
        video_processor: What fills the processor's video slot (the stand-in that refuses video by default).
    """
    import torch
    from transformers import (
        CLIPVisionConfig,
        LlamaConfig,
        VideoLlavaConfig,
        VideoLlavaForConditionalGeneration,
        VideoLlavaImageProcessor,
        VideoLlavaProcessor,
    )

    tokenizer = train_tokenizer(["<image>", "<video>"], add_bos=True)
    size, patch = TILE, PATCH
    processor = VideoLlavaProcessor(
        image_processor=VideoLlavaImageProcessor(size={"shortest_edge": size},
                                                 crop_size={"height": size, "width": size}),
        video_processor=VideoProcessorStandIn() if video_processor is None else video_processor, tokenizer=tokenizer,
        patch_size=patch, vision_feature_select_strategy="default", num_additional_image_tokens=1,
        # The same llava-hf template as LLaVA-NeXT-Video's: images, videos, then the text of each turn.
        chat_template=llava_next_video.CHAT_TEMPLATE)
    config = VideoLlavaConfig(
        vision_config=CLIPVisionConfig(**vision_sizes(size, patch), projection_dim=32),
        text_config=LlamaConfig(**text_sizes(tokenizer)),
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        video_token_index=tokenizer.convert_tokens_to_ids("<video>"),
        image_seq_length=(size // patch) ** 2, vision_feature_select_strategy="default", vision_feature_layer=-2,
    )
    torch.manual_seed(0)
    finish(VideoLlavaForConditionalGeneration(config), processor, directory)
