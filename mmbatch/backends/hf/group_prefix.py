"""Rows of one group (MMBench's circular copies, MME's two questions per image) prefill their common prefix once.

The copies of a question share the image and everything before the options: 85-95 % of their tokens with 576 image
tokens. For greedy generation, each group's prefix (the longest run of tokens all its rows start with) goes through
the model once, in one left-padded pass for all groups of the batch; the key/value cache is then given to every row
of the group (``batch_select_indices`` with the group's position repeated) and one ``generate`` call continues all
rows at once from there. Each row's input is ``[its group's prefix, left-padded][its own suffix, left-padded]``;
padding is masked and positions are those of each row's own unpadded sequence: counted from the mask, or for
M-RoPE models (Qwen2-VL...) derived by the model from the prefix, where every image is, and continued after it at
real tokens + the model's offset (``rope_deltas``, :mod:`cache_reuse`), as the model's own ``generate`` does.

Each row is tokenised in full, so the shared tokens are exactly the row's own tokens: no tokenizer merge can
straddle the branch point. A group falls back to the ordinary batched path (counted in :class:`SharingCounts`) when
sharing cannot be exact or cannot pay: a single row, sampling (``temperature`` > 0: samples would be drawn in
another order), beam search, a cache that cannot be continued after padding
(:func:`~mmbatch.backends.hf.cache_reuse.prefix_sharing_blocker`), per-token inputs the shared passes do not rebuild,
image tokens after the branch point, or an unknown image token.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mmbatch.backends.base import Request, Result
from mmbatch.backends.generation_args import PLAIN, GenerationArgs
from mmbatch.backends.hf.cache_reuse import prefix_sharing_blocker, rope_offsets_holder
from mmbatch.backends.hf.decoding import answer_text, generate_kwargs
from mmbatch.backends.hf.generation import answer_tokens, eos_ids, generate_batch, generation_config
from mmbatch.backends.hf.likelihood import run_prompts
from mmbatch.backends.hf.loading import LoadedModel
from mmbatch.backends.hf.messages import chat_text, encode

SHARING_RULE = "rows of one group (same g_index, same images) prefill their common token prefix once"
"""How rows share prefixes (recorded in the settings; generation shares only when greedy)."""


@dataclass
class SharingCounts:
    """How many rows shared their group's prefix, and why the others did not."""

    kind: str = "generated"
    """Which rows are counted (``generated`` or ``likelihood``), for the log line."""
    shared_rows: int = 0
    """Rows continued from their group's shared prefix."""
    groups: int = 0
    """Groups whose prefix was prefilled once."""
    unshared: dict[str, int] = field(default_factory=dict)
    """Rows that ran the ordinary way, by reason."""

    def count_unshared(self, reason: str, rows: int) -> None:
        """Add ``rows`` rows that ran unshared because of ``reason``."""
        self.unshared[reason] = self.unshared.get(reason, 0) + rows

    def as_dict(self) -> dict[str, Any]:
        """The counts for the output metadata: shared rows, groups, and unshared rows by reason."""
        return {"shared_rows": self.shared_rows, "groups": self.groups, "unshared": dict(sorted(self.unshared.items()))}

    def line(self) -> str:
        """One line for the log: shared rows and groups, then unshared rows by reason."""
        unshared = sum(self.unshared.values())
        reasons = ", ".join(f"{count} {reason}" for reason, count in sorted(self.unshared.items()))
        return (f"hf: {self.shared_rows} {self.kind} rows shared the prefix of their group ({self.groups} groups); "
                f"{unshared} ran unshared" + (f" ({reasons})" if reasons else ""))


@dataclass(frozen=True)
class PlannedGroup:
    """A group whose rows continue one prefix."""

    rows: list[Request]
    """The group's rows, in batch order."""
    tokens: list[list[int]]
    """Each row's full prompt tokens (as the processor writes them)."""
    prefix: int
    """How many leading tokens every row shares (at least one token of each row is left after it)."""


