"""Option log-likelihoods with the image and prompt run once per row.

For one row the prompt (with its images) runs once with ``use_cache=True`` (:func:`run_prompts`). Its cache is
selected once per option (``reorder_cache``) and all options, right-padded, run in ONE batched pass on top
of it, at the positions the model itself gives tokens after the prompt (:mod:`cache_reuse`); the attention mask is
the prompt's, then each option's own mask. The first option token is scored from the prompt pass's last position,
the others from the batched pass. When every option is a single token (letter scoring, ``A``..``D``) the prompt pass
alone scores them all. An option whose tokens merge with the prompt's (see :mod:`boundaries`) gets its own full
pass, and so does every option of a model whose cache cannot be continued this way. Sums are float32 log-softmax
values; the end-of-sequence token is not included.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mmbatch.backends.base import Request, Result
from mmbatch.backends.hf.batching import describe_error, free_accelerator_memory
from mmbatch.backends.hf.boundaries import Continuation, option_continuations
from mmbatch.backends.hf.cache_reuse import MEDIA_LAYOUT_INPUTS, cache_reuse_blocker, rope_offsets_holder
from mmbatch.backends.hf.loading import LoadedModel
from mmbatch.backends.hf.messages import chat_text, encode


@dataclass(frozen=True)
class OptionScore:
    """An option's summed log-probability and the number of tokens summed."""

    logprob: float
    """Sum of the log-probabilities of the option's tokens."""
    ntokens: int
    """How many tokens were summed."""


def keep_last_logits(model: Any, count: int) -> dict[str, int]:
    """Ask for the logits of the last ``count`` positions only, when the model can (``logits_to_keep``).

    Projecting every prompt position onto the vocabulary would cost as much as a few transformer layers.
    """
    accepts = "logits_to_keep" in inspect.signature(model.forward).parameters
    return {"logits_to_keep": count} if accepts else {}


def score_request(loaded: LoadedModel, request: Request, *, separately: bool = False) -> Result:
    """Score every option of one row, catching the row's own failure into ``Result.error``.

    Every option gets its own full pass instead of reusing the prompt's cache when ``separately`` asks for it or
    when the model's cache cannot be continued (see :mod:`cache_reuse`): a caller cannot forget the check.
    """
    import torch

    started = time.perf_counter()
    try:
        if not request.options:
            raise ValueError("the row has no options to score")
        if separately or cache_reuse_blocker(loaded.model) is not None:
            scores = score_options_separately(loaded, request)
        else:
            scores = score_options(loaded, request)
    except torch.OutOfMemoryError as exc:
        free_accelerator_memory()
        return Result(index=request.index, error=describe_error(exc))
    except Exception as exc:
        return Result(index=request.index, error=describe_error(exc))
    return Result(
        index=request.index,
        choice_logprobs=[score.logprob for score in scores], choice_ntokens=[score.ntokens for score in scores],
        latency_ms=(time.perf_counter() - started) * 1000,
    )


def score_options(loaded: LoadedModel, request: Request) -> list[OptionScore]:
    """Each option's summed log-probability as the continuation of the row's prompt, in option order."""
    context = chat_text(loaded.processor, request)
    continuations = option_continuations(loaded.processor, context, request.options)
    shared = [index for index, continuation in enumerate(continuations) if continuation.shares_prefix]
    scores: dict[int, OptionScore] = {}
    if shared:
        shared_scores = score_rows(loaded, [context], [request.images],
                                   [[continuations[index].token_ids for index in shared]])[0]
        scores.update(zip(shared, shared_scores, strict=True))
    for index, continuation in enumerate(continuations):
        if not continuation.shares_prefix:
            scores[index] = score_full_sequence(loaded, continuation, request.images)
    return [scores[index] for index in range(len(continuations))]


def score_options_separately(loaded: LoadedModel, request: Request) -> list[OptionScore]:
    """Each option's summed log-probability from its own full pass over images + prompt + option."""
    context = chat_text(loaded.processor, request)
    return [score_full_sequence(loaded, continuation, request.images)
            for continuation in option_continuations(loaded.processor, context, request.options)]


