"""Kimi-K2.5: a MoonViT tower (2D rotary positions over the image at its own size, 2x2 patches merged into one token)
and a DeepSeek-V3 text model (multi-head latent attention, routed and shared experts after a dense first layer). As
in ``moonshotai/Kimi-K2.5``'s chat template, turns are ``<|im_user|>user<|im_middle|>...<|im_end|>`` and an image is
``<|media_begin|>image<|media_content|><|media_pad|><|media_end|>``, the processor expanding ``<|media_pad|>`` into
the image's tokens; the tokenizer adds no BOS.

Its image and video processors exist only in the torchvision build (no PIL variant): the family runs in the test
environment that has torchvision (``make torchvision-env``)."""

from __future__ import annotations

from pathlib import Path

from tests.support.families.parts import family_tokenizer, finish, text_sizes
from tests.support.tiny_models import WEIGHT_SCALE

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_' + message['role'] + '|>' + message['role'] + '<|im_middle|>' }}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for content in message['content'] %}"
    "{% if content['type'] == 'image' %}{{ '<|media_begin|>image<|media_content|><|media_pad|><|media_end|>' }}"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}{% endfor %}{% endif %}"
    "{{ '<|im_end|>' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_assistant|>assistant<|im_middle|>' }}{% endif %}"
)
"""Kimi's turns: role marker, role name, ``<|im_middle|>``, content, ``<|im_end|>``."""

TOKENS = ["<|im_user|>", "<|im_assistant|>", "<|im_system|>", "<|im_middle|>", "<|media_begin|>",
          "<|media_content|>", "<|media_end|>"]
"""Turn and media markers kept whole."""


def build_kimi_k25(directory: Path) -> None:
    """Save a tiny Kimi-K2.5: 7 px patches merged 2x2, images of at most 64 patches; two text layers, the second with
    4 routed experts (2 per token) and a shared one."""
    import torch
    from transformers import (
        DeepseekV3Config,
        Kimi_K25Config,
        Kimi_K25ForConditionalGeneration,
        Kimi_K25ImageProcessor,
        Kimi_K25Processor,
        Kimi_K25VideoProcessor,
        Kimi_K25VisionConfig,
    )

    named = {"image_token": "<|media_pad|>", "video_token": "<|kimi_k25_video_placeholder|>"}
    tokenizer = family_tokenizer(TOKENS, bos="[BOS]", eos="<|im_end|>", pad="[PAD]", add_bos=False, named=named)
    patch, merge = 7, 2
    sizes = {"patch_size": patch, "merge_size": merge, "size": {"max_height": 112, "max_width": 112}}
    image_processor = Kimi_K25ImageProcessor(**sizes, max_patches=64)
    video_processor = Kimi_K25VideoProcessor(**sizes, max_patches=64, temporal_patch_size=2)
    processor = Kimi_K25Processor(image_processor=image_processor, video_processor=video_processor,
                                  tokenizer=tokenizer, chat_template=CHAT_TEMPLATE)
    text = text_sizes(tokenizer)
    text.pop("head_dim")
    text["num_key_value_heads"] = text["num_attention_heads"]  # latent attention: one key and value per head
    text_config = DeepseekV3Config(**text, kv_lora_rank=16, q_lora_rank=24, qk_rope_head_dim=8, qk_nope_head_dim=8,
                                   v_head_dim=12, n_routed_experts=4, num_experts_per_tok=2, n_shared_experts=1,
                                   moe_intermediate_size=32, first_k_dense_replace=1, n_group=1, topk_group=1)
    config = Kimi_K25Config(
        text_config=text_config,
        vision_config=Kimi_K25VisionConfig(patch_size=patch, pos_emb_height=16, pos_emb_width=16, pos_emb_time=4,
                                           num_attention_heads=2, num_hidden_layers=2, hidden_size=32,
                                           intermediate_size=64, merge_kernel_size=[merge, merge],
                                           initializer_range=WEIGHT_SCALE),
        projection_hidden_size=32, image_token_id=tokenizer.convert_tokens_to_ids(named["image_token"]),
        video_token_id=tokenizer.convert_tokens_to_ids(named["video_token"]),
        vision_start_token_id=tokenizer.convert_tokens_to_ids("<|media_begin|>"),
        vision_end_token_id=tokenizer.convert_tokens_to_ids("<|media_end|>"),
        tie_word_embeddings=False, initializer_range=WEIGHT_SCALE)
    torch.manual_seed(0)
    finish(Kimi_K25ForConditionalGeneration(config), processor, directory)
