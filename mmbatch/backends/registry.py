"""Every ``--backend``: one line per :class:`~mmbatch.backends.declaration.BackendDeclaration`.

Adding a backend is one module (``create_backend`` and an options class) plus one line here
(``docs/adding-a-backend.md``).
"""

from __future__ import annotations

from mmbatch.backends.declaration import BackendDeclaration
from mmbatch.errors import BadInputError

BACKENDS: tuple[BackendDeclaration, ...] = (
    BackendDeclaration("hf", "local transformers model", "mmbatch.backends.hf", "mmbatch.backends.hf.options:HfOptions",
                       ("revision", "dtype", "attn_implementation", "trust_remote_code", "video_as"),
                       image_generator=True,
                       resume_keys_when_set=("load_in_4bit", "load_in_8bit", "bnb_4bit_quant_type", "torchao",
                                             "variant", "image_min_pixels", "image_max_pixels", "min_patches",
                                             "max_patches", "crop_to_patches", "do_image_splitting",
                                             "max_image_size", "do_pan_and_scan"),
                       libraries=("transformers", "torch"),
                       checkpoint_settings="mmbatch.backends.hf.modality_adapter:adapter_resume_settings"),
    BackendDeclaration("openai", "OpenAI-compatible server", "mmbatch.backends.openai_chat",
                       "mmbatch.backends.openai_chat:OpenAIOptions", ("base_url",), image_generator=True),
    BackendDeclaration("echo", "no model", "mmbatch.backends.echo", "mmbatch.backends.echo:EchoOptions", (),
                       image_generator=True),
    BackendDeclaration("diffusers", "text-to-image pipeline, generate-image rows only",
                       "mmbatch.backends.diffusers_images", "mmbatch.backends.diffusers_images:DiffusersOptions",
                       ("revision", "dtype"), image_generator=True, libraries=("diffusers", "transformers", "torch")),
    BackendDeclaration("vllm", "vLLM's offline engine, an optional install", "mmbatch.backends.vllm_engine",
                       "mmbatch.backends.vllm_engine:VllmOptions",
                       ("revision", "dtype", "max_model_len", "kv_cache_dtype"),
                       libraries=("vllm", "transformers", "torch")),
)
"""The registered backends, in the order help texts list them."""


def backend_names() -> tuple[str, ...]:
    """The ``--backend`` choices."""
    return tuple(backend.name for backend in BACKENDS)


def image_generators() -> tuple[str, ...]:
    """The backends that answer ``generate-image`` rows."""
    return tuple(backend.name for backend in BACKENDS if backend.image_generator)


def get_backend_declaration(name: str) -> BackendDeclaration:
    """The backend called ``name``.

    Raises:
        BadInputError: no backend has that name.
    """
    for backend in BACKENDS:
        if backend.name == name:
            return backend
    raise BadInputError(f"--backend {name!r}: choose one of {', '.join(backend_names())}")