def score_rows(loaded: LoadedModel, contexts: list[str], images: list[list[Any]],
               options: list[list[list[int]]]) -> list[list[OptionScore]]:
    """Score the continuation tokens ``options[row]`` of each row's ``contexts[row]``: one left-padded prompt pass
    for all rows, then one batched pass for the options longer than a token (single-token options, letters, are
    fully scored by the prompt pass).

    Args:
        loaded: The model.
        contexts: Chat-formatted prompts whose tokens are a prefix of every prompt + option of their row.
        images: Each row's images.
        options: Each row's options, as continuation tokens.
    """
    import torch

    inputs = encode(loaded.processor, contexts, images, loaded.device, loaded.dtype)
    with torch.inference_mode():
        prompt = run_prompts(loaded, inputs)
        first_logprobs = torch.log_softmax(prompt.outputs.logits[:, -1].float(), dim=-1)
        longer = [(row, number) for row, row_options in enumerate(options)
                  for number, tokens in enumerate(row_options) if len(tokens) > 1]
        rest: dict[tuple[int, int], float] = {}
        if longer:
            sums = batched_option_pass(loaded, prompt.outputs.past_key_values, prompt.mask, prompt.next_positions,
                                       [row for row, _ in longer], [options[row][number] for row, number in longer],
                                       inputs)
            rest = dict(zip(longer, sums, strict=True))
    return [
        [OptionScore(first_logprobs[row, tokens[0]].item() + rest.get((row, number), 0.0), len(tokens))
         for number, tokens in enumerate(row_options)]
        for row, row_options in enumerate(options)
    ]


@dataclass(frozen=True)
class PromptPass:
    """The prompt pass of a batch of rows, and where each row's continuation starts."""

    outputs: Any
    """The model's outputs: ``past_key_values`` and the last position's ``logits``."""
    mask: Any
    """The prompts' attention mask (left-padded), ``(rows, width)``."""
    next_positions: Any
    """``(rows,)``: the position the model gives the first token after each row's prompt."""


def run_prompts(loaded: LoadedModel, inputs: Any) -> PromptPass:
    """Run left-padded prompts once, keeping their cache, and find where each row's continuation goes.

    Plain models get positions counted over real tokens (padding does not shift them); a row continues at its real
    token count. An M-RoPE model with images derives its own 3-D positions from the prompt, padding included, and
    keeps each row's offset (``rope_deltas``): a row continues at real token count + offset, as in the model's own
    ``generate``. Text-only rows of an M-RoPE model have plain positions (the model's ``generate`` gives them
    offset 0).

    Raises:
        RuntimeError: An M-RoPE model kept no offset for every row of the pass (its positions would be guessed).
    """
    mask = inputs["attention_mask"]
    lengths = mask.sum(dim=1)
    holder = rope_offsets_holder(loaded.model)
    keep = keep_last_logits(loaded.model, 1)
    if holder is not None and any(name in inputs for name in MEDIA_LAYOUT_INPUTS):
        # A stale offset from an earlier call must not pass for this prompt's.
        holder.rope_deltas = None
        outputs = loaded.model(**inputs, use_cache=True, **keep)
        offsets = holder.rope_deltas
        if offsets is None or offsets.numel() != lengths.numel():
            raise RuntimeError("the M-RoPE model kept no position offset per row for its prompt pass")
        return PromptPass(outputs, mask, lengths + offsets.reshape(-1).to(lengths.device, lengths.dtype))
    # Left padding: a row's positions count its real tokens only, as they would without padding.
    positions = (mask.cumsum(dim=1) - 1).clamp(min=0)
    outputs = loaded.model(**inputs, position_ids=positions, use_cache=True, **keep)
    return PromptPass(outputs, mask, lengths)


def option_tensors(loaded: LoadedModel, options: list[list[int]], mask_dtype: Any) -> tuple[Any, Any, Any]:
    """Right-padded inputs (tokens 1..n-1), targets (tokens 2..n) and mask of the options, on the model's device.

    The first token of each option is scored from the prompt pass's last logits, so the option pass feeds the
    option's tokens but its last and predicts each next one.
    """
    import torch

    width = max(len(tokens) for tokens in options) - 1
    pad_id = loaded.processor.tokenizer.pad_token_id
    inputs = torch.full((len(options), width), pad_id, dtype=torch.long)
    targets = torch.full((len(options), width), pad_id, dtype=torch.long)
    option_mask = torch.zeros((len(options), width), dtype=mask_dtype)
    for row, tokens in enumerate(options):
        inputs[row, : len(tokens) - 1] = torch.tensor(tokens[:-1])
        targets[row, : len(tokens) - 1] = torch.tensor(tokens[1:])
        option_mask[row, : len(tokens) - 1] = 1
    return inputs.to(loaded.device), targets.to(loaded.device), option_mask.to(loaded.device)


