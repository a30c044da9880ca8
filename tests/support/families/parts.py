"""Pieces the family builders share: tiny text and vision configurations, and saving a built model.

Every part is sized for a CPU test: a few hundred thousand parameters, attention heads of 8-16 dimensions, random
weights drawn wider than usual (:data:`~tests.support.tiny_models.WEIGHT_SCALE`) so rows answer differently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.tiny_models import WEIGHT_SCALE, save_model, set_generation_tokens
from tests.support.tiny_tokenizer import TRAINING_TEXT


def text_sizes(tokenizer: Any, **overrides: Any) -> dict[str, Any]:
    """Keyword arguments of a tiny decoder-only text configuration (Llama-like names) for ``tokenizer``.

    Families whose text model is not Llama (Gemma, Cohere) take the same names; ``overrides`` sets the rest.
    """
    sizes: dict[str, Any] = {
        "vocab_size": len(tokenizer), "hidden_size": 48, "intermediate_size": 96, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 12, "max_position_embeddings": 1024,
        "bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id, "initializer_range": WEIGHT_SCALE,
    }
    sizes.update(overrides)
    return sizes


def vision_sizes(image_size: int, patch_size: int, **overrides: Any) -> dict[str, Any]:
    """Keyword arguments of a tiny ViT-like vision configuration (CLIP and SigLIP names)."""
    sizes: dict[str, Any] = {
        "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
        "image_size": image_size, "patch_size": patch_size, "initializer_range": WEIGHT_SCALE,
    }
    sizes.update(overrides)
    return sizes


def finish(model: Any, processor: Any, directory: Path) -> None:
    """Make greedy decoding stop at the tokenizer's EOS and pad with its pad token, then save model and processor."""
    set_generation_tokens(model, processor.tokenizer)
    save_model(model.eval(), processor, directory)


def family_tokenizer(special_tokens: list[str], *, bos: str | None, eos: str, pad: str, add_bos: bool,
                     named: dict[str, str] | None = None) -> Any:
    """A trained tokenizer with the family's own names for BOS, EOS and padding (Qwen2's has no BOS and ends turns
    with ``<|im_end|>``; Gemma's are ``<bos>``/``<eos>``), since chat templates and processors write those strings
    and generation stops at the checkpoint's EOS.

    Args:
        special_tokens: Tokens kept whole besides ``bos``, ``eos`` and ``pad`` (image placeholders, turn markers).
        bos: The BOS token's text, or None for tokenizers without one (Qwen2's).
        eos: The end-of-sequence token (the one that ends the assistant's turn, so generation stops there).
        pad: The padding token.
        add_bos: Whether encoding with special tokens prepends ``bos`` (Gemma's, Llama's and Mistral's do).
        named: Extra special tokens the processor reads as tokenizer attributes (``{"video_token": "<video>"}``
            gives ``tokenizer.video_token`` and ``tokenizer.video_token_id``).
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    named = named or {}
    fixed = [token for token in [pad, bos, eos] if token is not None]
    extra = list(dict.fromkeys(token for token in [*special_tokens, *named.values()] if token not in fixed))
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=[*fixed, *extra],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    core.train_from_iterator(TRAINING_TEXT, trainer=trainer)
    if add_bos:
        if bos is None:
            raise ValueError("add_bos needs a bos token")
        core.post_processor = processors.TemplateProcessing(single=f"{bos} $A", pair=f"{bos} $A {bos} $B",
                                                            special_tokens=[(bos, core.token_to_id(bos))])
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token=bos, eos_token=eos, pad_token=pad,
                                   additional_special_tokens=extra,
                                   extra_special_tokens=named, padding_side="left")
