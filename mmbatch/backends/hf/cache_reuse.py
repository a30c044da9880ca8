"""Whether option passes may continue a row's prompt on its reused key/value cache, and at which positions.

The fast likelihood paths run the prompt once and feed each option on top of the cached keys and values. That is the
model's own computation only if the option tokens get the positions the model itself would give them after the
prompt:

- plain positions: the count of the row's real tokens before them;
- multimodal rotary positions (M-RoPE: Qwen2-VL, Qwen2.5-VL, Qwen3-VL, GLM-4V): the model derives 3-D time, height
  and width positions for image tokens from the whole prompt, and text after the last image continues from the
  largest position used. After each prompt pass the model keeps the offset of that continuation per row
  (``rope_deltas``: largest position + 1 - real tokens) on the module that computes the positions, and its own
  ``generate`` places new tokens at real-token count + offset. The option pass does the same
  (:func:`rope_offsets_holder`).

A cache that is not plain attention cannot be selected or repeated per option (the linear-attention layers of
Qwen3.5 keep a recurrent state, sliding-window and chunked layers of Gemma 3 and Llama 4 keep a window): there every
option gets its own full pass, with positions the model derives itself (:func:`cache_reuse_blocker`), and rows of one
group do not share a prefix pass (:mod:`group_prefix`, :mod:`group_likelihood`), which continues a cache the same way.
"""

from __future__ import annotations

from typing import Any

PLAIN_LAYER_TYPES = frozenset({"full_attention", "attention"})
"""``layer_types`` values that keep a plain key/value cache."""

def _parts(model: Any) -> list[Any]:
    """The model and its inner model (``ForConditionalGeneration.model``), where position machinery lives."""
    return [part for part in (model, getattr(model, "model", None)) if part is not None]


def has_multimodal_positions(model: Any) -> bool:
    """Whether the model computes rotary positions from the whole multimodal sequence (Qwen2-VL's M-RoPE)."""
    if any(hasattr(part, "get_rope_index") for part in _parts(model)):
        return True
    config = model.config
    for part in (config, getattr(config, "text_config", None) or config):
        rope = getattr(part, "rope_parameters", None) or getattr(part, "rope_scaling", None)
        if isinstance(rope, dict) and ("mrope_section" in rope or rope.get("rope_type") == "mrope"):
            return True
    return False


def rope_offsets_holder(model: Any) -> Any | None:
    """The module that computes an M-RoPE model's positions and keeps ``rope_deltas`` after each pass (the inner
    model of Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5 and GLM-4V); None for a model without M-RoPE or one that keeps no
    offsets where its ``generate`` reads them."""
    for part in _parts(model):
        if hasattr(part, "get_rope_index") and hasattr(part, "rope_deltas"):
            return part
    return None


def cache_reuse_blocker(model: Any) -> str | None:
    """Why option passes must not continue ``model``'s prompt cache, or None when they may."""
    if has_multimodal_positions(model) and rope_offsets_holder(model) is None:
        return "multimodal rotary positions (M-RoPE) whose offsets the model does not keep"
    config = model.config
    text = getattr(config, "text_config", None) or config
    other = sorted({str(kind) for kind in getattr(text, "layer_types", None) or [] if kind not in PLAIN_LAYER_TYPES})
    if other:
        return f"layers that keep no plain attention cache ({', '.join(other)})"
    if getattr(text, "sliding_window", None) and getattr(text, "use_sliding_window", True):
        return "sliding-window attention"
    return None
