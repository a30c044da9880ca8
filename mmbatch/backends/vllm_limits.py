"""What vLLM cannot run faithfully, found before or as its engine starts, so that the ``vllm`` backend refuses it
(exit 2, with the reason) or fails the rows concerned instead of giving numbers that are not the model's.

Each rule was measured on the matrix's tiny models against the ``hf`` backend with the same ``transformers``
(``tests/test_vllm_families.py``, docs/models.md).
"""

from __future__ import annotations

from typing import Any

from mmbatch.errors import BadInputError

SEVERAL_IMAGES_DIFFER = {
    "llava_onevision": "vllm: vLLM encodes the several images of a LLaVA-OneVision prompt otherwise than transformers, "
                       "the model's reference (on the test model: another answer, option log-probs 2.07 nats off), "
                       "while one-image rows agree; run rows with several images with --backend hf",
}
"""``model_type`` -> why a row with several images fails on this backend: families whose several-image prompts vLLM
0.32 reads otherwise than ``transformers`` (tests/test_vllm_families.py measured it)."""


def causal_prefix_refusal(model_config: Any, model: str) -> str | None:
    """Why vLLM's CPU build cannot run this model faithfully, or None.

    Gemma 3's image tokens and PaliGemma's whole prefix attend to each other both ways (a multimodal prefix LM);
    vLLM's CPU attention has no such mode and reads them causally, so answers and scores are not the model's (on the
    test models: Gemma 3's option log-probs 0.03-0.12 nats off, PaliGemma's greedy answers changed). Its GPU
    attention backends have the mode.
    """
    from vllm.platforms import current_platform

    if not current_platform.is_cpu() or not getattr(model_config, "is_mm_prefix_lm", False):
        return None
    return (f"vLLM's CPU build reads the image tokens of {model!r} ({model_config.hf_config.model_type}) causally, "
            "where the model lets them attend to each other both ways, so its answers and scores would not be the "
            "model's; run it with a GPU build of vLLM, or with --backend hf")


DIFFERS_FROM_TRANSFORMERS = {
    "cohere2_vision": "vLLM 0.32 gives Cohere2-Vision option log-probabilities up to 2.57 nats from those of "
                      "transformers, the model's reference, on the test model (its greedy answers agree; the cause is "
                      "not found: the projector's pixel shuffle and SwiGLU match)",
}
"""``model_type`` -> why the backend refuses the model at start: families vLLM runs, but whose scores the family
comparison (tests/test_vllm_families.py) measured away from ``transformers``' with the same library versions."""


def measured_difference_refusal(model_config: Any, model: str) -> str | None:
    """Why the backend refuses this model although vLLM starts it, or None: vLLM runs it as a text-only model, or its
    scores were measured away from transformers' (:data:`DIFFERS_FROM_TRANSFORMERS`)."""
    model_type = model_config.hf_config.model_type
    if not getattr(model_config, "is_multimodal_model", True):
        # Phi-4-multimodal: vLLM dropped its model after 0.12 and runs the checkpoint as a text-only causal LM,
        # failing every row with an image.
        return (f"vLLM runs {model!r} ({model_type}) as a text-only model, which takes no image; run it with "
                "--backend hf")
    reason = DIFFERS_FROM_TRANSFORMERS.get(model_type)
    if reason is None:
        return None
    return f"{model!r} ({model_type}): {reason}; run it with --backend hf"


def refused_prompt_errors() -> tuple[type[Exception], ...]:
    """The errors with which vLLM refuses a prompt (too long, more images than the model takes per prompt...): its
    request validation errors besides ``ValueError`` and ``RuntimeError``."""
    try:
        from vllm.exceptions import VLLMClientError
    except ImportError:  # older vLLM: its refusals were ValueError
        return (ValueError, RuntimeError)
    return (ValueError, RuntimeError, VLLMClientError)


def refuse_unsupported_dtype(model: str, revision: str | None, dtype: str) -> None:
    """Refuse, before the engine starts, a dtype that vLLM's CPU build cannot run the model in.

    Its kernels for gated-delta-net linear attention (Qwen3.5, Qwen3-Next) take bfloat16 only; in another dtype the
    engine asserts while profiling and takes the whole process down.

    Raises:
        BadInputError: such a model with a dtype other than bfloat16 on the CPU build.
    """
    from transformers import AutoConfig
    from vllm.platforms import current_platform

    if not current_platform.is_cpu() or dtype == "bfloat16":
        return
    config = AutoConfig.from_pretrained(model, revision=revision)
    text = getattr(config, "text_config", config)
    if "linear_attention" in (getattr(text, "layer_types", None) or []):
        raise BadInputError(f"--dtype {dtype}: vLLM's CPU build runs the linear-attention layers of {model!r} "
                            f"({config.model_type}) in bfloat16 only; rerun with --dtype bfloat16, or use --backend hf")


def engine_failure(exc: BaseException) -> str:
    """The first line of why vLLM's engine did not start, with the error's type; its root cause where vLLM wraps it
    (a model class that failed to be inspected names only its logs)."""
    cause = exc
    while cause.__cause__ is not None:
        cause = cause.__cause__
    lines = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {lines[0] if lines else ''}".rstrip(": ")
