"""The vision LoRA adapter that Phi-4-multimodal's checkpoint ships beside its base weights.

``microsoft/Phi-4-multimodal-instruct`` gives its text model its image ability partly as a LoRA adapter in the
subfolder ``vision-lora/`` (and its speech ability in ``speech-lora/``): ``transformers`` loads the base weights only,
and its documented use loads the adapter with ``model.load_adapter(path, adapter_name="vision",
adapter_kwargs={"subfolder": "vision-lora"})`` and ``model.set_adapter("vision")`` before image inputs. Without it
every image answer is the base model's, wrong and silent; so a checkpoint that has the folder gets it applied (which
needs ``peft``), or the run is refused before any row. A checkpoint without the folder runs as it is.
"""

from __future__ import annotations

from typing import Any

from mmbatch.errors import BadInputError

ADAPTED_MODEL_TYPES = {"phi4_multimodal": "vision-lora"}
"""Model types whose checkpoint may hold a vision adapter, and the subfolder it is in."""
ADAPTER_NAME = "vision"
"""The name the adapter is loaded under (the one ``transformers``' documentation uses)."""
PEFT_ADVICE = "pip install peft (or pip install 'mmbatch[infer]')"


def vision_adapter(model_id: str, revision: str | None, model_type: str) -> str | None:
    """The subfolder of the vision adapter that the checkpoint holds for a model of ``model_type``, or None.

    Files are resolved as ``transformers`` resolves the checkpoint's others (a local folder, else the Hub cache, else
    the Hub unless ``HF_HUB_OFFLINE`` is set).

    Raises:
        BadInputError: a Hub checkpoint whose cache cannot tell whether the adapter exists (offline, not cached and
            not recorded as absent): running the base weights could be wrong.
    """
    subfolder = ADAPTED_MODEL_TYPES.get(model_type)
    if subfolder is None:
        return None
    from huggingface_hub import try_to_load_from_cache
    from transformers.utils import cached_file

    found = cached_file(model_id, "adapter_config.json", subfolder=subfolder, revision=revision,
                        _raise_exceptions_for_missing_entries=False,
                        _raise_exceptions_for_connection_errors=False)
    if found is not None:
        return subfolder
    if _is_local(model_id):
        return None
    cached = try_to_load_from_cache(model_id, f"{subfolder}/adapter_config.json", revision=revision)
    if cached is None:  # neither cached nor known to be absent: the Hub could not be asked
        raise BadInputError(f"model {model_id!r}: cannot tell whether its {subfolder}/adapter_config.json exists (not "
                            "in the Hugging Face cache, and the Hub cannot be asked); download the whole checkpoint "
                            f"(`huggingface-cli download {model_id}`) so that its vision adapter is applied")
    return None


def apply_vision_adapter(model: Any, model_id: str, revision: str | None) -> str | None:
    """Load and activate the checkpoint's vision adapter on ``model`` where it has one; return its subfolder.

    Raises:
        BadInputError: the checkpoint has the adapter and ``peft`` is not installed; the Hub cache cannot tell
            (:func:`vision_adapter`).
    """
    subfolder = vision_adapter(model_id, revision, getattr(model.config, "model_type", ""))
    if subfolder is None:
        return None
    require_peft(model_id, subfolder)
    # The revision travels with the subfolder: transformers' download settings of the adapter take both.
    model.load_adapter(model_id, adapter_name=ADAPTER_NAME,
                       adapter_kwargs={"subfolder": subfolder, "revision": revision})
    model.set_adapter(ADAPTER_NAME)
    return subfolder


def require_peft(model_id: str, subfolder: str) -> None:
    """Refuse the run when ``peft``, which loads the adapter, is not installed.

    Raises:
        BadInputError: naming the pip command.
    """
    try:
        import peft  # noqa: F401  (transformers' load_adapter goes through it)
    except ImportError as exc:
        raise BadInputError(f"model {model_id!r} has a vision LoRA adapter ({subfolder}/) that its image answers "
                            f"need, and applying it needs the peft package: {PEFT_ADVICE}") from exc


def adapter_resume_settings(model_id: str, revision: str | None) -> dict[str, Any]:
    """What the resume settings record about the adapter a run of ``model_id`` applies: its subfolder and the
    installed ``peft`` version, or nothing for a checkpoint without one (so that progress recorded before adapters
    were applied still resumes for every other model). A checkpoint whose configuration cannot be read records
    nothing: loading it fails with the reason."""
    import json

    try:
        from transformers.utils import cached_file
    except ImportError:  # the light image: creating the hf backend refuses the run with the install command
        return {}

    try:
        config = cached_file(model_id, "config.json", revision=revision, _raise_exceptions_for_missing_entries=False,
                             _raise_exceptions_for_connection_errors=False)
    except (OSError, ValueError):
        return {}
    if config is None:
        return {}
    with open(config, encoding="utf-8") as handle:
        model_type = json.load(handle).get("model_type", "")
    subfolder = vision_adapter(model_id, revision, model_type)
    if subfolder is None:
        return {}
    from mmbatch.backends.library_versions import installed_versions

    return {"adapter": {"subfolder": subfolder, **installed_versions(["peft"])}}


def _is_local(model_id: str) -> bool:
    from pathlib import Path

    return Path(model_id).expanduser().is_dir()
