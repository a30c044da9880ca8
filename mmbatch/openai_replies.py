"""Reading what an OpenAI-compatible server answers: a chat completion, its usage and prompt log-probabilities, or
the message of an error body.

A body that is not what it should be is a failed attempt with its reason, never an exception from deep inside a
parser, and a reply or message too long to keep is refused or cut here, before it reaches a cell or the cache.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mmbatch.retry_policy import AttemptFailure

MAX_REPLY_CHARS = 1 << 20
"""Longest assistant text accepted (a 512-token answer is ~2 KB, a judge's verdict a few bytes): a longer reply is a
failed row, not a 50 MB cell or cache entry."""
MAX_MESSAGE_CHARS = 1000
"""Longest server error message kept in an ``error`` cell or a printed line; the rest is cut and counted."""


@dataclass(frozen=True)
class ChatReply:
    """One successful chat completion."""

    text: str
    """The assistant message's content."""
    prompt_tokens: int = 0
    """Input tokens, as the server reports them (0 when it does not)."""
    completion_tokens: int = 0
    """Output tokens, as the server reports them (0 when it does not)."""
    attempts: int = 1
    """HTTP attempts it took (1 = no retry)."""
    prompt_logprobs: tuple[tuple[int, float | None], ...] | None = None
    """When the request asked for ``prompt_logprobs`` (vLLM, SGLang): each prompt token's id and log-probability
    (None for the first token, which nothing predicts); None when the reply has none."""


def parse_chat_completion(content: bytes, *, where: str, scrub: Callable[[str], str]) -> ChatReply | AttemptFailure:
    """The reply in a 2xx body, or why it is not one.

    Args:
        content: the raw body.
        where: the server, for messages.
        scrub: removes the API key from a snippet of the body quoted in a message.

    Returns:
        The reply; or a retryable failure for a body that is not a chat completion (a garbage 200) or whose
        ``prompt_logprobs`` cannot be read, and a final one for a text over :data:`MAX_REPLY_CHARS`.
    """
    try:
        data = json.loads(content)
        message = data["choices"][0]["message"]
        text = message.get("content")
        if text is None and message.get("refusal"):
            text = str(message["refusal"])
        if not isinstance(text, str):
            raise TypeError("no text content")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        snippet = scrub(repr(content[:80].decode("utf-8", "replace")))
        return AttemptFailure(f"not a chat completion from {where}: {snippet}", True)
    if len(text) > MAX_REPLY_CHARS:
        return AttemptFailure(f"the reply from {where} holds {len(text):,} characters, over the limit of "
                              f"{MAX_REPLY_CHARS:,} (MAX_REPLY_CHARS)", False)
    usage = data.get("usage")
    try:
        prompt_logprobs = parse_prompt_logprobs(data.get("prompt_logprobs"))
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        snippet = scrub(repr(content[:80].decode("utf-8", "replace")))
        return AttemptFailure(f"unreadable prompt_logprobs from {where}: {snippet}", True)
    return ChatReply(text, _token_count(usage, "prompt_tokens"), _token_count(usage, "completion_tokens"),
                     prompt_logprobs=prompt_logprobs)


def _token_count(usage: Any, name: str) -> int:
    """A token count from ``usage``; 0 when absent or not a whole number (a server's bad usage must not fail a row
    whose answer is fine)."""
    value = usage.get(name) if isinstance(usage, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or abs(value) == float("inf"):
        return 0
    return max(0, int(value))


def parse_prompt_logprobs(value: Any) -> tuple[tuple[int, float | None], ...] | None:
    """vLLM's ``prompt_logprobs`` (``[null, {"TOKEN_ID": {"logprob": -1.2, ...}}, ...]``) as (token id, log-prob).

    The request asks for 0 alternatives, so each position holds exactly its own token; a position with several
    entries cannot say which one is the prompt's, so it is refused rather than guessed.

    Raises:
        ValueError: A position holds no entry or several.
    """
    if value is None:
        return None
    parsed: list[tuple[int, float | None]] = []
    for position in value:
        if position is None:
            parsed.append((-1, None))
            continue
        if len(position) != 1:
            raise ValueError(f"{len(position)} entries at one prompt position")
        ((token, entry),) = position.items()
        parsed.append((int(token), float(entry["logprob"])))
    return tuple(parsed)


def server_error_message(content: bytes) -> str:
    """The ``error.message`` of an OpenAI-style error body (cut to :data:`MAX_MESSAGE_CHARS`), else the start of the
    body."""
    try:
        message = str(json.loads(content)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return repr(content[:200].decode("utf-8", "replace"))
    if len(message) > MAX_MESSAGE_CHARS:
        message = f"{message[:MAX_MESSAGE_CHARS]}... ({len(message) - MAX_MESSAGE_CHARS:,} more characters cut)"
    return message
