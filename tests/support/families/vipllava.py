"""VipLLaVA: LLaVA whose projector reads several layers of the CLIP tower at once, a Llama text model whose tokenizer
adds BOS; the chat template writes none and opens with its fixed preamble, as ``llava-hf/vip-llava-7b-hf``'s."""

from __future__ import annotations

from pathlib import Path

from tests.support.families.parts import finish, text_sizes, vision_sizes
from tests.support.tiny_tokenizer import train_tokenizer

CHAT_TEMPLATE = (
    "A chat between a curious human and an artificial intelligence assistant. The assistant gives helpful, "
    "detailed, and polite answers to the human's questions."
    "{% for message in messages %}"
    "{% if message['role'] == 'user' %}###Human: {% else %}###Assistant: {% endif %}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] if part['type'] == 'image' %}<image>\n{% endfor %}"
    "{% for part in message['content'] if part['type'] == 'text' %}{{ part['text'] }}{% endfor %}"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}###Assistant:{% endif %}"
)
"""VipLLaVA's ``###Human:`` / ``###Assistant:`` format behind its preamble."""


def build_vipllava(directory: Path) -> None:
    """Save a tiny VipLLaVA: 28 px images of 14 px patches (4 image tokens) read from all three tower outputs."""
    import torch
    from transformers import (
        CLIPImageProcessorPil,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaProcessor,
        VipLlavaConfig,
        VipLlavaForConditionalGeneration,
    )

    tokenizer = train_tokenizer(["<image>"], add_bos=True)
    size, patch = 28, 14
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessorPil(size={"shortest_edge": size}, crop_size={"height": size, "width": size}),
        tokenizer=tokenizer, patch_size=patch, vision_feature_select_strategy="default",
        num_additional_image_tokens=1, chat_template=CHAT_TEMPLATE)
    config = VipLlavaConfig(
        vision_config=CLIPVisionConfig(**vision_sizes(size, patch), projection_dim=32),
        text_config=LlamaConfig(**text_sizes(tokenizer)),
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"), vision_feature_layer=(-1, -2, -3),
        image_seq_length=(size // patch) ** 2,
    )
    torch.manual_seed(0)
    finish(VipLlavaForConditionalGeneration(config), processor, directory)
