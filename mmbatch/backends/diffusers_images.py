"""The ``diffusers`` backend: a text-to-image pipeline answers ``generate-image`` rows (SEED-Bench-2 level 3).

Any pipeline ``diffusers.DiffusionPipeline.from_pretrained`` loads and that takes ``prompt=[...]`` and returns
``.images`` (Stable Diffusion 1.x/2.x/XL, PixArt, SD3, FLUX...) works; it is the common baseline for dimension 25
(Text-to-Image Generation). A text-to-image pipeline sees only the row's prompt: the input pictures of dimension 26
(the preceding frames) are not given to it, which the settings record. Each row's noise is seeded with its
``index``, so a picture does not depend on the batch it ran in and a resumed run makes the same pictures.

An optional extra: ``pip install 'mmbatch[diffusers]'``. The pipeline has no text answers: generate and likelihood
rows fail with a clear error.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from mmbatch.backends.base import BATCHES_PER_CHUNK, MIN_CHUNK_ROWS, BackendOptions, Request, Result, parse_image_size
from mmbatch.errors import BadInputError

NO_TEXT = "the diffusers backend only answers generate-image rows"


@dataclass(frozen=True)
class DiffusersOptions(BackendOptions):
    """Options of a local ``diffusers`` pipeline."""

    revision: str | None = None
    """Pipeline revision on the hub."""
    dtype: str = "auto"
    """``auto``, ``bfloat16``, ``float16`` or ``float32``."""
    device: str = "auto"
    """``auto`` (CUDA when present), ``cpu``, ``cuda`` or ``cuda:N``."""
    batch_size: int = 8
    """Pictures per pipeline call; each row's noise is seeded by its index, so pictures do not depend on it."""
    image_steps: int | None = None
    """Denoising steps; None keeps the pipeline's default."""
    image_size: str | None = None
    """``WxH`` of the pictures; None keeps the pipeline's default."""

    def chunk_rows(self) -> int:
        """A few pipeline calls."""
        return max(MIN_CHUNK_ROWS, BATCHES_PER_CHUNK * self.batch_size)


class DiffusersBackend:
    """A ``DiffusionPipeline`` on one device; see the module docstring."""

    name = "diffusers"

    def __init__(self, options: DiffusersOptions) -> None:
        if options.system_prompt is not None or options.generation.given():
            raise BadInputError("--system-prompt and --gen-arg are for chat models; a diffusers pipeline sees only "
                                "the row's prompt")
        try:
            import diffusers
        except ImportError as exc:
            raise BadInputError("--backend diffusers needs the diffusers package: pip install "
                                "'mmbatch[diffusers]'") from exc
        from mmbatch.backends.hf.loading import resolve_device, resolve_dtype

        try:
            self.size = parse_image_size(options.image_size)
        except ValueError as exc:
            raise BadInputError(str(exc)) from exc
        self.options = options
        self.device = resolve_device(options.device)
        self.dtype = resolve_dtype(options.dtype, self.device)
        from mmbatch.backends.model_source import check_model_source

        check_model_source(options.model, revision=options.revision)
        try:
            pipeline = diffusers.DiffusionPipeline.from_pretrained(options.model, dtype=self.dtype,
                                                                   revision=options.revision)
        except (OSError, ValueError) as exc:
            raise BadInputError(f"--model {options.model!r}: cannot load a diffusers pipeline ({exc})") from exc
        self.pipeline = pipeline.to(self.device)
        self.pipeline.set_progress_bar_config(disable=True)
        self.version = diffusers.__version__

    def settings(self) -> dict[str, Any]:
        """Model, pipeline class, dtype, steps and size: everything that changes the pictures."""
        return {"backend": self.name, "model": self.options.model, "revision": self.options.revision,
                "pipeline": type(self.pipeline).__name__, "dtype": str(self.dtype).removeprefix("torch."),
                "steps": self.options.image_steps, "size": self.options.image_size, "seed": "row index",
                "input_images": "not given (text-to-image)", "diffusers_version": self.version}

    def generate_images(self, requests: Sequence[Request]) -> Iterator[list[Result]]:
        """One picture per request, ``--batch-size`` prompts per pipeline call."""
        import torch

        for start in range(0, len(requests), self.options.batch_size):
            batch = requests[start:start + self.options.batch_size]
            began = time.perf_counter()
            arguments: dict[str, Any] = {
                "prompt": [request.prompt for request in batch],
                "generator": [torch.Generator(device="cpu").manual_seed(request.index) for request in batch],
                "output_type": "pil",
            }
            if self.options.image_steps is not None:
                arguments["num_inference_steps"] = self.options.image_steps
            if self.size is not None:
                arguments["width"], arguments["height"] = self.size
            try:
                pictures = self.pipeline(**arguments).images
            except (RuntimeError, ValueError) as exc:  # out of memory, a prompt the pipeline refuses: rows fail
                yield [Result(request.index, error=f"diffusers: {exc}") for request in batch]
                continue
            share = (time.perf_counter() - began) * 1000.0 / len(batch)
            yield [Result(request.index, prediction="", image=picture.convert("RGB"), output_tokens=0,
                          latency_ms=share) for request, picture in zip(batch, pictures, strict=True)]

    def generate(self, requests: Sequence[Request], *, max_new_tokens: int) -> Iterator[list[Result]]:
        """Text rows fail: a text-to-image pipeline has no text answers."""
        yield [Result(request.index, error=NO_TEXT) for request in requests]

    def likelihood_refusal(self) -> str | None:
        """A text-to-image pipeline scores no text: a file with likelihood rows is refused at start."""
        return ("a text-to-image pipeline scores no text; run the likelihood rows with --backend hf or --backend "
                "vllm, and give this backend a prepared file of generate-image rows")

    def loglikelihood(self, requests: Sequence[Request]) -> Iterator[list[Result]]:
        """Likelihood rows fail: a text-to-image pipeline scores no text."""
        yield [Result(request.index, error=NO_TEXT) for request in requests]

    def close(self) -> None:
        """Drop the pipeline (and its GPU memory)."""
        del self.pipeline


def create_backend(options: DiffusersOptions) -> DiffusersBackend:
    """The ``diffusers`` backend for ``options.model`` (a hub id or a local pipeline folder)."""
    return DiffusersBackend(options)
