"""The ``vllm`` backend: vLLM's offline engine (``vllm.LLM``) in-process, for batch inference on GPUs.

vLLM schedules a whole chunk of rows at once (continuous batching over paged attention, automatic prefix caching),
so the stage hands it large chunks. Prompts are the model's own chat template (from its ``transformers`` processor,
exactly as the ``hf`` backend writes them) with the row's images, or its video's sampled frames, as
``multi_modal_data``. Generation is plain greedy (or plain sampling with a fixed seed): nothing from the checkpoint's
generation defaults, as with ``hf``. Likelihood rows score each option as the continuation of the prompt from
``prompt_logprobs`` over prompt + option, with the same boundary rule as ``hf``, so both backends give the same
numbers on the same model (tested to 1e-4 in float32).

Engine settings come from ``--backend-arg KEY=VALUE`` (see :class:`VllmOptions`). vLLM is an optional install:
``pip install vllm`` on a CUDA machine (docs/models.md); the tests run vLLM's CPU build in its own virtualenv.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from mmbatch.backends.base import BackendOptions, Request, Result, with_system_prompt
from mmbatch.backends.hf.boundaries import JOIN_RULE, join_text, split_continuation
from mmbatch.backends.hf.dropped_template import checkpoint_chat_template
from mmbatch.backends.hf.messages import VIDEO_AS, chat_text, takes_answer_as_suffix, template_has_bos
from mmbatch.backends.hf.system_turn import AS_TEXT, system_form
from mmbatch.backends.vllm_limits import (
    SEVERAL_IMAGES_DIFFER,
    causal_prefix_refusal,
    engine_failure,
    measured_difference_refusal,
    refuse_unsupported_dtype,
    refused_prompt_errors,
)
from mmbatch.errors import BadInputError

SAMPLING_SEED = 0
"""Seed of sampled generation (``--temperature`` > 0), so a rerun repeats its samples."""
ENGINE_CALL_ROWS = 256
"""Rows per engine call: enough to keep vLLM's scheduler full, few enough that a killed run loses little."""


PASSED_AS_GIVEN = ("top_p", "top_k", "min_p", "repetition_penalty", "stop")
"""``--gen-arg`` keys that are ``SamplingParams`` fields of the same name and meaning (``seed`` is set above)."""
ENGINE_CHUNK_ROWS = 512
"""Rows ``infer`` hands vLLM at once, so its scheduler always has work queued."""
@dataclass(frozen=True)
class VllmOptions(BackendOptions):
    """Options of vLLM's offline engine (``--backend-arg KEY=VALUE``; ``--revision`` and ``--dtype`` fill theirs)."""

    revision: str | None = None
    """Model revision (a branch, tag or commit of the hub repository)."""
    dtype: str = "auto"
    """``auto`` (vLLM's choice from the checkpoint), ``bfloat16``, ``float16`` or ``float32``."""
    tensor_parallel_size: int = 1
    """GPUs the model is split across."""
    max_model_len: int | None = None
    """Longest prompt + answer in tokens; None takes the model's. Lower it to fit the KV cache on a small GPU; it
    can change results (prompts that no longer fit fail), so resuming with another value is refused."""
    gpu_memory_utilization: float = 0.9
    """Fraction of GPU memory vLLM may use (weights + KV cache). On the CPU build: of host memory."""
    kv_cache_dtype: str = "auto"
    """``auto`` (the weights' dtype) or ``fp8`` / ``fp8_e4m3`` / ``fp8_e5m2``; changes results, so resuming with
    another value is refused."""
    kv_cache_memory_bytes: int | None = None
    """KV cache size in bytes instead of ``gpu_memory_utilization`` (the CPU build needs it on small machines)."""
    max_num_seqs: int | None = None
    """Sequences scheduled at once; None takes vLLM's default."""
    max_images: int = 1
    """Images (or video frames) per prompt; rows with more fail with an error naming this key. Set it to
    ``--num-frames`` for video rows."""
    enforce_eager: bool = False
    """Skip CUDA graphs / ``torch.compile`` (faster start, slower decoding)."""

    def chunk_rows(self) -> int:
        """Large chunks: vLLM schedules the rows itself."""
        return ENGINE_CHUNK_ROWS


ENGINE_FIELDS = ("tensor_parallel_size", "max_model_len", "gpu_memory_utilization", "kv_cache_dtype",
                 "kv_cache_memory_bytes", "max_num_seqs", "max_images", "enforce_eager")
