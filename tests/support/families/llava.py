"""LLaVA-1.5: a CLIP vision tower, one projector, a Llama text model whose tokenizer adds BOS; the chat template
writes none (``USER: <image>\\n{text} ASSISTANT:``)."""

from __future__ import annotations

from pathlib import Path

from tests.support.tiny_models import TINY_LLAVA, build_llava, save_model
from tests.support.tiny_tokenizer import LLAVA_CHAT_TEMPLATE


def build_llava_15(directory: Path) -> None:
    """Save a tiny LLaVA-1.5 whose tokenizer adds BOS, like ``llava-hf/llava-1.5-7b-hf``'s."""
    model, processor = build_llava(TINY_LLAVA, add_bos=True, chat_template=LLAVA_CHAT_TEMPLATE)
    save_model(model, processor, directory)
