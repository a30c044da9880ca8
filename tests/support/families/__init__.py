"""The architecture matrix: one tiny random-weight model per image-text-to-text family of ``transformers``.

Each family module builds its model offline (a tokenizer trained in the test that adds BOS where the real one does,
the family's own processor with its PIL image processor, a random-weight configuration of a few hundred thousand
parameters) and saves it with ``save_pretrained``, so the ``hf`` backend loads it through the same path as the
published checkpoint. :func:`family_model` builds each once and keeps it under ``.cache/tiny-families`` across test
runs, keyed by the ``transformers`` version and the builder's source.

Adding a family is one module here with a ``build(directory)`` function and one :data:`FAMILIES` line;
``tests/test_family_matrix.py`` then runs the three assertions on it and ``docs/models.md`` lists it.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from tests.support.build_once import build_once
from tests.support.families.parts import vllm_width
from tests.support.tiny_models import publish_vision_tower_names

CACHE = Path(__file__).resolve().parents[3] / ".cache" / "tiny-families"
"""Where built models are kept between test runs (ignored by git)."""


@dataclass(frozen=True)
class Family:
    """One architecture family of the matrix."""

    name: str
    """The family as ``docs/models.md`` names it (``Qwen2-VL``)."""
    module: str
    """Module under ``tests.support.families`` whose ``build(directory)`` saves the tiny model."""
    builder: str = "build"
    """The function of ``module`` that builds it (a module may hold several variants)."""
    multi_image: bool = True
    """Whether the family takes several images in one message (a row with two images is tested)."""
    max_new_tokens: int = 6
    """Tokens generated per row in the generation assertions."""
    prefix_lm: bool = False
    """PaliGemma: the checkpoint ships no chat template, the model's own inputs are its processor's format
    (``processor(text=prompt, images=...)``) and an answer is scored as the processor's ``suffix``."""
    needs_torchvision: bool = False
    """Its image processor exists only in transformers' torchvision build: the family runs in the test environment
    that has torchvision (``make torchvision-env``; ``tests/test_torchvision_families.py``)."""

    def build_function(self) -> Callable[[Path], object]:
        """The builder, imported on first use (building needs ``torch`` and ``transformers``)."""
        module = importlib.import_module(f"tests.support.families.{self.module}")
        return getattr(module, self.builder)


FAMILIES: dict[str, Family] = {family.name: family for family in [
    Family("LLaVA-1.5", "llava", "build_llava_15"),
    Family("LLaVA-NeXT", "llava_next", "build_llava_next"),
    Family("LLaVA-NeXT-Video", "llava_next_video", "build_llava_next_video"),
    Family("VipLLaVA", "vipllava", "build_vipllava"),
    Family("Video-LLaVA", "video_llava", "build_video_llava"),
    Family("InternVL", "internvl", "build_internvl"),
    Family("LLaVA-OneVision", "llava_onevision", "build_llava_onevision"),
    Family("SmolVLM", "smolvlm", "build_smolvlm"),
    Family("Gemma 4", "gemma4", "build_gemma4"),
    Family("Mistral3", "mistral3", "build_mistral3"),
    Family("Idefics2", "idefics2", "build_idefics2"),
    Family("Idefics3", "idefics3", "build_idefics3_llama3"),
    Family("Gemma 3", "gemma3", "build_gemma3"),
    Family("Qwen2-VL", "qwen_vl", "build_qwen2_vl"),
    Family("Qwen2.5-VL", "qwen_vl", "build_qwen2_5_vl"),
    Family("Qwen3-VL", "qwen_vl", "build_qwen3_vl"),
    Family("Qwen3-VL-MoE", "qwen_vl", "build_qwen3_vl_moe"),
    Family("Qwen3.5", "qwen_vl", "build_qwen3_5"),
    Family("Qwen3.5-MoE", "qwen_vl", "build_qwen3_5_moe"),
    Family("GLM-4V", "glm4v", "build_glm4v"),
    Family("GLM-4.5V", "glm4v", "build_glm4v_moe"),
    Family("Mllama", "mllama", "build_mllama"),
    Family("Aya Vision", "aya_vision", "build_aya_vision"),
    Family("Janus", "janus", "build_janus_pro"),
    Family("Ovis2", "ovis2", "build_ovis2"),
    Family("DeepSeek-VL", "deepseek_vl", "build_deepseek_vl"),
    Family("DeepSeek-VL hybrid", "deepseek_vl", "build_deepseek_vl_hybrid"),
    Family("PaliGemma", "paligemma", "build_paligemma", prefix_lm=True),
    Family("PaliGemma 2", "paligemma", "build_paligemma2", prefix_lm=True),
    Family("Llama 4", "llama4", "build_llama4", needs_torchvision=True),
    Family("Cohere2-Vision", "cohere2_vision", "build_cohere2_vision", needs_torchvision=True),
    Family("LFM2-VL", "lfm2_vl", "build_lfm2_vl", needs_torchvision=True),
    Family("Molmo2", "molmo2", "build_molmo2", needs_torchvision=True),
    Family("Kimi-K2.5", "kimi_k25", "build_kimi_k25", needs_torchvision=True),
    Family("MiniCPM-V 4.6", "minicpm_v", "build_minicpmv4_6", needs_torchvision=True),
    Family("MiniCPM-V 4.7", "minicpm_v", "build_minicpmv4_7", needs_torchvision=True),
    Family("MiniCPM-OCR", "minicpm_v", "build_minicpm_ocr", needs_torchvision=True),
    Family("Phi-4-multimodal", "phi4_multimodal", "build_phi4_multimodal", needs_torchvision=True),
]}
"""Every family of the matrix, by name."""

