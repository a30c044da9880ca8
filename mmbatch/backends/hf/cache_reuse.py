"""Whether option passes may continue a row's prompt on its reused cache, and at which positions.

The fast likelihood paths run the prompt once and feed each option on top of its cache (the prompt's keys and
values, or the recurrent state of linear-attention layers). That is the model's own computation only if the option
tokens get the positions the model itself would give them after the prompt:

- plain positions: the count of the row's real tokens before them;
- multimodal rotary positions (M-RoPE: Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5, GLM-4V): the model derives 3-D time,
  height and width positions for image tokens from the whole prompt, and text after the last image continues from
  the largest position used. After each prompt pass the model keeps the offset of that continuation per row
  (``rope_deltas``: largest position + 1 - real tokens) on the module that computes the positions, and its own
  ``generate`` places new tokens at real-token count + offset. The option pass does the same
  (:func:`rope_offsets_holder`).

Caches the option pass can continue (:data:`CONTINUABLE_LAYER_TYPES`): plain attention, and the linear-attention
(gated delta net) layers of Qwen3.5, whose convolution and recurrent states the model carries on over several new
tokens and which ``reorder_cache`` selects per option row. Left padding before a prompt leaves such a state at zero,
as without padding; padding after it is never read. Other caches (sliding-window and chunked layers of Gemma 3 and
Llama 4 keep a window) give every option its own full pass, with positions the model derives itself
(:func:`cache_reuse_blocker`). Rows of one group sharing a prefix pass (:mod:`group_prefix`, :mod:`group_likelihood`)
put padding between the prefix and each row's rest: attention masks it, but a linear-attention state would decay
over it, so such layers share no prefix (:func:`prefix_sharing_blocker`).
"""

from __future__ import annotations

from typing import Any

CONTINUABLE_LAYER_TYPES = frozenset({"full_attention", "attention", "linear_attention"})
"""``layer_types`` values whose cache an option pass may continue: plain keys and values, and linear attention's
convolution and recurrent states."""

RECURRENT_LAYER_TYPES = frozenset({"linear_attention"})
"""``layer_types`` values that keep a recurrent state, which padding inside a sequence would change."""


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


MEDIA_LAYOUT_INPUTS = ("image_grid_thw", "video_grid_thw", "target_sizes", "target_sizes_videos")
"""Processor outputs from which an M-RoPE model lays out its images' and videos' positions: the patch grids of
Qwen-VL and GLM-4V (``*_grid_thw``) and of MiniCPM-V 4.7's canvas M-RoPE (``target_sizes*``). A prompt pass with
one of them gets its positions, and keeps its offsets, from the model itself."""


def rope_offsets_holder(model: Any) -> Any | None:
    """The module that computes an M-RoPE model's positions and keeps ``rope_deltas`` after each pass (the inner
    model of Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5, GLM-4V and MiniCPM-V 4.7); None for a model without M-RoPE or
    one that keeps no offsets where its ``generate`` reads them."""
    for part in _parts(model):
        if hasattr(part, "get_rope_index") and hasattr(part, "rope_deltas"):
            return part
    return None


def cache_reuse_blocker(model: Any) -> str | None:
    """Why option passes must not continue ``model``'s prompt cache, or None when they may."""
    if has_multimodal_positions(model) and rope_offsets_holder(model) is None:
        return "multimodal rotary positions (M-RoPE) whose offsets the model does not keep"
    text = _text_config(model)
    other = sorted({str(kind) for kind in _layer_types(model) if kind not in CONTINUABLE_LAYER_TYPES})
    if other:
        return f"layers whose cache cannot be continued ({', '.join(other)})"
    if getattr(text, "sliding_window", None) and getattr(text, "use_sliding_window", True):
        return "sliding-window attention"
    return None


def prefix_sharing_blocker(model: Any) -> str | None:
    """Why rows of one group must not share a prefill of their common prefix on ``model``, or None when they may."""
    if (blocker := cache_reuse_blocker(model)) is not None:
        return blocker
    recurrent = sorted({str(kind) for kind in _layer_types(model) if kind in RECURRENT_LAYER_TYPES})
    if recurrent:
        return f"recurrent layers ({', '.join(recurrent)}): padding after a shared prefix would reach their state"
    return None


def _text_config(model: Any) -> Any:
    """The configuration of the model's text part (the model's own when it has no separate one)."""
    config = model.config
    return getattr(config, "text_config", None) or config


def _layer_types(model: Any) -> list[Any]:
    """The text layers' kinds (``full_attention``, ``linear_attention``...); empty when the configuration lists none."""
    return list(getattr(_text_config(model), "layer_types", None) or [])