def same_group(first: Request, second: Request) -> bool:
    """Whether two rows can share a prefill: the same group and the same images, pixel for pixel."""
    if first.group is None or first.group != second.group or len(first.images) != len(second.images):
        return False
    return all(a is b or (a.size == b.size and a.mode == b.mode and a.tobytes() == b.tobytes())
               for a, b in zip(first.images, second.images, strict=True))


def split_groups(batch: Sequence[Request]) -> list[list[Request]]:
    """Consecutive rows of the same group (the stage orders rows so that a group's rows are adjacent)."""
    groups: list[list[Request]] = []
    for request in batch:
        if groups and same_group(groups[-1][0], request):
            groups[-1].append(request)
        else:
            groups.append([request])
    return groups


def image_token_ids(loaded: LoadedModel) -> set[int] | None:
    """The ids of the tokens that stand for image (or video, or audio) features; None when the model does not say.

    Most configurations name them at the top; Phi-4-multimodal names them in its vision and audio sub-configurations
    (``vision_config.image_token_id``)."""
    config = loaded.model.config
    configs = [config, getattr(config, "vision_config", None), getattr(config, "audio_config", None)]
    ids = {getattr(part, name, None) for part in configs if part is not None
           for name in ("image_token_id", "image_token_index", "video_token_id", "video_token_index",
                        "audio_token_id")}
    known = {int(token) for token in ids if isinstance(token, int)}
    return known or None


TOKEN_INPUTS = frozenset({"input_ids", "attention_mask", "mm_token_type_ids"})
"""The per-token inputs the shared-prefix passes rebuild for the prefix and each row's rest. ``mm_token_type_ids``
(which tokens are image or video, for M-RoPE) is cut to the prefix by :func:`prefix_token_types`: the rest of each
row holds no image token, and its positions are given."""


def prefix_token_types(inputs: Any, prefixes: list[int], width: int) -> dict[str, Any]:
    """The leaders' ``mm_token_type_ids`` cut to their group's prefix, left-padded with 0 (text) to ``width``.

    Args:
        inputs: The processor's left-padded inputs of each group's first row.
        prefixes: Each group's prefix length.
        width: The width of the prefix pass.

    Returns:
        ``{"mm_token_type_ids": ...}``, or nothing when the processor gives no token types.
    """
    import torch

    types = inputs.get("mm_token_type_ids")
    if types is None:
        return {}
    cut = torch.zeros((len(prefixes), width), dtype=types.dtype, device=types.device)
    starts = inputs["attention_mask"].shape[1] - inputs["attention_mask"].sum(dim=1)
    for row, prefix in enumerate(prefixes):
        start = int(starts[row])
        cut[row, width - prefix:] = types[row, start: start + prefix]
    return {"mm_token_type_ids": cut}


def left_pad(rows: list[list[int]], pad_id: int, mask_dtype: Any) -> tuple[Any, Any]:
    """Token rows left-padded to the longest: ``(ids, mask)`` on the CPU, the mask 1 over each row's own tokens."""
    import torch

    width = max(len(row) for row in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=mask_dtype)
    for number, row in enumerate(rows):
        ids[number, width - len(row):] = torch.tensor(row, dtype=torch.long)
        mask[number, width - len(row):] = 1
    return ids, mask


def prefix_pass_inputs(leader_inputs: Any, prefix_ids: Any, prefix_mask: Any, device: Any) -> dict[str, Any]:
    """The inputs of one pass over the groups' prefixes: the processor's inputs of each group's first row, with its
    per-token columns replaced by the group's left-padded prefix (:func:`left_pad`).

    The processor prepares each group's images once (and whatever else the model needs besides the tokens); only
    the tokens, their mask and the token types (:func:`prefix_token_types`) are cut to the prefix.
    """
    shape = tuple(leader_inputs["input_ids"].shape)
    inputs = {name: value for name, value in leader_inputs.items()
              if not (hasattr(value, "shape") and tuple(value.shape[:2]) == shape)}
    prefixes = [int(length) for length in prefix_mask.sum(dim=1)]
    inputs.update(input_ids=prefix_ids.to(device), attention_mask=prefix_mask.to(device),
                  **prefix_token_types(leader_inputs, prefixes, prefix_ids.shape[1]))
    return inputs


