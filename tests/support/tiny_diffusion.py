"""A tiny random-weight Stable Diffusion pipeline saved with ``save_pretrained``, so tests load it through
``DiffusionPipeline.from_pretrained`` exactly as a real checkpoint is loaded."""

from __future__ import annotations

from pathlib import Path

from tests.support.build_once import build_once
from tests.support.tiny_tokenizer import train_tokenizer

REPO_ROOT = Path(__file__).resolve().parents[2]
DIFFUSION_CACHE = REPO_ROOT / ".cache" / "tiny-models" / "stable-diffusion-v1"
"""Built once and reused across test runs (the name changes whenever the recipe does)."""
MAX_PROMPT_TOKENS = 32


def build_tiny_stable_diffusion(directory: Path, *, seed: int = 0) -> Path:
    """Save a Stable-Diffusion-shaped pipeline (UNet, VAE, CLIP text encoder, DDIM) making 32x32 pictures."""
    import torch
    from diffusers import AutoencoderKL, DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel

    torch.manual_seed(seed)
    tokenizer = train_tokenizer([], vocab_size=300)
    tokenizer.model_max_length = MAX_PROMPT_TOKENS
    text_encoder = CLIPTextModel(CLIPTextConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        max_position_embeddings=MAX_PROMPT_TOKENS, pad_token_id=0, bos_token_id=1, eos_token_id=2))
    unet = UNet2DConditionModel(
        sample_size=16, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64),
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"), up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=32, attention_head_dim=8, norm_num_groups=16)
    vae = AutoencoderKL(in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(16, 32),
                        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2,
                        norm_num_groups=16, sample_size=32)
    pipeline = StableDiffusionPipeline(vae=vae, text_encoder=text_encoder, tokenizer=tokenizer, unet=unet,
                                       scheduler=DDIMScheduler(), safety_checker=None, feature_extractor=None,
                                       requires_safety_checker=False)
    pipeline.save_pretrained(directory)
    return directory


def tiny_stable_diffusion() -> Path:
    """The cached tiny pipeline, built on first use (:func:`~tests.support.build_once.build_once`)."""
    return build_once(DIFFUSION_CACHE, build_tiny_stable_diffusion, finished_marker="model_index.json")
