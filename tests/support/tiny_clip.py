"""A tiny random-weight CLIP saved with ``save_pretrained``, so tests load it through ``AutoModel``/``AutoProcessor``
exactly as a real CLIP checkpoint is loaded."""

from __future__ import annotations

from pathlib import Path

from tests.support.build_once import build_once
from tests.support.tiny_tokenizer import train_tokenizer

REPO_ROOT = Path(__file__).resolve().parents[2]
CLIP_CACHE = REPO_ROOT / ".cache" / "tiny-models" / "clip-v1"
"""Built once and reused across test runs (the name changes whenever the recipe does)."""


def build_tiny_clip(directory: Path, *, seed: int = 0) -> Path:
    """Save a 2-layer CLIP (32-pixel pictures, 16-d embeddings) with its processor into ``directory``."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

    torch.manual_seed(seed)
    tokenizer = train_tokenizer([], vocab_size=300)
    config = CLIPConfig(
        text_config={"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "max_position_embeddings": 64, "pad_token_id": 0, "bos_token_id": 1,
                     "eos_token_id": 2},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                       "image_size": 32, "patch_size": 8},
        projection_dim=16,
    )
    model = CLIPModel(config).eval()
    image_processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    CLIPProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(directory)
    model.save_pretrained(directory)
    return directory


def tiny_clip() -> Path:
    """The cached tiny CLIP, built on first use (:func:`~tests.support.build_once.build_once`)."""
    return build_once(CLIP_CACHE, build_tiny_clip, finished_marker="model.safetensors")
