"""Whether option passes may continue a row's prompt on its reused key/value cache with 1-D positions.

The fast likelihood paths run the prompt once and feed each option on top of the cached keys and values, with
position ids counted from the attention mask. That is only the model's own computation when its positions are plain
token counts and its cache is plain attention. It is not for models that compute 3-D image/time positions from the
whole sequence (M-RoPE: Qwen2-VL, Qwen2.5-VL, Qwen3-VL, GLM-4V), nor for caches that are not plain attention
(linear-attention layers of Qwen3.5, sliding-window or chunked layers of Gemma 3 and Llama 4): there the fast paths
would give wrong log-probs, so every option gets its own full pass, whose positions the model derives itself.
"""

from __future__ import annotations

from typing import Any

PLAIN_LAYER_TYPES = frozenset({"full_attention", "attention"})
"""``layer_types`` values that keep a plain key/value cache."""


def has_multimodal_positions(model: Any) -> bool:
    """Whether the model computes rotary positions from the whole multimodal sequence (Qwen2-VL's M-RoPE)."""
    return any(hasattr(part, "get_rope_index") for part in (model, getattr(model, "model", None)) if part is not None)


def cache_reuse_blocker(model: Any) -> str | None:
    """Why ``model``'s prompt cache must not be reused for option passes, or None when it may be."""
    if has_multimodal_positions(model):
        return "multimodal rotary positions (M-RoPE)"
    config = model.config
    text = getattr(config, "text_config", None) or config
    for part in (config, text):
        rope = getattr(part, "rope_parameters", None) or getattr(part, "rope_scaling", None)
        if isinstance(rope, dict) and ("mrope_section" in rope or rope.get("rope_type") == "mrope"):
            return "multimodal rotary positions (M-RoPE)"
    other = sorted({str(kind) for kind in getattr(text, "layer_types", None) or [] if kind not in PLAIN_LAYER_TYPES})
    if other:
        return f"layers that keep no plain attention cache ({', '.join(other)})"
    if getattr(text, "sliding_window", None) and getattr(text, "use_sliding_window", True):
        return "sliding-window attention"
    return None
