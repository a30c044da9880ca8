"""The ``hf`` backend: a local ``transformers`` vision-language model."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from typing import Any

from mmbatch.backends.base import Request, Result, with_system_prompt
from mmbatch.backends.hf.batching import BatchRunner, free_accelerator_memory
from mmbatch.backends.hf.boundaries import JOIN_RULE, SUFFIX_RULE
from mmbatch.backends.hf.generation import sampling_seed
from mmbatch.backends.hf.group_prefix import SHARING_RULE, SharingCounts, generate_shared
from mmbatch.backends.hf.image_generation import IMAGE_MODE_SETTINGS, can_generate_images, generate_picture
from mmbatch.backends.hf.likelihood_batch import score_batch
from mmbatch.backends.hf.load_settings import quantization_of
from mmbatch.backends.hf.loading import LoadedModel
from mmbatch.backends.hf.messages import takes_answer_as_suffix
from mmbatch.backends.hf.options import HfOptions
from mmbatch.backends.hf.small_images import too_small_refusal
from mmbatch.backends.hf.system_turn import AS_TEXT, system_form
from mmbatch.backends.hf.video import (
    as_model_input,
    describe,
    resolve_video_as,
    stacked_frames_refusal,
    untimed_refusal,
)

LIKELIHOOD_SETTINGS = {
    "continuation_join": JOIN_RULE,
    "prompt": "chat template with the generation prompt; images before the text",
    "reduction": "sum of token log-probs (token counts kept)",
    "include_eos": False,
    "letter_scoring": "single-token options scored from the prompt pass's last position",
}
"""How option log-likelihoods are defined (recorded in the settings)."""

def prompt_format_settings(processor: Any) -> dict[str, str]:
    """The prompt and option-joining rules of a processor that writes its model's format itself (PaliGemma), which
    replace those of :data:`LIKELIHOOD_SETTINGS`; nothing for a model with a chat template."""
    if not takes_answer_as_suffix(processor):
        return {}
    rules = {"continuation_join": SUFFIX_RULE}
    if getattr(processor, "chat_template", None) is None:
        rules["prompt"] = "the processor's own format (no chat template): image tokens, BOS, the prompt, a newline"
    return rules


GEN_ARG_RULES = {
    "repetition_penalty": "over the row's own prompt and answer tokens (padding not counted)",
    "stop": "the answer is the text before the first stop string",
}
"""How the ``--gen-arg`` settings that ``transformers`` could apply in more than one way are applied."""


class HFBackend:
    """Runs an ``AutoModelForImageTextToText`` model in-process, in batches."""

    name = "hf"

    def __init__(self, options: HfOptions, loaded: LoadedModel) -> None:
        """Wrap an already loaded model; use :func:`mmbatch.backends.hf.create_backend` to load one.

        Raises:
            BadInputError: the model's chat template rejects or drops ``options.system_prompt``; ``video_as`` is
                unknown, or ``video`` for a processor without video input.
        """
        self.system_form = system_form(loaded.processor, options.system_prompt, options.model)
        """How the chat template takes the system message (plain text or content parts), None without one."""
        self.video_as = resolve_video_as(options.video_as, loaded.model, loaded.processor, options.model)
        """How video rows are given: ``video`` or ``frames`` (the option, else the family's default)."""
        self.options = options
        self.loaded: LoadedModel | None = loaded
        self.generation_runner = BatchRunner(options.batch_size)
        """Generation batches (its batch size shrinks after an out-of-memory error)."""
        self.likelihood_runner = BatchRunner(options.batch_size)
        """Likelihood batches, sized separately: their memory use differs from generation's."""
        # Several rows per prompt pass keep a GPU busy; on a CPU the work is the same and padding only adds to it
        # (measured 0.91-1.01x), so there each row gets its own prompt pass.
        self.rows_per_prompt_pass = options.batch_size if loaded.device.type == "cuda" else 1
        """Likelihood rows sharing one left-padded prompt pass."""
        self.sharing = SharingCounts()
        """Generated rows that shared their group's prefix, and why the others did not (logged at close)."""
        self.likelihood_sharing = SharingCounts(kind="likelihood")
        """The same for likelihood rows."""

    def _model(self) -> LoadedModel:
        if self.loaded is None:
            raise RuntimeError("the hf backend was closed")
        return self.loaded

    def settings(self) -> dict[str, Any]:
        """Model id, revision, dtype, device and every decoding and scoring choice that changes results."""
        import torch
        import transformers

        loaded = self._model()
        sampling = self.options.temperature > 0
        return {
            "backend": self.name,
            "model": self.options.model,
            "revision": loaded.revision,
            "architecture": type(loaded.model).__name__,
            **({"adapter": {"subfolder": loaded.adapter, "active": "vision"}} if loaded.adapter else {}),
            "dtype": str(loaded.dtype).removeprefix("torch."),
            "device": loaded.device.type,
            "device_map": self.options.device_map,
            "max_memory": self.options.max_memory,
            "attn_implementation": getattr(loaded.model.config, "_attn_implementation", None),
            "trust_remote_code": self.options.trust_remote_code,
            "quantization": quantization_of(self.options).describe(loaded.dtype),
            "variant": self.options.variant,
            "processor_settings": self.options.processor_settings(),
            "processor": type(loaded.processor).__name__,
            "image_processor": type(getattr(loaded.processor, "image_processor", None)).__name__,
            "generation": {
                "do_sample": sampling,
                "temperature": self.options.temperature,
                "num_beams": self.options.generation.beams(),
                "seed": sampling_seed(self.options.generation) if sampling else None,
                **self.options.generation.given(),
                "gen_arg_rules": GEN_ARG_RULES,
                "padding": "left",
                "prefix_sharing": SHARING_RULE + " (greedy only, not with beam search)",
            },
            "likelihood": {**LIKELIHOOD_SETTINGS, **prompt_format_settings(loaded.processor),
                           "rows_per_prompt_pass": self.rows_per_prompt_pass, "prefix_sharing": SHARING_RULE},
            "system_prompt": self.options.system_prompt,
            "system_prompt_form": self.system_form,
            "video": describe(self.video_as),
            "video_as": self.video_as,
            **({"image_generation": IMAGE_MODE_SETTINGS} if can_generate_images(loaded) else {}),
            "transformers": transformers.__version__,
            "torch": torch.__version__,
        }

    def generate(self, requests: Sequence[Request], *, max_new_tokens: int) -> Iterator[list[Result]]:
        """Generate answers batch by batch, yielding each finished batch's results."""
        loaded = self._model()

        def run(batch: list[Request]) -> list[Result]:
            return generate_shared(loaded, batch, self.sharing, max_new_tokens=max_new_tokens,
                                   temperature=self.options.temperature, generation=self.options.generation)

        runnable, refused = self._model_inputs(requests)
        if refused:
            yield refused
        yield from self.generation_runner.run(runnable, run)

    def loglikelihood(self, requests: Sequence[Request]) -> Iterator[list[Result]]:
        """Score each row's options (prompt once per row, options batched), yielding each finished batch."""
        loaded = self._model()
        runnable, refused = self._model_inputs(requests)
        if refused:
            yield refused
        yield from self.likelihood_runner.run(
            runnable, lambda batch: score_batch(loaded, batch, self.rows_per_prompt_pass, self.likelihood_sharing))

    def _model_inputs(self, requests: Sequence[Request]) -> tuple[list[Request], list[Result]]:
        """The rows as the model gets them (with the run's system message; video rows as videos with ``video_as``
        video), and the failed results of rows that cannot be given that way
        (:func:`~mmbatch.backends.hf.video.untimed_refusal`,
        :func:`~mmbatch.backends.hf.video.stacked_frames_refusal`) or that this model cannot run alone, whatever the
        batch (:func:`~mmbatch.backends.hf.small_images.too_small_refusal`)."""
        loaded = self._model()
        model = loaded.model
        runnable: list[Request] = []
        refused: list[Result] = []
        with_system = with_system_prompt(requests, self.options.system_prompt, as_text=self.system_form == AS_TEXT)
        for request in as_model_input(with_system, self.video_as):
            reason = (untimed_refusal(model, request) or stacked_frames_refusal(loaded.processor, request)
                      or too_small_refusal(model, loaded.processor, request))
            if reason is None:
                runnable.append(request)
            else:
                refused.append(Result(index=request.index, error=reason))
        return runnable, refused

    def likelihood_refusal(self) -> str | None:
        """None: an in-process model scores any option text."""
        return None

    def generate_images(self, requests: Sequence[Request]) -> Iterator[list[Result]]:
        """One picture per row with a model that has an image mode (Janus); other models fail the rows."""
        loaded = self._model()
        for request in requests:
            yield [generate_picture(loaded, request, temperature=self.options.temperature)]

    def row_counts(self) -> dict[str, Any]:
        """How many generated and likelihood rows shared their group's prefix, and why the others did not."""
        return {"prefix_sharing": {"generated": self.sharing.as_dict(),
                                   "likelihood": self.likelihood_sharing.as_dict()}}

    def close(self) -> None:
        """Log how many rows shared a group prefix, drop the model and return its GPU memory."""
        from mmbatch.console import error_console

        for counts in (self.sharing, self.likelihood_sharing):
            if counts.shared_rows or counts.unshared:
                error_console.print(counts.line(), soft_wrap=True, markup=False, highlight=False)
        self.loaded = None
        gc.collect()
        free_accelerator_memory()
