"""Idefics2: a SigLIP-like vision tower at the image's own aspect ratio (patch mask), a perceiver resampler to a
fixed number of latents per image, a Mistral text model. Like ``HuggingFaceM4/idefics2-8b``, the tokenizer adds
BOS and the chat template writes none (``User:<image>{text}<end_of_utterance>\\nAssistant:``)."""

from __future__ import annotations

from pathlib import Path

from tests.support.families.parts import finish, text_sizes, vision_sizes
from tests.support.tiny_models import WEIGHT_SCALE
from tests.support.tiny_tokenizer import train_tokenizer

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ message['role'] | capitalize }}"
    "{% if message['content'][0]['type'] == 'image' %}:{% else %}: {% endif %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'text' %}{{ part['text'] }}{% elif part['type'] == 'image' %}<image>{% endif %}"
    "{% endfor %}"
    "<end_of_utterance>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}Assistant:{% endif %}"
)
"""Idefics2-8b's template; the processor expands ``<image>`` between ``<fake_token_around_image>`` markers."""


def build_idefics2(directory: Path) -> None:
    """Save a tiny Idefics2: images up to 28 px of 7 px patches, resampled to 4 latents, Mistral without sliding
    window."""
    import torch
    from transformers import (
        Idefics2Config,
        Idefics2ForConditionalGeneration,
        Idefics2ImageProcessorPil,
        Idefics2Processor,
        MistralConfig,
    )

    tokenizer = train_tokenizer(["<image>", "<fake_token_around_image>", "<end_of_utterance>"], add_bos=True)
    size, patch, latents = 28, 7, 4
    processor = Idefics2Processor(
        image_processor=Idefics2ImageProcessorPil(size={"longest_edge": size, "shortest_edge": patch},
                                                  do_image_splitting=False),
        tokenizer=tokenizer, image_seq_len=latents, chat_template=CHAT_TEMPLATE)
    config = Idefics2Config(
        vision_config=vision_sizes(size, patch),
        perceiver_config={"hidden_size": 48, "resampler_n_latents": latents, "resampler_depth": 1,
                          "resampler_n_heads": 2, "resampler_head_dim": 8, "num_key_value_heads": 1,
                          "initializer_range": WEIGHT_SCALE},
        text_config=MistralConfig(**text_sizes(tokenizer), sliding_window=None),
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
    )
    torch.manual_seed(0)
    finish(Idefics2ForConditionalGeneration(config), processor, directory)