def per_token_inputs(inputs: Any) -> list[str]:
    """The processor's per-token tensors besides the tokens and their mask (Mllama's ``cross_attention_mask``,
    Gemma 3's and PaliGemma's ``token_type_ids``), by name.

    The shared-prefix passes rebuild only the tokens and the mask of the prefix and of each row's rest; a row whose
    model needs more per token would run without it, so such rows do not share.
    """
    shape = tuple(inputs["input_ids"].shape)
    return sorted(name for name, value in inputs.items()
                  if name not in TOKEN_INPUTS and hasattr(value, "shape") and tuple(value.shape[:2]) == shape)


def common_prefix(tokens: list[list[int]]) -> int:
    """Length of the longest prefix all token lists share, leaving at least one token of each."""
    limit = min(len(row) for row in tokens) - 1
    length = 0
    while length < limit and all(row[length] == tokens[0][length] for row in tokens):
        length += 1
    return length


def generate_shared(loaded: LoadedModel, batch: list[Request], counts: SharingCounts, *, max_new_tokens: int,
                    temperature: float, generation: GenerationArgs = PLAIN) -> list[Result]:
    """Generate the answers of ``batch``, prefilling each group's common prefix once.

    Rows that cannot share run through :func:`~mmbatch.backends.hf.generation.generate_batch` together.

    Raises:
        Exception: Whatever the model or processor raises for the batch; the batch runner retries smaller batches.
    """
    planned, alone = plan_groups(loaded, batch, counts, temperature=temperature, beams=generation.beams())
    results: dict[int, Result] = {}
    if alone:
        results.update((result.index, result) for result in generate_batch(
            loaded, alone, max_new_tokens=max_new_tokens, temperature=temperature, generation=generation))
    if planned:
        shared_started = time.perf_counter()
        texts = continue_groups(loaded, planned, max_new_tokens=max_new_tokens, generation=generation)
        share_ms = (time.perf_counter() - shared_started) * 1000 / sum(len(group.rows) for group in planned)
        for group in planned:
            for request in group.rows:
                text, count = texts[request.index]
                results[request.index] = Result(index=request.index, prediction=text, output_tokens=count,
                                                latency_ms=share_ms)
        counts.groups += len(planned)
        counts.shared_rows += sum(len(group.rows) for group in planned)
    return [results[request.index] for request in batch]


def plan_groups(loaded: LoadedModel, batch: list[Request], counts: SharingCounts, *,
                temperature: float, beams: int = 1) -> tuple[list[PlannedGroup], list[Request]]:
    """Split ``batch`` into groups that share a prefix and rows that run the ordinary way (counted by reason)."""
    groups = split_groups(batch)
    reason = None
    if temperature > 0:
        reason = "sampling"
    elif beams > 1:
        reason = "beam search"  # generate would have to give each beam its own copy of the shared cache
    elif (blocker := prefix_sharing_blocker(loaded.model)) is not None:
        reason = blocker
    image_tokens = image_token_ids(loaded)
    if reason is None and image_tokens is None and any(request.images for request in batch):
        reason = "unknown image token"
    planned: list[PlannedGroup] = []
    alone: list[Request] = []
    for group in groups:
        why = reason or ("single row" if len(group) == 1 else None)
        if why is None:
            first = _prompt_inputs(loaded, group[0])
            # The processor gives every row of the group the same kinds of input: the first row tells, before the
            # other rows' images are processed for nothing.
            if extra := per_token_inputs(first):
                why = f"per-token inputs besides the tokens ({', '.join(extra)})"
            else:
                encoded = [first, *(_prompt_inputs(loaded, request) for request in group[1:])]
                tokens = [[int(token) for token in inputs["input_ids"][0].tolist()] for inputs in encoded]
                prefix = common_prefix(tokens)
                if any(token in (image_tokens or set()) for row in tokens for token in row[prefix:]):
                    why = "image tokens after the branch point"
                elif prefix == 0:
                    why = "no common prefix"
                else:
                    planned.append(PlannedGroup(group, tokens, prefix))
                    continue
        counts.count_unshared(why, len(group))
        alone += group
    return planned, alone


