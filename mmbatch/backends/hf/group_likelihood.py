"""Likelihood rows of one group (circular copies) prefill their common prefix once, then branch twice.

The image and the question before the options run once for the group; the cache is given to every row, which runs
only its own rest of the prompt (the listed options, in its order) on top of it, left-padded in one pass; then all
options of all rows are scored in one more pass on their row's cache, exactly as in :mod:`likelihood_batch`.
Positions are those of each row's own unpadded sequence (M-RoPE models derive the prefix's and continue after it at
the model's offset, as :mod:`group_prefix` does). Rows whose prompt tokens do not continue the prefix as a whole
(image tokens after the branch point) are scored the ordinary way by the caller.
"""

from __future__ import annotations

from typing import Any

from mmbatch.backends.base import Request
from mmbatch.backends.hf.cache_reuse import prefix_sharing_blocker
from mmbatch.backends.hf.group_prefix import (
    PlannedGroup,
    SharingCounts,
    common_prefix,
    image_token_ids,
    left_pad,
    per_token_inputs,
    prefix_pass_inputs,
    split_groups,
)
from mmbatch.backends.hf.likelihood import OptionScore, batched_option_pass, keep_last_logits, run_prompts
from mmbatch.backends.hf.loading import LoadedModel
from mmbatch.backends.hf.messages import encode


def plan_likelihood_group(loaded: LoadedModel, contexts: list[str],
                          images: list[Any]) -> tuple[PlannedGroup, Any] | str:
    """The shared prefix of a group's prompts (the rows share ``images``) and the first row's processor inputs (on
    the CPU, for :func:`score_group`), or why the prefix cannot be shared exactly."""
    first = encode(loaded.processor, contexts[:1], [images], "cpu", None)
    # The processor gives every row of the group the same kinds of input: the first row tells, before the other
    # rows' images are processed for nothing.
    if extra := per_token_inputs(first):
        return f"per-token inputs besides the tokens ({', '.join(extra)})"
    encoded = [first, *(encode(loaded.processor, [context], [images], "cpu", None) for context in contexts[1:])]
    tokens = [[int(token) for token in inputs["input_ids"][0]] for inputs in encoded]
    prefix = common_prefix(tokens)
    image_tokens = image_token_ids(loaded)
    if prefix == 0 or (images and image_tokens is None):
        return "no exact common prefix"
    if any(token in (image_tokens or set()) for row in tokens for token in row[prefix:]):
        return "no exact common prefix"
    return PlannedGroup(rows=[], tokens=tokens, prefix=prefix), first


def score_group(loaded: LoadedModel, plan: PlannedGroup, leader_inputs: Any,
                options: list[list[list[int]]]) -> list[list[OptionScore]]:
    """Score each row's options (continuation tokens) on the group's shared prefix.

    Args:
        loaded: The model.
        plan: The rows' prompt tokens and their common prefix length.
        leader_inputs: The processor's inputs of the group's first row (its images, prepared once for the group),
            as :func:`plan_likelihood_group` made them.
        options: Each row's options, as continuation tokens of that row's prompt.
    """
    import torch

    inputs = leader_inputs.to(device=loaded.device, dtype=loaded.dtype)
    pad_id = loaded.processor.tokenizer.pad_token_id
    prefix_ids, prefix_mask = left_pad([plan.tokens[0][: plan.prefix]], pad_id, torch.long)
    prefix_inputs = prefix_pass_inputs(inputs, prefix_ids, prefix_mask, loaded.device)
    suffix_ids, suffix_mask = left_pad([row[plan.prefix:] for row in plan.tokens], pad_id, torch.long)
    suffix_ids, suffix_mask = suffix_ids.to(loaded.device), suffix_mask.to(loaded.device)
    prompt_mask = torch.cat([prefix_inputs["attention_mask"].expand(len(plan.tokens), -1), suffix_mask], dim=1)
    with torch.inference_mode():
        prefill = run_prompts(loaded, prefix_inputs)
        # Where the prefix's continuation goes: its length, plus the model's offset for M-RoPE.
        start = prefill.next_positions[0]
        # Left padding inside the suffix: positions continue from the prefix and count real tokens only.
        positions = start + (suffix_mask.cumsum(dim=1) - 1).clamp(min=0)
        next_positions = prompt_mask.sum(dim=1) + (start - plan.prefix)
        cache = prefill.outputs.past_key_values
        cache.batch_select_indices(torch.zeros(len(plan.tokens), dtype=torch.long, device=loaded.device))
        rows_pass = loaded.model(input_ids=suffix_ids, attention_mask=prompt_mask, position_ids=positions,
                                 past_key_values=cache, use_cache=True, **keep_last_logits(loaded.model, 1))
        first_logprobs = torch.log_softmax(rows_pass.logits[:, -1].float(), dim=-1)
        longer = [(row, number) for row, row_options in enumerate(options)
                  for number, tokens in enumerate(row_options) if len(tokens) > 1]
        rest: dict[tuple[int, int], float] = {}
        if longer:
            sums = batched_option_pass(loaded, rows_pass.past_key_values, prompt_mask, next_positions,
                                [row for row, _ in longer], [options[row][number] for row, number in longer])
            rest = dict(zip(longer, sums, strict=True))
    return [
        [OptionScore(first_logprobs[row, tokens[0]].item() + rest.get((row, number), 0.0), len(tokens))
         for number, tokens in enumerate(row_options)]
        for row, row_options in enumerate(options)
    ]


def score_shareable_groups(loaded: LoadedModel, rows: list[tuple[Request, str, list[list[int]]]], counts: SharingCounts,
                  found: dict[int, list[OptionScore]]) -> list[tuple[Request, str, list[list[int]]]]:
    """Score the rows of groups that can share their prefix into ``found``; returns the rows left for the ordinary
    path (lone rows, and groups whose prompts have no exact common prefix), counted by reason in ``counts``."""
    left: list[tuple[Request, str, list[list[int]]]] = []
    blocker = prefix_sharing_blocker(loaded.model)  # the model's: the same for every group
    position = 0
    for requests in split_groups([request for request, _, _ in rows]):
        group = rows[position:position + len(requests)]
        position += len(requests)
        why = "single row" if len(group) == 1 else blocker
        plan = None
        if why is None:
            planned = plan_likelihood_group(loaded, [context for _, context, _ in group], group[0][0].images)
            plan, why = (planned, None) if isinstance(planned, tuple) else (None, planned)
        if plan is None:
            counts.count_unshared(why or "not shareable", len(group))
            left += group
            continue
        scored = score_group(loaded, *plan, [options for _, _, options in group])
        found.update((request.index, row_scores) for (request, _, _), row_scores in zip(group, scored, strict=True))
        counts.groups += 1
        counts.shared_rows += len(group)
    return left