TORCHVISION_ONLY = "MMBATCH_TORCHVISION_FAMILIES"
"""Set (to 1) by ``tests/test_torchvision_families.py`` in the torchvision environment: the matrix then runs only the
families that need torchvision (the others ran in the main environment)."""


def matrix_families() -> list[str]:
    """The families this environment runs: those that need torchvision where it imports (only those when
    :data:`TORCHVISION_ONLY` is set), the others where it does not."""
    import importlib.util
    import os

    has_torchvision = importlib.util.find_spec("torchvision") is not None
    only = bool(os.environ.get(TORCHVISION_ONLY))
    return sorted(name for name, family in FAMILIES.items()
                  if (family.needs_torchvision and has_torchvision) or (not family.needs_torchvision and not only))


def family_model(name: str, *, vllm: bool = False) -> Path:
    """The tiny model of family ``name``, built on first use and kept under :data:`CACHE`; with ``vllm``, its variant
    with text heads of 32 dimensions (:data:`~tests.support.families.parts.VLLM_WIDTH`), which vLLM's CPU attention
    takes.

    The build goes to a temporary sibling first and is renamed into place, so an interrupted run, or two runs at once,
    never leave a half-saved model behind. The folder name carries a digest of the ``transformers`` version, the
    builder module's source and that of every test-support module it draws on (:func:`builder_sources`), so a
    changed builder, shared part or library builds anew.
    """
    import transformers

    from tests.support import pixtral_standin
    from tests.support.video_standin import register

    # Builders save, and the backend loads, processors whose video slot holds the stand-in (no torchvision here).
    register()
    # Pixtral's processor (Mistral 3) imports a helper from a torchvision module; the stand-in lets it load here.
    pixtral_standin.register()
    family = FAMILIES[name]
    builder = family.build_function()
    source = builder_sources(importlib.import_module(f"tests.support.families.{family.module}"))
    # The vLLM variant is also made by this module's build_wide (and the renaming it calls).
    variant = f"vllm\n{inspect.getsource(sys.modules[__name__])}{inspect.getsource(publish_vision_tower_names)}" \
        if vllm else ""
    key = hashlib.sha256(f"{transformers.__version__}\n{family}\n{variant}\n{source}".encode()).hexdigest()[:12]
    directory = CACHE / f"{family.module}-{family.builder}{'-vllm' if vllm else ''}-{key}"
    if not vllm:
        return build_once(directory, builder, finished_marker="config.json")

    def build_wide(target: Path) -> None:
        with vllm_width():
            builder(target)
        publish_vision_tower_names(target)  # as published checkpoints name them, which vLLM's loaders expect

    return build_once(directory, build_wide, finished_marker="config.json")


def builder_sources(module: ModuleType) -> str:
    """The source of ``module`` and of every ``tests.support`` module it draws on, directly or through another: the
    modules it imports and those that define the functions, classes and values with a home module it imports
    (``parts``, ``tiny_models``, ``tiny_tokenizer``, a sibling builder...). A builder that needs a sibling's plain
    constants imports the sibling module itself, so that its source counts."""
    found: dict[str, str] = {}
    pending = [module]
    while pending:
        current = pending.pop()
        if current.__name__ in found:
            continue
        found[current.__name__] = inspect.getsource(current)
        for value in vars(current).values():
            home = value if inspect.ismodule(value) else sys.modules.get(getattr(value, "__module__", None) or "")
            if home is not None and home.__name__.startswith("tests.support") and home.__name__ not in found:
                pending.append(home)
    return "".join(found[name] for name in sorted(found))
