"""What an ``infer`` run is asked to do, and which of it must match for a rerun to resume.

:class:`InferOptions` holds every ``mmbatch infer`` option. :func:`resume_settings` picks out the ones that change a
prediction (input file, backend, model, dtype, generation settings, system prompt, frame sampling, likelihood
target); a rerun whose resume settings differ from the recorded ones is refused. Batch size, concurrency, device and
the shard do not change predictions, so they may change between runs (greedy batched generation equals batch size 1).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmbatch.backends.base import BackendOptions
from mmbatch.backends.declaration import BackendDeclaration
from mmbatch.backends.generation_args import parse_generation_args
from mmbatch.backends.library_versions import RESUME_KEY, installed_versions
from mmbatch.backends.options import backend_options
from mmbatch.backends.registry import get_backend_declaration
from mmbatch.infer.on_ray.options import RayOptions
from mmbatch.references import load
from mmbatch.row_facts import file_sha256

LIKELIHOOD_TARGETS = ("content", "letter")


@dataclass(frozen=True)
class InferOptions:
    """Every option of ``mmbatch infer``."""

    input: Path
    """The prepared file."""
    output: Path
    """Where predictions go (a sharded run writes ``NAME.shard-K-of-N.EXT`` unless the path holds ``{k}``)."""
    backend: str
    """``hf``, ``openai`` or ``echo``."""
    model: str
    """Model id, local path, server model name, or echo mode."""
    revision: str | None = None
    """Model revision (``hf``)."""
    dtype: str = "auto"
    """Weights dtype (``hf``)."""
    device: str = "auto"
    """Device (``hf``)."""
    batch_size: int = 8
    """Rows per forward pass (``hf``)."""
    max_new_tokens: int = 512
    """Longest generated answer, in tokens."""
    temperature: float = 0.0
    """Sampling temperature; 0 is greedy."""
    num_frames: int = 8
    """Frames sampled from each video."""
    base_url: str | None = None
    """OpenAI-compatible server (``openai``)."""
    concurrency: int = 16
    """Requests in flight (``openai``)."""
    timeout_s: float = 120.0
    """Per-request timeout (``openai``)."""
    max_retries: int = 5
    """Retries per request (``openai``)."""
    shard: str | None = None
    """``K/N``; None takes the scheduler's environment, else the whole file."""
    media_root: Path | None = None
    """Folder that ``image_path``/``video_path`` are relative to; None uses the prepared file's recorded root."""
    likelihood_target: str = "content"
    """Likelihood rows score the option texts (``content``) or the letters ``A.``.. (``letter``)."""
    max_pixels: int = 64_000_000
    """Largest image accepted (width x height)."""
    image_steps: int | None = None
    """generate-image rows: denoising steps (``diffusers``); None keeps the pipeline's default."""
    image_size: str | None = None
    """generate-image rows: ``WxH`` of the pictures (``diffusers``, ``openai``); None keeps the model's default."""
    force: bool = False
    """Discard earlier progress made with other settings instead of refusing."""
    backend_args: tuple[str, ...] = ()
    """``KEY=VALUE`` settings of the backend's options class (``MMBATCH_BACKEND_ARGS``, then ``--backend-arg``),
    applied over the flags of the same name."""
    system_prompt: str | None = None
    """The system message of every conversation (``--system-prompt``); None or empty sends none."""
    gen_args: tuple[str, ...] = ()
    """``KEY=VALUE`` decoding settings (``--gen-arg``), read by
    :func:`~mmbatch.backends.generation_args.parse_generation_args`."""
    executor: str = "local"
    """``--executor``: ``local`` (this process) or ``ray`` (an actor pool on a Ray cluster)."""
    ray: RayOptions = field(default_factory=RayOptions)
    """How ``--executor ray`` uses the cluster."""

    def backend_options(self) -> BackendOptions:
        """The backend's own options class, filled from these options and :attr:`backend_args`.

        Raises:
            BadInputError: an unknown backend, a ``--backend-arg`` key it does not declare, or a bad ``--gen-arg``.
        """
        flags = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        flags["system_prompt"] = self.system_prompt or None
        flags["generation"] = parse_generation_args(self.gen_args)
        return backend_options(get_backend_declaration(self.backend), flags, self.backend_args)


def recorded_option(key: str, value: Any) -> Any:
    """An option's value as it may be recorded: a server URL without the ``user:password@`` it may carry."""
    if key == "base_url" and isinstance(value, str):
        from mmbatch.server_urls import without_credentials

        return without_credentials(value)
    return value


def file_fingerprint(path: Path) -> str:
    """SHA-256 (first 16 hex digits) of the file's bytes: the same file copied to another machine matches."""
    return file_sha256(path)[:16]


def resume_settings(options: InferOptions, input_fingerprint: str) -> dict[str, Any]:
    """The settings a rerun must share with the recorded progress to resume it: the stage's own, and the backend
    options its declaration lists in ``resume_keys``."""
    backend = options.backend_options()
    declaration = get_backend_declaration(options.backend)
    defaults = {field.name: field.default for field in dataclasses.fields(backend)}
    return {
        "input_fingerprint": input_fingerprint,
        "backend": options.backend,
        "model": backend.model,
        **{key: recorded_option(key, getattr(backend, key)) for key in declaration.resume_keys},
        **{key: recorded_option(key, getattr(backend, key)) for key in declaration.resume_keys_when_set
           if getattr(backend, key) != defaults[key]},
        "max_new_tokens": options.max_new_tokens,
        "temperature": backend.temperature,
        "num_frames": options.num_frames,
        "likelihood_target": options.likelihood_target,
        # only when given, so that progress recorded before these options existed still resumes
        **({"image_steps": options.image_steps} if options.image_steps is not None else {}),
        **({"image_size": options.image_size} if options.image_size is not None else {}),
        **({"system_prompt": backend.system_prompt} if backend.system_prompt is not None else {}),
        **({"generation": backend.generation.given()} if backend.generation.given() else {}),
        # The versions that make every row of the file: a rerun under others is another run.
        **({RESUME_KEY: installed_versions(declaration.libraries)} if declaration.libraries else {}),
        **checkpoint_settings(declaration, backend.model, options.revision),
    }


def checkpoint_settings(declaration: BackendDeclaration, model: str, revision: str | None) -> dict[str, Any]:
    """The settings the backend reads from the checkpoint itself (Phi-4-multimodal's vision adapter), if any."""
    if declaration.checkpoint_settings is None:
        return {}
    return dict(load(declaration.checkpoint_settings)(model, revision))


def run_settings(options: InferOptions) -> dict[str, Any]:
    """Every option of the run, for the output metadata (paths as text)."""
    return {
        "backend": options.backend, "model": options.model, "revision": options.revision, "dtype": options.dtype,
        "device": options.device, "batch_size": options.batch_size, "max_new_tokens": options.max_new_tokens,
        "temperature": options.temperature, "num_frames": options.num_frames,
        "base_url": recorded_option("base_url", options.base_url),
        "concurrency": options.concurrency, "timeout_s": options.timeout_s, "max_retries": options.max_retries,
        "likelihood_target": options.likelihood_target, "max_pixels": options.max_pixels,
        "image_steps": options.image_steps, "image_size": options.image_size,
        "system_prompt": options.system_prompt or None, "gen_args": parse_generation_args(options.gen_args).given(),
    }
