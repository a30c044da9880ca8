"""MiniCPM-V 4.6 and 4.7: a SigLIP-like NaViT tower over the image at its own aspect ratio (an overview plus up to a few
slices when it is large), a window-attention merger inside the tower and an MLP merger after it (each 2x2 patches into
one: 16 patches per token), and a Qwen3.5 text model (gated-delta-net linear attention, then gated full attention). As
in ``openbmb/MiniCPM-V-4.6``, the tokenizer is Qwen's (no BOS, turns end with ``<|im_end|>``), the chat template writes
``<|image_pad|>`` for an image and ``<|video_pad|>`` for a video, and the processor expands each into
``<image_id>N</image_id><image>...</image>`` then the slices' ``<slice>...</slice>`` rows; a video is its frames, each
such an overview (and slices) of ``<|video_pad|>`` tokens. MiniCPM-V 4.7 is the same model whose text positions are a
canvas M-RoPE laid out from the markers around each overview and slice (its processor marks the media tokens,
``mm_token_type_ids``), and whose videos carry no ``<image_id>``.

Their image processor has a PIL variant; their video processor exists only in the torchvision build: the families run in
the test environment that has torchvision (``make torchvision-env``), where their video input is tested too
(``tests/test_torchvision_video.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.families.parts import family_tokenizer, finish, mrope_section, text_sizes, text_width
from tests.support.tiny_models import WEIGHT_SCALE

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for content in message['content'] %}"
    "{% if content['type'] == 'image' %}{{ '<|image_pad|>' }}"
    "{% elif content['type'] == 'video' %}{{ '<|video_pad|>' }}"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "{{ '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
"""ChatML turns, an image written ``<|image_pad|>`` and a video ``<|video_pad|>`` where the message has them."""

TOKENS = {"image_token": "<|image_pad|>", "video_token": "<|video_pad|>", "image_start_token": "<image>",
          "image_end_token": "</image>", "slice_start_token": "<slice>", "slice_end_token": "</slice>",
          "image_id_start_token": "<image_id>", "image_id_end_token": "</image_id>"}
"""The image and video tokens the processor reads from its tokenizer."""

PATCH = 4
"""Vision patch side in pixels: 16 patches (4x4, two 2x2 merges) make one token."""
SCALE = 32
"""``scale_resolution``: an overview (or slice) of about 32x32 px, 4 tokens; larger images are sliced."""
MAX_SLICES = 4
"""Slices of a large image (images, and video frames) at most."""


def build_minicpmv4_6(directory: Path) -> None:
    """Save a tiny MiniCPM-V 4.6: 4 px patches merged twice 2x2 (the window merger after the first of two vision
    layers), overviews and slices of about 32 px; one linear-attention then one full-attention text layer."""
    from transformers import (
        MiniCPMV4_6Config,
        MiniCPMV4_6ForConditionalGeneration,
        MiniCPMV4_6Processor,
        MiniCPMV4_6VisionConfig,
    )

    _build(directory, MiniCPMV4_6Processor, MiniCPMV4_6Config, MiniCPMV4_6VisionConfig,
           MiniCPMV4_6ForConditionalGeneration, {})


def build_minicpmv4_7(directory: Path) -> None:
    """Save a tiny MiniCPM-V 4.7: MiniCPM-V 4.6's layout whose text positions are its canvas M-RoPE (each overview and
    slice laid out in time, height and width from the markers around it, which the configuration names), and whose
    processor gives per-token modality types (``mm_token_type_ids``)."""
    from transformers import (
        MiniCPMV4_7Config,
        MiniCPMV4_7ForConditionalGeneration,
        MiniCPMV4_7Processor,
        MiniCPMV4_7VisionConfig,
    )

    markers = {"image_start_id": TOKENS["image_start_token"], "image_end_id": TOKENS["image_end_token"],
               "slice_start_id": TOKENS["slice_start_token"], "slice_end_id": TOKENS["slice_end_token"],
               "newline_id": "\n"}
    _build(directory, MiniCPMV4_7Processor, MiniCPMV4_7Config, MiniCPMV4_7VisionConfig,
           MiniCPMV4_7ForConditionalGeneration, markers)


def build_minicpm_ocr(directory: Path) -> None:
    """Save a tiny MiniCPM-OCR: MiniCPM-V 4.6's layout read at ``4x`` (the window merger skipped: 4 patches per token,
    as text-dense pages are read), its own image processor (torchvision only) and input and output embeddings tied."""
    from transformers import (
        MiniCPMOcrConfig,
        MiniCPMOcrForConditionalGeneration,
        MiniCPMOcrImageProcessor,
        MiniCPMOcrProcessor,
        MiniCPMOcrVideoProcessor,
        MiniCPMOcrVisionConfig,
    )

    _build(directory, MiniCPMOcrProcessor, MiniCPMOcrConfig, MiniCPMOcrVisionConfig,
           MiniCPMOcrForConditionalGeneration, {},
           media_processors=(MiniCPMOcrImageProcessor, MiniCPMOcrVideoProcessor), image_size=None)


def _build(directory: Path, processor_class: Any, config_class: Any, vision_class: Any, model_class: Any,
           markers: dict[str, str], *, media_processors: tuple[Any, Any] | None = None,
           image_size: int | None = SCALE) -> None:
    """Build and save one of the MiniCPM models; ``image_size`` None for a configuration without one (MiniCPM-OCR)."""
    import torch
    from transformers import MiniCPMV4_6VideoProcessor
    from transformers.models.minicpmv4_6.image_processing_pil_minicpmv4_6 import MiniCPMV4_6ImageProcessorPil

    tokenizer = family_tokenizer(["<|im_start|>"], bos=None, eos="<|im_end|>", pad="<|endoftext|>",
                                 add_bos=False, named=TOKENS)
    sizes = {"patch_size": PATCH, "scale_resolution": SCALE, "max_slice_nums": MAX_SLICES}
    # MiniCPM-V 4.7 uses 4.6's image and video processors (transformers' auto mappings say so).
    image_class, video_class = media_processors or (MiniCPMV4_6ImageProcessorPil, MiniCPMV4_6VideoProcessor)
    processor = processor_class(image_processor=image_class(**sizes), video_processor=video_class(**sizes),
                                tokenizer=tokenizer, chat_template=CHAT_TEMPLATE)
    head_dim = max(16, text_width().head_dim)
    text = text_sizes(
        tokenizer, model_type="qwen3_5_text", head_dim=head_dim, layer_types=["linear_attention", "full_attention"],
        linear_conv_kernel_dim=4, linear_key_head_dim=8, linear_value_head_dim=8, linear_num_key_heads=2,
        linear_num_value_heads=4,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5,
                         "mrope_section": mrope_section(head_dim // 4), "mrope_interleaved": True})
    vision = vision_class(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                          image_size=2 * SCALE, patch_size=PATCH, insert_layer_id=0, initializer_range=WEIGHT_SCALE)
    sized = {} if image_size is None else {"image_size": image_size}
    model_config = config_class(
        text_config=text, vision_config=vision, insert_layer_id=0, **sized,
        image_token_id=tokenizer.convert_tokens_to_ids(TOKENS["image_token"]),
        video_token_id=tokenizer.convert_tokens_to_ids(TOKENS["video_token"]), initializer_range=WEIGHT_SCALE,
        **{name: single_token(tokenizer, text) for name, text in markers.items()})
    torch.manual_seed(0)
    finish(model_class(model_config), processor, directory)


def single_token(tokenizer: Any, text: str) -> int:
    """The id of the one token ``text`` encodes to (a marker, or the newline between slice rows)."""
    [token] = tokenizer.encode(text, add_special_tokens=False)
    return int(token)
