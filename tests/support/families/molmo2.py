"""Molmo2: a ViT over overlapping square crops plus a low-resolution view of the whole image, an attention-pooling
adapter (2x2 patches into one token), and a Qwen-like text model that reads the image tokens bidirectionally
(``mm_token_type_ids``). Like ``allenai/Molmo2-8B``, the tokenizer adds no BOS and the chat template writes none: the
processor puts ``<|im_end|>`` (the published tokenizer's BOS and EOS; here its EOS, there being no BOS) before every
prompt; each ``<|image|>`` becomes a low-resolution view then the crops' grid, rows ended by ``<im_col>``.

Its image and video processors exist only in the torchvision build (no PIL variant): the family runs in the test
environment that has torchvision (``make torchvision-env``)."""

from __future__ import annotations

from pathlib import Path

from tests.support.families.parts import family_tokenizer, finish, text_sizes
from tests.support.tiny_models import WEIGHT_SCALE

CHAT_TEMPLATE = (
    "{% set images = namespace(count=0) %}"
    "{% for message in messages %}{% if message['content'] is not string %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' %}{% set images.count = images.count + 1 %}{% endif %}"
    "{% endfor %}{% endif %}{% endfor %}"
    "{% if images.count == 1 %}{{ '<|image|>' }}"
    "{% else %}{% for n in range(images.count) %}{{ 'Image ' ~ (n + 1) ~ '<|image|>' }}{% endfor %}{% endif %}"
    "{% for message in messages %}"
    "{% if message['content'] is string %}{% set text = message['content'] %}{% else %}"
    "{% set parts = namespace(text='') %}{% for content in message['content'] %}{% if content['type'] == 'text' %}"
    "{% set parts.text = parts.text ~ ('' if not parts.text else ' ') ~ content['text'] %}{% endif %}{% endfor %}"
    "{% set text = parts.text %}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + text + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
"""As Molmo2's: every image of the conversation first (numbered when there are several), then ChatML turns of the
messages' text parts joined by spaces, no BOS (the processor adds it). The published template refuses a system turn
(roles must alternate from user); this one writes it as a ChatML turn, so the matrix's system-prompt assertion runs.
"""

IMAGE_TOKENS = ["<im_patch>", "<im_col>", "<im_start>", "<low_res_im_start>", "<frame_start>", "<im_end>",
                "<frame_end>", "<im_low>"]
"""The tokens the processor writes for an image or a video frame."""


def build_molmo2(directory: Path) -> None:
    """Save a tiny Molmo2: 28 px crops of 7 px patches (up to 2 crops, 1 patch of overlap), 2x2 patches pooled into
    one token, the adapter reading the ViT's last two layers."""
    import torch
    from transformers import (
        Molmo2AdapterConfig,
        Molmo2Config,
        Molmo2ForConditionalGeneration,
        Molmo2ImageProcessor,
        Molmo2Processor,
        Molmo2TextConfig,
        Molmo2VideoProcessor,
        Molmo2VisionConfig,
    )

    named = {"image_token": "<|image|>", "video_token": "<|video|>"}
    tokenizer = family_tokenizer(["<|im_start|>", *IMAGE_TOKENS], bos=None, eos="<|im_end|>", pad="<|endoftext|>",
                                 add_bos=False, named=named)
    crop, patch = 28, 7
    sizes = {"size": {"height": crop, "width": crop}, "patch_size": patch, "pooling_size": [2, 2]}
    image_processor = Molmo2ImageProcessor(**sizes, max_crops=2, overlap_margins=[1, 1])
    video_processor = Molmo2VideoProcessor(**sizes, num_frames=4)
    processor = Molmo2Processor(image_processor=image_processor, video_processor=video_processor,
                                tokenizer=tokenizer, chat_template=CHAT_TEMPLATE)
    text = text_sizes(tokenizer, additional_vocab_size=0)
    ids = dict(zip(IMAGE_TOKENS, tokenizer.convert_tokens_to_ids(IMAGE_TOKENS), strict=True))
    config = Molmo2Config(
        vision_config=Molmo2VisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                         num_attention_heads=2, num_key_value_heads=2, head_dim=16,
                                         image_size=[crop, crop], patch_size=patch,
                                         initializer_range=WEIGHT_SCALE),
        adapter_config=Molmo2AdapterConfig(vision_feature_layer=[-1, -2], hidden_size=32, num_attention_heads=2,
                                           num_key_value_heads=2, head_dim=16, intermediate_size=64,
                                           text_hidden_size=text["hidden_size"], initializer_range=WEIGHT_SCALE),
        text_config=Molmo2TextConfig(**text),
        image_start_token_id=ids["<im_start>"], low_res_image_start_token_id=ids["<low_res_im_start>"],
        image_end_token_id=ids["<im_end>"], image_patch_id=ids["<im_patch>"],
        frame_start_token_id=ids["<frame_start>"], frame_end_token_id=ids["<frame_end>"],
        initializer_range=WEIGHT_SCALE)
    torch.manual_seed(0)
    finish(Molmo2ForConditionalGeneration(config), processor, directory)