"""The engine settings among the options (recorded under ``engine`` in the settings)."""


class VLLMBackend:
    """Runs a model with ``vllm.LLM`` in this process."""

    name = "vllm"

    def __init__(self, options: VllmOptions) -> None:
        from transformers import AutoProcessor, GenerationConfig
        from vllm import LLM

        from mmbatch.backends.model_source import check_model_source

        self.options = options
        check_model_source(options.model, revision=options.revision)
        try:
            self.processor = AutoProcessor.from_pretrained(options.model, revision=options.revision)
        except (OSError, ValueError, KeyError) as exc:
            raise BadInputError(f"cannot load the processor of {options.model!r}: {exc}") from exc
        if getattr(self.processor, "chat_template", None) is None:
            # As hf: a processor transformers builds without the checkpoint's template (Phi-4-multimodal) gets it.
            self.processor.chat_template = checkpoint_chat_template(self.processor, options.model, options.revision,
                                                                    trust_remote_code=False)
        if getattr(self.processor, "chat_template", None) is None and not takes_answer_as_suffix(self.processor):
            # PaliGemma's processor writes its format itself (chat_text); any other model would get a prompt it was
            # not trained on.
            raise BadInputError(f"model {options.model!r} has no chat template in its processor; mmbatch needs one")
        # Before the engine starts: how the chat template takes the system message, or why it cannot.
        self.system_form = system_form(self.processor, options.system_prompt, options.model)
        refuse_unsupported_dtype(options.model, options.revision, options.dtype)
        try:
            defaults = GenerationConfig.from_pretrained(options.model, revision=options.revision or "main")
            eos = defaults.eos_token_id
        except OSError:
            eos = None
        eos = self.processor.tokenizer.eos_token_id if eos is None else eos
        self.stop_ids = sorted({int(token) for token in (eos if isinstance(eos, list) else [eos])
                                if token is not None})
        """Tokens that end an answer: the checkpoint's end-of-sequence ids, as ``hf`` uses them."""
        try:
            self.llm = LLM(
                model=options.model, revision=options.revision, tokenizer_revision=options.revision,
                dtype=options.dtype, seed=SAMPLING_SEED, enable_prefix_caching=True,
                # The checkpoint's sampling defaults (repetition penalty, top-p...) are not used, as with hf.
                # Video rows are given as their frames (images): no video input, so none is budgeted for.
                generation_config="vllm", limit_mm_per_prompt={"image": options.max_images, "video": 0},
                tensor_parallel_size=options.tensor_parallel_size, max_model_len=options.max_model_len,
                gpu_memory_utilization=options.gpu_memory_utilization, kv_cache_dtype=options.kv_cache_dtype,
                kv_cache_memory_bytes=options.kv_cache_memory_bytes, enforce_eager=options.enforce_eager,
                **({"max_num_seqs": options.max_num_seqs} if options.max_num_seqs else {}),
            )
        except Exception as exc:  # vLLM raises many types for a model it cannot run (architecture, config, kernels)
            raise BadInputError(f"vLLM cannot run {options.model!r}: {engine_failure(exc)}; see docs/models.md for "
                                "the families the vllm backend runs, or use --backend hf") from exc
        refusal = causal_prefix_refusal(self.llm.llm_engine.model_config, options.model) or \
            measured_difference_refusal(self.llm.llm_engine.model_config, options.model)
        if refusal is not None:
            self.close()
            raise BadInputError(refusal)

    def settings(self) -> dict[str, Any]:
        """Model, dtype, engine settings and every decoding and scoring choice that changes results."""
        import torch
        import transformers
        import vllm
        from vllm.platforms import current_platform

        model_config = self.llm.llm_engine.model_config
        sampling = self.options.temperature > 0
        return {
            "backend": self.name,
            "model": self.options.model,
            "revision": self.options.revision,
            "architecture": ",".join(model_config.architectures or []),
            "dtype": str(model_config.dtype).removeprefix("torch."),
            "device": str(current_platform.device_type),
            "engine": {name: getattr(self.options, name) for name in ENGINE_FIELDS},
            "generation": {"do_sample": sampling, "temperature": self.options.temperature, "num_beams": 1,
                           "seed": self._seed() if sampling else None, "stop_token_ids": self.stop_ids,
                           **self.options.generation.given()},
            "system_prompt": self.options.system_prompt,
            "system_prompt_form": self.system_form,
            "likelihood": {"continuation_join": JOIN_RULE, "prompt": "chat template with the generation prompt; "
                           "images before the text", "reduction": "sum of token log-probs (token counts kept)",
                           "include_eos": False, "scored_by": "prompt_logprobs over prompt + option"},
            "video": VIDEO_AS,
            "processor": type(self.processor).__name__,
            "image_processor": type(getattr(self.processor, "image_processor", None)).__name__,
            "vllm": vllm.__version__,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
        }

    def likelihood_refusal(self) -> str | None:
        """Why this model's options cannot be scored here, or None: prompt log-probs score any option text joined to
        the prompt, except the answer of a prefix LM (PaliGemma), which its processor takes as a suffix after a
        newline it writes itself; only the hf backend scores that suffix."""
        if takes_answer_as_suffix(self.processor):
            return (f"{self.options.model!r} scores an answer as its processor's suffix (a prefix LM, PaliGemma), "
                    "which the vllm backend does not do; run the likelihood rows with --backend hf")
        return None

    def _seed(self) -> int:
        """``--gen-arg seed`` when given, else :data:`SAMPLING_SEED`."""
        seed = self.options.generation.seed
        return SAMPLING_SEED if seed is None else seed

    def _prompt(self, request: Request, text: str) -> dict[str, Any]:
        prompt: dict[str, Any] = {"prompt": text}
        if request.images:
            prompt["multi_modal_data"] = {"image": list(request.images)}
        return prompt

    def _row_refusal(self, request: Request) -> Result | None:
        if len(request.images) > 1 and self.llm.llm_engine.model_config.hf_config.model_type in SEVERAL_IMAGES_DIFFER:
            return Result(request.index, error=SEVERAL_IMAGES_DIFFER[
                self.llm.llm_engine.model_config.hf_config.model_type])
        if len(request.images) <= self.options.max_images:
            return None
        return Result(request.index, error=f"{len(request.images)} images or frames, more than the engine takes "
                      f"per prompt ({self.options.max_images}); rerun with --backend-arg "
                      f"max_images={len(request.images)}")

    def _run(self, prompts: list[dict[str, Any]], params: Any) -> list[Any | Exception]:
        """Run prompts in one engine call; when the call fails, run them one by one so only bad rows fail."""
        # One BOS, by the hf backend's rule: no special tokens when the chat template already wrote BOS.
        texts = [str(prompt["prompt"]) for prompt in prompts]
        special = {"add_special_tokens": False} if template_has_bos(self.processor.tokenizer, texts) else None
        try:
            return list(self.llm.generate(prompts, params, use_tqdm=False, tokenization_kwargs=special))
        except refused_prompt_errors() as exc:
            if len(prompts) == 1:
                return [exc]
        return [output for prompt in prompts for output in self._run([prompt], params)]

    def generate(self, requests: Sequence[Request], *, max_new_tokens: int) -> Iterator[list[Result]]:
        """Generate answers, :data:`ENGINE_CALL_ROWS` rows per engine call, yielding each call's results."""
        from vllm import SamplingParams

        sampling = self.options.temperature > 0
        generation = self.options.generation
        params = SamplingParams(
            temperature=self.options.temperature, max_tokens=max_new_tokens, stop_token_ids=self.stop_ids,
            seed=self._seed() if sampling else None,
            # Only the settings given, so that the others keep vLLM's own "off" values.
            **{key: value for key, value in generation.given().items() if key in PASSED_AS_GIVEN},
            # The answer is decoded below from its tokens, as hf does: vLLM's incremental detokenizer holds back
            # a trailing incomplete UTF-8 sequence, which would make the same tokens read differently. Stop strings
            # are matched on the detokenized text, so they need it.
            detokenize=bool(generation.stop),
        )
        requests = with_system_prompt(requests, self.options.system_prompt, as_text=self.system_form == AS_TEXT)
        for start in range(0, len(requests), ENGINE_CALL_ROWS):
            started = time.perf_counter()
            results: list[Result] = []
            runnable: list[Request] = []
            for request in requests[start:start + ENGINE_CALL_ROWS]:
                refused = self._row_refusal(request)
                if refused is not None:
                    results.append(refused)
                else:
                    runnable.append(request)
            prompts = [self._prompt(request, chat_text(self.processor, request)) for request in runnable]
            outputs = self._run(prompts, params) if prompts else []
            share_ms = (time.perf_counter() - started) * 1000 / max(1, len(runnable))
            for request, output in zip(runnable, outputs, strict=True):
                if isinstance(output, Exception):
                    results.append(Result(request.index, error=f"vllm: {output}"))
                    continue
                completion = output.outputs[0]
                text = self.processor.tokenizer.decode(list(completion.token_ids), skip_special_tokens=True)
                text, _ = generation.cut_at_stop(text)  # the tokens run up to the one that completed the stop
                results.append(Result(request.index, prediction=text.strip(),
                                      output_tokens=len(completion.token_ids), latency_ms=share_ms))
            yield results

    def loglikelihood(self, requests: Sequence[Request]) -> Iterator[list[Result]]:
        """Score every option of each row from ``prompt_logprobs`` over prompt + option; yield per engine call."""
        from vllm import SamplingParams

        params = SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0, detokenize=False)
        rows_per_call = max(1, ENGINE_CALL_ROWS // 4)  # about 4 options each
        requests = with_system_prompt(requests, self.options.system_prompt, as_text=self.system_form == AS_TEXT)
        for start in range(0, len(requests), rows_per_call):
            yield self._score_rows(requests[start:start + rows_per_call], params)

    def _score_rows(self, requests: Sequence[Request], params: Any) -> list[Result]:
        started = time.perf_counter()
        results: dict[int, Result] = {}
        prompts: list[dict[str, Any]] = []
        owners: list[tuple[int, list[int]]] = []  # (row position, option tokens) of each prompt
        for position, request in enumerate(requests):
            refused = self._row_refusal(request)
            if refused is None and not request.options:
                refused = Result(request.index, error="the row has no options to score")
            if refused is not None:
                results[position] = refused
                continue
            context = chat_text(self.processor, request)
            tokenizer = self.processor.tokenizer
            context_ids = tokenizer(context, add_special_tokens=False)["input_ids"]  # once for all the options
            try:
                continuations = [split_continuation(tokenizer, context, option, context_ids=context_ids)
                                 for option in request.options]
            except ValueError as exc:
                results[position] = Result(request.index, error=str(exc))
                continue
            for option, continuation in zip(request.options, continuations, strict=True):
                prompts.append(self._prompt(request, context + join_text(context) + option))
                owners.append((position, continuation.token_ids))
        outputs = self._run(prompts, params) if prompts else []
        scores: dict[int, list[tuple[float, int]]] = {}
        for (position, tokens), output in zip(owners, outputs, strict=True):
            if position in results:
                continue
            try:
                scores.setdefault(position, []).append(_option_score(output, tokens))
            except ValueError as exc:
                results[position] = Result(requests[position].index, error=str(exc))
        share_ms = (time.perf_counter() - started) * 1000 / max(1, len(requests))
        for position, request in enumerate(requests):
            if position not in results:
                pairs = scores[position]
                results[position] = Result(request.index, latency_ms=share_ms,
                                           choice_logprobs=[logprob for logprob, _ in pairs],
                                           choice_ntokens=[count for _, count in pairs])
        return [results[position] for position in range(len(requests))]

    def close(self) -> None:
        """Shut the engine down and free its memory."""
        import gc

        engine = getattr(self, "llm", None)
        if engine is not None:
            del self.llm
            gc.collect()


def _option_score(output: Any, tokens: list[int]) -> tuple[float, int]:
    """The summed log-probability of ``tokens``, the last tokens of the scored prompt, and their count.

    Raises:
        ValueError: The engine failed on the prompt, or tokenised its end differently from the option's tokens.
    """
    if isinstance(output, Exception):
        raise ValueError(f"vllm: {output}")
    count = len(tokens)
    prompt_ids = list(output.prompt_token_ids)
    if prompt_ids[-count:] != tokens:
        raise ValueError("vllm tokenised the prompt + option differently: its last tokens are not the option's")
    total = 0.0
    for position in range(len(prompt_ids) - count, len(prompt_ids)):
        total += output.prompt_logprobs[position][prompt_ids[position]].logprob
    return total, count


def create_backend(options: VllmOptions) -> VLLMBackend:
    """Start vLLM's engine on ``options.model`` with the engine settings of ``options``.

    Raises:
        BadInputError: vLLM is not installed, or the model cannot load; beam search was asked for.
    """
    # vLLM's beam search is another API (LLM.beam_search), which this backend does not run.
    options.generation.refuse_beams("vllm")
    try:
        import vllm  # noqa: F401
    except ImportError as exc:
        raise BadInputError("--backend vllm needs vLLM: `pip install vllm` on a CUDA machine (see docs/models.md)"
                            f" ({exc})") from exc
    return VLLMBackend(options)
