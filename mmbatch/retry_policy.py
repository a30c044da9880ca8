"""When a failed request to an OpenAI-compatible server is tried again, and how long to wait first.

One policy for every server and both transports of :class:`mmbatch.openai_client.ChatClient`, so that the retries,
``Retry-After`` and the error text read the same whichever way a request went.
"""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
"""HTTP statuses worth retrying besides any 5xx: timeouts, conflicts, rate limits and the proxies' gateway errors."""
MAX_RETRY_AFTER_S = 300.0
"""A ``Retry-After`` longer than this is capped (a server asking for an hour is treated as asking for 5 minutes)."""


@dataclass
class AttemptFailure:
    """One HTTP attempt that did not give a usable answer, worded for an ``error`` cell."""

    message: str
    """What went wrong, naming the server (scrubbed of the key)."""
    retryable: bool
    """Whether trying again may help (429, 5xx, timeouts, dropped connections, garbage bodies)."""
    retry_after_s: float | None = None
    """The server's ``Retry-After``, in seconds, when it sent one."""
    status: int | None = None
    """The HTTP status when the server answered one (None for transport problems and garbage bodies)."""
    said: str = ""
    """The server's own error message (scrubbed), with ``status``."""


def status_is_retryable(status: int) -> bool:
    """Whether an HTTP error status is worth retrying (any 5xx, or one of :data:`RETRYABLE_STATUS`)."""
    return status in RETRYABLE_STATUS or status >= 500


def backoff_delay(attempt: int, retry_after_s: float | None, *, backoff_s: float, max_backoff_s: float) -> float:
    """Seconds to wait before retry number ``attempt`` (1 = the first retry).

    The server's ``Retry-After`` when it sent one (capped at :data:`MAX_RETRY_AFTER_S`), else ``backoff_s`` doubled
    each retry, capped at ``max_backoff_s``, with +-50 % jitter.
    """
    if retry_after_s is not None:
        return min(retry_after_s, MAX_RETRY_AFTER_S)
    base = min(backoff_s * 2 ** (attempt - 1), max_backoff_s)
    return base * random.uniform(0.5, 1.5)  # jitter: many rows retrying at once must not retry in lockstep


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date), or None."""
    if value is None or not value.strip():
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
