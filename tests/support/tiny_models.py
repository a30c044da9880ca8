"""Tiny random-weight vision-language models, built offline for tests and the demo.

Everything is made here: a byte-level BPE tokenizer trained on a few sentences, the image processor configuration,
the model configuration with random weights, and a chat template that puts the images before the text. The result is
saved with ``save_pretrained`` so the backend loads it through the same ``AutoProcessor`` +
``AutoModelForImageTextToText`` path as a real checkpoint. Only PIL image processors are used (no torchvision).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.support.build_once import build_once
from tests.support.tiny_tokenizer import (
    BOS_LLAVA_CHAT_TEMPLATE,
    IDEFICS3_CHAT_TEMPLATE,
    LLAVA_CHAT_TEMPLATE,
    train_tokenizer,
)

WEIGHT_SCALE = 0.1
"""Standard deviation of the random weights: larger than the usual 0.02 so that answers and option scores differ
clearly from row to row, which the equality tests need in order to mean something."""


@dataclass(frozen=True)
class LlavaShape:
    """The size of a random-weight LLaVA (CLIP-like vision tower, Llama-like text model)."""

    image_size: int = 28
    """Side of the square image the vision tower sees, in pixels."""
    patch_size: int = 14
    """Side of a vision patch; (image_size / patch_size)^2 image tokens per image."""
    vision_hidden: int = 32
    """Vision tower width."""
    vision_layers: int = 2
    """Vision tower depth (features come from the second-to-last layer, as in LLaVA-1.5)."""
    vision_heads: int = 2
    """Vision attention heads."""
    text_hidden: int = 48
    """Text model width."""
    text_intermediate: int = 96
    """Text model MLP width."""
    text_layers: int = 2
    """Text model depth."""
    text_heads: int = 4
    """Text attention heads."""
    text_kv_heads: int = 2
    """Text key/value heads."""
    vocab_size: int | None = None
    """Embedding rows; None means exactly the trained tokenizer's size (a larger value costs what a real vocabulary
    costs in the output layer)."""
    weight_scale: float = WEIGHT_SCALE
    """Standard deviation of the random weights."""


TINY_LLAVA = LlavaShape()
"""The test model: 4 image tokens, 2 + 2 layers, a few hundred thousand parameters."""


def build_llava(shape: LlavaShape = TINY_LLAVA, *, seed: int = 0, dtype=None, bos_template: bool = False,
                add_bos: bool | None = None, chat_template: str | None = None):
    """Make a random-weight LLaVA and its processor in memory.

    Args:
        shape: Its size.
        seed: Seed of the random weights.
        dtype: ``torch.dtype`` of the weights (float32 when None).
        bos_template: A tokenizer that adds BOS like Llama's and a chat template that writes BOS itself (the pair
            that doubles BOS when a processor is called with its default ``add_special_tokens=True``).
        add_bos: Whether the tokenizer adds BOS (default: ``bos_template``).
        chat_template: The chat template (default: LLaVA's, behind ``{{ bos_token }}`` with ``bos_template``).

    Returns:
        ``(model, processor)``.
    """
    import torch
    from transformers import (
        CLIPImageProcessorPil,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    tokenizer = train_tokenizer(["<image>"], add_bos=bos_template if add_bos is None else add_bos)
    if chat_template is None:
        chat_template = BOS_LLAVA_CHAT_TEMPLATE if bos_template else LLAVA_CHAT_TEMPLATE
    size = shape.image_size
    image_processor = CLIPImageProcessorPil(size={"shortest_edge": size}, crop_size={"height": size, "width": size})
    processor = LlavaProcessor(
        image_processor=image_processor, tokenizer=tokenizer, patch_size=shape.patch_size,
        vision_feature_select_strategy="default", num_additional_image_tokens=1,
        chat_template=chat_template,
    )
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(
            hidden_size=shape.vision_hidden, intermediate_size=4 * shape.vision_hidden,
            num_hidden_layers=shape.vision_layers, num_attention_heads=shape.vision_heads, image_size=size,
            patch_size=shape.patch_size, projection_dim=shape.vision_hidden, initializer_range=shape.weight_scale,
        ),
        text_config=LlamaConfig(
            vocab_size=shape.vocab_size or len(tokenizer), hidden_size=shape.text_hidden,
            intermediate_size=shape.text_intermediate, num_hidden_layers=shape.text_layers,
            num_attention_heads=shape.text_heads, num_key_value_heads=shape.text_kv_heads,
            max_position_embeddings=4096, bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
            initializer_range=shape.weight_scale,
        ),
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default", vision_feature_layer=-2,
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config)
    if dtype is not None:
        model = model.to(dtype)
    set_generation_tokens(model, tokenizer)
    return model.eval(), processor


def build_tiny_llava(directory: Path, *, seed: int = 0) -> Path:
    """Save the tiny random-weight LLaVA (:data:`TINY_LLAVA`) with its processor.

    Args:
        directory: Where to save it (created).
        seed: Seed of the random weights.

    Returns:
        ``directory``, loadable with ``AutoProcessor`` and ``AutoModelForImageTextToText``.
    """
    model, processor = build_llava(TINY_LLAVA, seed=seed)
    save_model(model, processor, directory)
    return directory


def build_tiny_llava_bos(directory: Path, *, seed: int = 0) -> Path:
    """The tiny LLaVA with a BOS-adding tokenizer and a template that starts with BOS (see :func:`build_llava`)."""
    model, processor = build_llava(TINY_LLAVA, seed=seed, bos_template=True)
    save_model(model, processor, directory)
    return directory


def set_generation_tokens(model, tokenizer) -> None:
    """Make greedy decoding stop at the tokenizer's EOS and pad with its pad token (``</s>`` and ``<pad>`` here)."""
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.bos_token_id = tokenizer.bos_token_id


def save_model(model, processor, directory: Path) -> None:
    """Save model and processor where ``AutoProcessor`` and ``AutoModelForImageTextToText`` find them."""
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    processor.save_pretrained(directory)


IDEFICS3_SPECIAL_TOKENS = [
    "<image>", "<fake_token_around_image>", "<global-img>", "<end_of_utterance>", "<|im_start|>",
    *(f"<row_{row}_col_{col}>" for row in range(1, 7) for col in range(1, 7)),
]
"""The placeholders Idefics3's processor writes around image tokens (one per tile position up to 6x6)."""


def build_idefics3(*, seed: int = 0, add_bos: bool = False, chat_template: str = IDEFICS3_CHAT_TEMPLATE,
                   text_overrides: dict | None = None):
    """Make a random-weight Idefics3 (SigLIP-like vision tower, pixel shuffle, Llama text model) and its processor.

    Images are split into tiles of 56 px plus a global view, as the real model does at 364 px.

    Args:
        seed: Seed of the random weights.
        add_bos: Whether the tokenizer adds BOS (Llama 3's, which the real checkpoint has, does).
        chat_template: The chat template.
        text_overrides: Text configuration values replacing the tiny ones (wider heads for vLLM).

    Returns:
        ``(model, processor)``.
    """
    import torch
    from transformers import (
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3ImageProcessorPil,
        Idefics3Processor,
        Idefics3VisionConfig,
        LlamaConfig,
    )

    tokenizer = train_tokenizer(IDEFICS3_SPECIAL_TOKENS, add_bos=add_bos)
    tile_size, patch_size, scale_factor = 56, 14, 2
    image_processor = Idefics3ImageProcessorPil(
        size={"longest_edge": 2 * tile_size}, max_image_size={"longest_edge": tile_size},
    )
    image_seq_len = (tile_size // patch_size) ** 2 // scale_factor**2
    processor = Idefics3Processor(
        image_processor=image_processor, tokenizer=tokenizer, image_seq_len=image_seq_len,
        chat_template=chat_template,
    )
    config = Idefics3Config(
        vision_config=Idefics3VisionConfig(
            hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
            image_size=tile_size, patch_size=patch_size, initializer_range=WEIGHT_SCALE,
        ),
        text_config=LlamaConfig(**{
            "vocab_size": len(tokenizer), "hidden_size": 48, "intermediate_size": 96, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 1024,
            "bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id, "initializer_range": WEIGHT_SCALE, **(text_overrides or {}),
        }),
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"), scale_factor=scale_factor,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = Idefics3ForConditionalGeneration(config)
    set_generation_tokens(model, tokenizer)
    return model.eval(), processor


def build_tiny_idefics3(directory: Path, *, seed: int = 0) -> Path:
    """Save the tiny random-weight Idefics3 of :func:`build_idefics3` (a tokenizer without BOS).

    Args:
        directory: Where to save it (created).
        seed: Seed of the random weights.

    Returns:
        ``directory``, loadable with ``AutoProcessor`` and ``AutoModelForImageTextToText``.
    """
    model, processor = build_idefics3(seed=seed)
    save_model(model, processor, directory)
    return directory


VLLM_LLAVA = LlavaShape(vision_hidden=32, vision_heads=1, text_hidden=64, text_heads=2, text_kv_heads=1)
"""The tiny LLaVA with attention heads of 32 dimensions: vLLM's CPU attention supports head sizes 32-256 only."""


def build_vllm_llava(directory: Path, *, seed: int = 0) -> Path:
    """Save a tiny random-weight LLaVA that both vLLM and ``transformers`` load (:data:`VLLM_LLAVA`).

    Args:
        directory: Where to save it (created).
        seed: Seed of the random weights.

    Returns:
        ``directory``.
    """
    model, processor = build_llava(VLLM_LLAVA, seed=seed)
    save_with_published_names(model, processor, directory)
    return directory


def save_with_published_names(model, processor, directory: Path) -> None:
    """Save a LLaVA with the weight names of published checkpoints, which vLLM's loader expects.

    ``transformers`` 5 saves the CLIP vision tower's weights as ``vision_tower.embeddings...``; published LLaVA
    checkpoints name them ``vision_tower.vision_model.embeddings...``. The saved file is rewritten with the published
    names, which ``transformers`` loads too, so the checkpoint looks like a real one to both.
    """
    save_model(model, processor, directory)
    publish_vision_tower_names(directory)


def publish_vision_tower_names(directory: Path) -> None:
    """Rewrite a saved model's CLIP or SigLIP vision tower weights under the names of published checkpoints
    (``vision_tower.vision_model.embeddings...``), which vLLM's loaders expect and ``transformers`` loads too. Other
    towers (InternVL's, Pixtral's, Qwen's) are left as they are."""
    import json

    from safetensors.torch import load_file, save_file

    vision = json.loads((directory / "config.json").read_text()).get("vision_config") or {}
    if vision.get("model_type") not in ("clip_vision_model", "siglip_vision_model"):
        return
    weights_file = directory / "model.safetensors"
    tensors = load_file(weights_file)
    renamed = {published_tower_name(name): tensor for name, tensor in tensors.items()}
    save_file(renamed, weights_file, metadata={"format": "pt"})


def published_tower_name(name: str) -> str:
    """A weight's name with the CLIP or SigLIP tower's ``vision_model`` level that published checkpoints have, where
    the tower's weights sit at the top (``vision_tower.``) or under the model (``model.vision_tower.``, as
    ``transformers`` 5 saves Cohere2-Vision)."""
    for tower in ("vision_tower.", "model.vision_tower."):
        if name.startswith(tower) and not name.startswith(f"{tower}vision_model."):
            return f"{tower}vision_model.{name.removeprefix(tower)}"
    return name


BUILDERS = {"llava": build_tiny_llava, "llava-bos": build_tiny_llava_bos, "idefics3": build_tiny_idefics3,
            "vllm-llava": build_vllm_llava}
"""Architecture name -> builder."""


def build_cached(architecture: str, directory: Path) -> Path:
    """Build a tiny model into ``directory`` unless a finished build is already there.

    The build goes to a temporary sibling first and is renamed into place, so a run that is interrupted, or two runs
    at once, never leave a half-saved model behind.

    Args:
        architecture: A key of :data:`BUILDERS`.
        directory: The model directory to create.

    Returns:
        ``directory``.
    """
    return build_once(directory, BUILDERS[architecture], finished_marker="model.safetensors")


def session_model_dir(tmp_path_factory, architecture: str) -> Path:
    """The tiny model of ``architecture`` for this test session, built on first use into pytest's temporary base.

    Test modules call this from their own session-scoped fixtures; the build happens once per session however many
    modules ask for it.
    """
    return build_cached(architecture, tmp_path_factory.getbasetemp() / "tiny-models" / architecture)
