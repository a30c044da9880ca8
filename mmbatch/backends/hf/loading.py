"""Loading a ``transformers`` vision-language model and its processor, on the chosen device and dtype."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mmbatch.backends.hf.dropped_template import checkpoint_chat_template
from mmbatch.backends.hf.load_settings import Quantization, check_processor_settings, processor_kwargs
from mmbatch.backends.hf.messages import takes_answer_as_suffix
from mmbatch.backends.hf.modality_adapter import apply_vision_adapter
from mmbatch.errors import BadInputError

DTYPES = ("auto", "bfloat16", "float16", "float32")
"""Accepted ``--dtype`` values."""


@dataclass(frozen=True)
class LoadedModel:
    """A model ready for inference, with everything needed to feed it."""

    model: Any
    """The ``AutoModelForImageTextToText`` model, in eval mode on :attr:`device`."""
    processor: Any
    """Its ``AutoProcessor`` (tokenizer + image processor + chat template)."""
    device: Any
    """The ``torch.device`` the model runs on."""
    dtype: Any
    """The ``torch.dtype`` of its weights."""
    revision: str | None
    """The commit the weights came from when known (hub models), else the requested revision."""
    adapter: str | None = None
    """The checkpoint's subfolder whose LoRA adapter is loaded and active (Phi-4-multimodal's ``vision-lora``)."""


def resolve_device(requested: str) -> Any:
    """Turn ``--device`` into a ``torch.device``: ``auto`` picks CUDA when present.

    Args:
        requested: ``auto``, ``cpu``, ``cuda`` or ``cuda:N``.

    Raises:
        BadInputError: CUDA was asked for but is not available, or the name is unknown.
    """
    import torch

    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(requested)
    except RuntimeError as exc:
        raise BadInputError(f"--device {requested!r} is not a device name (auto, cpu, cuda or cuda:N)") from exc
    if device.type not in ("cpu", "cuda"):
        raise BadInputError(f"--device {requested!r}: only cpu and cuda are supported")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise BadInputError(f"--device {requested}: no CUDA device is available on this machine")
    return device


def resolve_dtype(requested: str, device: Any) -> Any:
    """Turn ``--dtype`` into a ``torch.dtype``.

    ``auto`` means bfloat16 on a GPU that supports it (float16 otherwise) and float32 on the CPU, where half
    precision is slow and less exact.

    Args:
        requested: One of :data:`DTYPES`.
        device: The resolved device.
    """
    import torch

    if requested not in DTYPES:
        raise BadInputError(f"--dtype {requested!r} is not one of {', '.join(DTYPES)}")
    if requested != "auto":
        return getattr(torch, requested)
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


ATTENTION_IMPLEMENTATIONS = ("eager", "sdpa", "flash_attention_2", "flash_attention_3", "flex_attention")
DEVICE_MAPS = ("auto", "balanced", "balanced_low_0", "sequential")


@dataclass(frozen=True)
class Placement:
    """How the weights are loaded and placed (the hf options that are not device or dtype)."""

    device_map: str | None = None
    """accelerate's dispatch over several devices, or None for one device."""
    max_memory: dict[str | int, str] | None = None
    """Per-device memory limits for ``device_map``."""
    attn_implementation: str | None = None
    """Attention kernel, or None for transformers' default."""
    trust_remote_code: bool = False
    """Whether the repository's own code may run."""
    quantization: Quantization = field(default_factory=Quantization)
    """Quantisation of the weights at load (none: as stored, in the run's dtype)."""
    variant: str | None = None
    """The weight files' variant (``fp16``), or None for the plain ones."""
    offload_folder: str | None = None
    """With ``device_map``: where weights that fit on no device go."""

    def from_pretrained_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``from_pretrained`` (only those set, so defaults stay transformers')."""
        kwargs: dict[str, Any] = {"trust_remote_code": self.trust_remote_code}
        optional = {"device_map": self.device_map, "max_memory": self.max_memory,
                    "attn_implementation": self.attn_implementation, "variant": self.variant,
                    "offload_folder": self.offload_folder}
        kwargs.update((key, value) for key, value in optional.items() if value is not None)
        return kwargs


def parse_max_memory(text: str | None) -> dict[str | int, str] | None:
    """``0=70GiB,1=70GiB,cpu=200GiB`` as accelerate's ``max_memory`` mapping.

    Raises:
        BadInputError: an entry is not ``DEVICE=SIZE``.
    """
    if text is None or not text.strip():
        return None
    limits: dict[str | int, str] = {}
    for entry in text.split(","):
        device, equals, size = entry.strip().partition("=")
        if not equals or not device.strip() or not size.strip():
            raise BadInputError(f"max_memory {text!r}: expected DEVICE=SIZE entries such as 0=70GiB,cpu=200GiB")
        key = device.strip()
        limits[int(key) if key.isdigit() else key] = size.strip()
    return limits


def load_model(model_id: str, *, revision: str | None, dtype: str, device: str,
               placement: Placement | None = None, processor_settings: dict[str, Any] | None = None) -> LoadedModel:
    """Load processor and model from a local directory or a Hugging Face id.

    With ``HF_HUB_OFFLINE=1`` only local directories and the local hub cache are used.

    Args:
        model_id: Hub id (``llava-hf/llava-1.5-7b-hf``) or a directory saved with ``save_pretrained``.
        revision: Branch, tag or commit on the hub; None for the default branch.
        dtype: ``--dtype`` value.
        device: ``--device`` value (where inputs go when ``placement`` spreads the model).
        placement: device map, memory limits, attention kernel, remote code, quantisation, weight variant.
        processor_settings: Image processor settings (``min_pixels``...) for ``AutoProcessor.from_pretrained``.

    Raises:
        BadInputError: The model cannot be found or is not an image-text-to-text model; the device or dtype is
            invalid; the quantisation's library is missing; a processor setting that its image processor does not
            declare.
    """
    from mmbatch.backends.model_source import check_model_source

    check_model_source(model_id, revision=revision)  # a mistyped path or an unreachable Hub id: exit 2 at once
    from transformers import AutoProcessor

    placement = placement or Placement()
    processor_settings = processor_settings or {}
    _check_placement(placement)
    torch_device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, torch_device)
    kwargs = placement.from_pretrained_kwargs()
    quantization_config = placement.quantization.config(torch_dtype)  # before any weight loads: the library is there
    if quantization_config is not None:
        kwargs["quantization_config"] = quantization_config
        # Quantised weights are placed as they load; such a model cannot be moved afterwards.
        kwargs.setdefault("device_map", {"": torch_device})
    try:
        processor = AutoProcessor.from_pretrained(model_id, revision=revision,
                                                  trust_remote_code=placement.trust_remote_code,
                                                  **processor_kwargs(processor_settings))
        check_processor_settings(processor, processor_settings, model_id)
        model = _load_weights(model_id, revision, torch_dtype, kwargs)
    except (OSError, ValueError, KeyError, ImportError) as exc:
        # ImportError: a processor or model that needs a package this environment lacks (named in the message).
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BadInputError(f"cannot load model {model_id!r}: {first_line}") from exc
    refuse_encoder_decoder(model, model_id)
    adapter = apply_vision_adapter(model, model_id, revision)
    if getattr(processor, "chat_template", None) is None:
        processor.chat_template = checkpoint_chat_template(processor, model_id, revision,
                                                           trust_remote_code=placement.trust_remote_code)
    if getattr(processor, "chat_template", None) is None and not takes_answer_as_suffix(processor):
        # PaliGemma's processor writes its format itself; any other model would get a prompt it was not trained on.
        raise BadInputError(f"model {model_id!r} has no chat template in its processor; mmbatch needs one")
    tokenizer = processor.tokenizer
    if tokenizer.pad_token_id is None:
        # Batched inputs need a padding token; padded positions are masked out, so which token it is does not matter.
        tokenizer.pad_token = tokenizer.eos_token
    if placement.device_map is None and quantization_config is None:
        model.to(torch_device)
    else:
        # Dispatched over several devices: inputs go where the embeddings are.
        torch_device = model.get_input_embeddings().weight.device
    model.eval()
    commit = getattr(model.config, "_commit_hash", None)
    return LoadedModel(
        model=model, processor=processor, device=torch_device, dtype=torch_dtype, revision=commit or revision,
        adapter=adapter,
    )