def _prompt_inputs(loaded: LoadedModel, request: Request) -> Any:
    """The row's prompt inputs exactly as the processor writes them (images expanded to their tokens), on the CPU."""
    return encode(loaded.processor, [chat_text(loaded.processor, request)], [request.images], "cpu", None)


def continue_groups(loaded: LoadedModel, planned: list[PlannedGroup], *, max_new_tokens: int,
                    generation: GenerationArgs = PLAIN) -> dict[int, tuple[str, int]]:
    """Prefill every group's prefix in one pass, then generate every row from its group's cache in one call.

    Returns:
        ``index`` -> (answer text, tokens generated up to and including the end-of-sequence token).
    """
    import torch

    processor = loaded.processor
    pad_id = processor.tokenizer.pad_token_id
    leaders = [group.rows[0] for group in planned]
    inputs = encode(processor, [chat_text(processor, request) for request in leaders],
                    [request.images for request in leaders], loaded.device, loaded.dtype)
    mask_dtype = inputs["attention_mask"].dtype
    prefix_ids, prefix_mask = left_pad([group.tokens[0][: group.prefix] for group in planned], pad_id, mask_dtype)
    prefix_inputs = prefix_pass_inputs(inputs, prefix_ids, prefix_mask, loaded.device)
    owners = [row for row, group in enumerate(planned) for _ in group.rows]
    suffix_ids, suffix_mask = left_pad([tokens[group.prefix:] for group in planned for tokens in group.tokens],
                                       pad_id, mask_dtype)
    # Each row: [its group's prefix, left-padded][its own suffix, left-padded].
    input_ids = torch.cat([prefix_ids[owners], suffix_ids], dim=1)
    attention_mask = torch.cat([prefix_mask[owners], suffix_mask], dim=1)
    config = generation_config(loaded.model, max_new_tokens=max_new_tokens, temperature=0.0, generation=generation)
    with torch.inference_mode():
        prefill = run_prompts(loaded, prefix_inputs)
        cache = prefill.outputs.past_key_values
        owner_index = torch.tensor(owners, device=loaded.device)
        cache.batch_select_indices(owner_index)
        holder = rope_offsets_holder(loaded.model)
        if holder is not None:
            # An M-RoPE model's generate continues a cached prompt at real tokens + its offsets, one per row: the
            # offsets of each row's group prefix (no image follows it).
            offsets = prefill.next_positions - prefill.mask.sum(dim=1)
            holder.rope_deltas = offsets[owner_index].unsqueeze(1)
        sequences = loaded.model.generate(input_ids=input_ids.to(loaded.device),
                                          attention_mask=attention_mask.to(loaded.device), past_key_values=cache,
                                          generation_config=config,
                                          **generate_kwargs(generation, processor.tokenizer, attention_mask))
    stop_ids = eos_ids(config, processor.tokenizer)
    answers: dict[int, tuple[str, int]] = {}
    rows = [request for group in planned for request in group.rows]
    for request, generated in zip(rows, sequences[:, input_ids.shape[1]:].tolist(), strict=True):
        answers[request.index] = answer_text(processor.tokenizer, answer_tokens(generated, stop_ids), generation)
    return answers
