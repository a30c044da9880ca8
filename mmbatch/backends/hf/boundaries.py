"""Where the prompt ends and an option begins, in tokens.

The continuation tokens must be exactly the tokens the model would see for the option's text after the prompt. With
most tokenizers the prompt's tokens are a prefix of the tokens of prompt + option, and the option's tokens are the
rest. Some tokenizers merge characters across the boundary (the prompt's last token changes when the option follows);
then the scored tokens start at the first token that differs, and that option needs its own full pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def join_text(context: str) -> str:
    """The text put between the prompt and each option: a space, unless the prompt already ends with whitespace.

    ``USER: ... ASSISTANT:`` + ``" red car"`` is how the answer would be written by the model; templates whose
    assistant turn ends with a newline get the option directly.
    """
    return "" if not context or context[-1].isspace() else " "


JOIN_RULE = "a space between prompt and option unless the prompt ends with whitespace"
"""How options are joined to the prompt (recorded in the settings)."""

SUFFIX_RULE = "the option is the processor's suffix: its own tokens after the prefix's newline (PaliGemma)"
"""How options follow the prompt for a processor that takes the answer as its ``suffix`` (recorded instead)."""


@dataclass(frozen=True)
class Continuation:
    """The tokens of one option as the continuation of a prompt."""

    token_ids: list[int]
    """Tokens to score, in order."""
    shares_prefix: bool
    """Whether the prompt's tokens are an exact prefix, so the prompt's key/value cache can be reused."""
    text: str
    """Prompt + joined option, the full text (needed for a separate pass when the prefix is not shared); the prompt
    alone when the option is the processor's ``suffix``."""
    suffix: str | None = None
    """The option, when the processor takes it as its ``suffix`` (PaliGemma); None when it is part of ``text``."""


def option_continuations(processor: Any, context: str, options: Sequence[str]) -> list[Continuation]:
    """Each option's tokens after ``context`` by the model's own rule, in option order.

    A processor that takes the answer as its ``suffix`` (PaliGemma, :func:`~mmbatch.backends.hf.messages.
    takes_answer_as_suffix`) ends the prompt with a newline and tokenises the suffix on its own: the option's tokens
    are its own, right after the prompt's. Other models: :func:`split_continuation`, with the prompt tokenised once
    for all the options.

    Raises:
        ValueError: An option adds no token (an empty option).
    """
    from mmbatch.backends.hf.messages import takes_answer_as_suffix

    tokenizer = processor.tokenizer
    if not takes_answer_as_suffix(processor):
        context_ids = tokenizer(context, add_special_tokens=False)["input_ids"]
        return [split_continuation(tokenizer, context, option, context_ids=context_ids) for option in options]
    continuations = []
    for option in options:
        token_ids = tokenizer(option, add_special_tokens=False)["input_ids"]
        if not token_ids:
            raise ValueError(f"option {option!r} adds no token to the prompt")
        continuations.append(Continuation(token_ids=token_ids, shares_prefix=True, text=context, suffix=option))
    return continuations


def split_continuation(tokenizer: Any, context: str, option: str, *,
                       context_ids: list[int] | None = None) -> Continuation:
    """Tokenise the prompt and prompt + option, and find the option's tokens.

    Args:
        tokenizer: The model's tokenizer.
        context: The chat-formatted prompt, up to the assistant's turn.
        option: The option's text, without the joining space.
        context_ids: ``context``'s tokens, when the caller has them already (several options of one prompt).

    Raises:
        ValueError: The option adds no token (an empty option).
    """
    full_text = context + join_text(context) + option
    if context_ids is None:
        context_ids = tokenizer(context, add_special_tokens=False)["input_ids"]
    full_ids = tokenizer(full_text, add_special_tokens=False)["input_ids"]
    shared = 0
    for left, right in zip(context_ids, full_ids, strict=False):
        if left != right:
            break
        shared += 1
    if shared == len(full_ids):
        raise ValueError(f"option {option!r} adds no token to the prompt")
    return Continuation(token_ids=full_ids[shared:], shares_prefix=shared == len(context_ids), text=full_text)