def refuse_encoder_decoder(model: Any, model_id: str) -> None:
    """Refuse an encoder-decoder model (Florence-2, Pix2Struct, UDOP, T5Gemma 2).

    Every path of this backend is decoder-only: an answer is the tokens generated after the prompt's, and an option
    is scored as the continuation of the prompt's tokens in one sequence. An encoder-decoder model reads the prompt
    in its encoder and writes the answer from a decoder start token: the answers would be cut at the prompt's length
    and the option scores would come from a decoder that sees the option in its encoder input. Wrong numbers, so
    no run at all.

    Raises:
        BadInputError: The model's configuration says it is an encoder-decoder.
    """
    if getattr(model.config, "is_encoder_decoder", False):
        raise BadInputError(f"model {model_id!r} ({type(model).__name__}) is an encoder-decoder model; the hf "
                            "backend runs decoder-only models (the answer continues the prompt's tokens)")


def _check_placement(placement: Placement) -> None:
    if placement.attn_implementation not in (None, *ATTENTION_IMPLEMENTATIONS):
        raise BadInputError(f"attn_implementation {placement.attn_implementation!r} is not one of "
                            f"{', '.join(ATTENTION_IMPLEMENTATIONS)}")
    if placement.device_map is not None:
        if placement.device_map not in DEVICE_MAPS:
            raise BadInputError(f"device_map {placement.device_map!r} is not one of {', '.join(DEVICE_MAPS)}")
        try:
            import accelerate  # noqa: F401  (transformers dispatches through it)
        except ImportError as exc:
            raise BadInputError("device_map needs the accelerate package: pip install 'mmbatch[infer]'") from exc
    elif placement.max_memory is not None or placement.offload_folder is not None:
        key = "max_memory" if placement.max_memory is not None else "offload_folder"
        raise BadInputError(f"{key} only applies with device_map (e.g. device_map=auto)")


def _load_weights(model_id: str, revision: str | None, torch_dtype: Any, kwargs: dict[str, Any]) -> Any:
    """The model through ``AutoModelForImageTextToText``, else the class its config registers for causal LM.

    Some multimodal models are registered only under ``AutoModelForCausalLM`` (Phi-4-multimodal); their own class
    still takes images through their processor.
    """
    from transformers import AutoModelForCausalLM, AutoModelForImageTextToText

    try:
        return AutoModelForImageTextToText.from_pretrained(model_id, revision=revision, dtype=torch_dtype, **kwargs)
    except ValueError as first:
        if "Unrecognized configuration class" not in str(first):
            raise
        try:
            return AutoModelForCausalLM.from_pretrained(model_id, revision=revision, dtype=torch_dtype, **kwargs)
        except ValueError:
            raise first from None