def continuation_inputs(prompt_inputs: Mapping[str, Any], rows: Any, width: int) -> dict[str, Any]:
    """Per-token inputs, besides the tokens, that ``width`` tokens continuing rows ``rows`` of a prompt pass need.

    Mllama's text sees the image only through cross-attention, masked per token by ``cross_attention_mask``; its own
    generation gives every new token the prompt's last row (the images the last token sees), so the options get
    that row too. Without it the option tokens would attend to every tile, padding tiles included.
    """
    mask = prompt_inputs.get("cross_attention_mask")
    if mask is None:
        return {}
    last = mask[rows, -1:]
    return {"cross_attention_mask": last.expand(-1, width, *last.shape[2:])}


def score_full_sequence(loaded: LoadedModel, continuation: Continuation, images: list[Any]) -> OptionScore:
    """Score one option with its own pass over images + prompt + option (used when the prefix is not shared)."""
    import torch

    if continuation.suffix is None:
        inputs = encode(loaded.processor, [continuation.text], [images], loaded.device, loaded.dtype)
    else:
        # The answer as the processor's suffix (PaliGemma): its tokens are read causally after the prefix. The EOS
        # the processor ends it with is not scored, so it is not fed either (nothing is predicted from it).
        inputs = encode(loaded.processor, [continuation.text], [images], loaded.device, loaded.dtype,
                        suffixes=[continuation.suffix])
        shape = tuple(inputs["input_ids"].shape)
        inputs = {name: value[:, :-1] if hasattr(value, "shape") and tuple(value.shape[:2]) == shape else value
                  for name, value in inputs.items()}
    count = len(continuation.token_ids)
    input_ids = inputs["input_ids"][0]
    if input_ids[-count:].tolist() != continuation.token_ids:
        # The processor tokenised the text differently from the plain tokenizer (e.g. it appended a token).
        raise ValueError("the processor's tokens do not end with the option's tokens")
    with torch.inference_mode():
        logits = loaded.model(**inputs, **keep_last_logits(loaded.model, count + 1)).logits[0, -count - 1 : -1]
    logprobs = torch.log_softmax(logits.float(), dim=-1)
    picked = logprobs.gather(-1, input_ids[-count:].unsqueeze(-1)).sum().item()
    return OptionScore(picked, count)


def batched_option_pass(loaded: LoadedModel, cache: Any, prompt_mask: Any, next_positions: Any, rows: list[int],
                        options: list[list[int]], prompt_inputs: Mapping[str, Any] | None = None) -> list[float]:
    """Score tokens 2.. of each option on its row's cached prompt (rows of a batched cache, the prompt pass's or a
    group's); returns one sum per option. Shared by the single rows, the row batches and the group prefix passes.

    Args:
        loaded: The model.
        cache: The prompts' key/value cache; it is consumed (rows selected in place).
        prompt_mask: The prompts' attention mask.
        next_positions: Per prompt row, the position of the first token after it (:class:`PromptPass`).
        rows: The prompt row of each option (repeated for several options of one row).
        options: Each option's continuation tokens.
        prompt_inputs: The prompt pass's inputs, for the per-token inputs options need besides their tokens
            (:func:`continuation_inputs`); groups never share a prefix when the processor gives such inputs.
    """
    import torch

    inputs, targets, option_mask = option_tensors(loaded, options, prompt_mask.dtype)
    width = inputs.shape[1]
    row_index = torch.tensor(rows, device=loaded.device)
    # One cache row per option. reorder_cache (beam search's selection) also selects the convolution and recurrent
    # states of linear-attention layers, which batch_select_indices does not.
    cache.reorder_cache(row_index)
    attention_mask = torch.cat([prompt_mask[row_index], option_mask], dim=1)
    positions = next_positions[row_index].unsqueeze(1) + torch.arange(width, device=loaded.device)
    extra = continuation_inputs(prompt_inputs, row_index, width) if prompt_inputs is not None else {}
    outputs = loaded.model(input_ids=inputs, attention_mask=attention_mask, position_ids=positions,
                           past_key_values=cache, use_cache=True, **extra)
    logprobs = torch.log_softmax(outputs.logits.float(), dim=-1)
    picked = logprobs.gather(-1, targets.unsqueeze(-1)).squeeze(-1) * option_mask
    return picked.sum(dim=1).tolist()
