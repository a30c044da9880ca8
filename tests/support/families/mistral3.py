"""Mistral 3 (Mistral-Small-3.1): a Pixtral vision encoder over the image at its own aspect ratio (2-D rotary
positions, ``[IMG]`` per patch, ``[IMG_BREAK]`` after each row, ``[IMG_END]`` last), patches merged 2 × 2, a Mistral
text model without sliding window. Like ``mistralai/Mistral-Small-3.1-24B-Instruct-2503``, the tokenizer adds BOS
and the chat template writes it, then a default system prompt and ``[INST]...[/INST]``.

Pixtral's processor imports a helper from a torchvision module; :mod:`tests.support.pixtral_standin` lets it import
here (the helper is not used on this path)."""

from __future__ import annotations

from pathlib import Path

from tests.support.families.parts import family_tokenizer, finish, text_sizes
from tests.support.pixtral_standin import register
from tests.support.tiny_models import WEIGHT_SCALE

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant."
"""Stands for the checkpoint's long default system prompt (the template writes one when the conversation has none)."""

CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% if messages[0]['role'] == 'system' %}"
    "{% set system_message = messages[0]['content'] %}{% set loop_messages = messages[1:] %}"
    "{% else %}"
    f"{{% set system_message = '{DEFAULT_SYSTEM_PROMPT}' %}}{{% set loop_messages = messages %}}"
    "{% endif %}"
    "{{ '[SYSTEM_PROMPT]' + system_message + '[/SYSTEM_PROMPT]' }}"
    "{% for message in loop_messages %}"
    "{% if message['role'] == 'user' %}"
    "{% if message['content'] is string %}{{ '[INST]' + message['content'] + '[/INST]' }}{% else %}"
    "{{ '[INST]' }}"
    "{% for block in message['content'] %}"
    "{% if block['type'] == 'text' %}{{ block['text'] }}{% elif block['type'] == 'image' %}{{ '[IMG]' }}{% endif %}"
    "{% endfor %}"
    "{{ '[/INST]' }}"
    "{% endif %}"
    "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token }}{% endif %}"
    "{% endfor %}"
)
"""Mistral-Small-3.1's template: ``<s>[SYSTEM_PROMPT]...[/SYSTEM_PROMPT][INST][IMG]{text}[/INST]``; the assistant's
turn needs no opening, so ``add_generation_prompt`` adds nothing."""

PATCH, MERGE, LONGEST_EDGE = 4, 2, 32
"""Vision patch side in pixels, the 2 × 2 patch merge, and the longest image side after resizing: up to 4 × 4
merged image tokens (plus a break per row) per image."""


def build_mistral3(directory: Path) -> None:
    """Save a tiny Mistral 3 with its Pixtral vision encoder."""
    import torch
    from transformers import (
        Mistral3Config,
        Mistral3ForConditionalGeneration,
        MistralConfig,
        PixtralImageProcessorPil,
        PixtralVisionConfig,
    )

    register()
    from transformers import PixtralProcessor

    tokenizer = family_tokenizer(["[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[IMG]", "[IMG_BREAK]",
                                  "[IMG_END]"], bos="<s>", eos="</s>", pad="<pad>", add_bos=True)
    image_processor = PixtralImageProcessorPil(size={"longest_edge": LONGEST_EDGE},
                                               patch_size={"height": PATCH, "width": PATCH})
    processor = PixtralProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=PATCH,
                                 spatial_merge_size=MERGE, chat_template=CHAT_TEMPLATE)
    config = Mistral3Config(
        vision_config=PixtralVisionConfig(
            hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, head_dim=16,
            image_size=LONGEST_EDGE, patch_size=PATCH, initializer_range=WEIGHT_SCALE),
        text_config=MistralConfig(**text_sizes(tokenizer), sliding_window=None),
        image_token_index=tokenizer.convert_tokens_to_ids("[IMG]"), spatial_merge_size=MERGE,
    )
    torch.manual_seed(0)
    model = Mistral3ForConditionalGeneration(config)
    finish(model, processor, directory)
