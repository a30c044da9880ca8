"""Ovis2: an AIMv2-like vision tower whose patches become probabilities over a visual vocabulary, embedded through a
visual embedding table (its "visual tokenizer"), tiles of the image between indicator tokens, a Qwen2 text model.
Like ``thisisiron/Ovis2-1B-hf``, the tokenizer adds no BOS and the template is ChatML with a default system turn."""

from __future__ import annotations

from pathlib import Path

from tests.support.families.parts import family_tokenizer, finish, text_sizes, vision_sizes
from tests.support.tiny_models import WEIGHT_SCALE

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<image>\n{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""Ovis2's ChatML; the processor expands ``<image>`` into the indicator tokens and each tile's ``<IMG_ATOM>``s."""

INDICATORS = ["<IMG_START>", "<IMG_GRID>", "<IMG_COL>", "<IMG_ROW>", "<IMG_END>"]
"""The visual indicator tokens, in the order of the model's ``visual_indicator_token_ids``."""


def build_ovis2(directory: Path) -> None:
    """Save a tiny Ovis2: 28 px tiles (up to 4 and a global view) of 14 px patches, a 64-word visual vocabulary."""
    import torch
    from transformers import Ovis2Config, Ovis2ForConditionalGeneration, Ovis2ImageProcessorPil, Ovis2Processor

    tokenizer = family_tokenizer(["<image>", "<IMG_ATOM>", *INDICATORS, "<|im_start|>"], bos=None,
                                 eos="<|im_end|>", pad="<|endoftext|>", add_bos=False)
    tile, patch = 28, 14
    image_processor = Ovis2ImageProcessorPil(size={"height": tile, "width": tile}, crop_to_patches=True,
                                             min_patches=1, max_patches=4)
    processor = Ovis2Processor(image_processor=image_processor, tokenizer=tokenizer,
                               image_seq_length=(tile // patch) ** 2, chat_template=CHAT_TEMPLATE)
    text = text_sizes(tokenizer)
    config = Ovis2Config(
        vision_config=vision_sizes(tile, patch, vocab_size=64, hidden_stride=1),
        text_config={"model_type": "qwen2", **text},
        image_token_id=tokenizer.convert_tokens_to_ids("<IMG_ATOM>"),
        visual_indicator_token_ids=tokenizer.convert_tokens_to_ids(INDICATORS), vocab_size=len(tokenizer),
        hidden_size=text["hidden_size"], tie_word_embeddings=False, initializer_range=WEIGHT_SCALE,
    )
    torch.manual_seed(0)
    finish(Ovis2ForConditionalGeneration(config), processor, directory)
