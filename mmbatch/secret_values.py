"""The API keys in use, and scrubbing them out of every string that leaves the process.

Keys are registered where they are read (:func:`mmbatch.openai_client.api_key_from_environment`). Scrubbing matches
the exact values, whatever their shape (no ``sk-`` prefix assumed), in the forms a key takes when it is echoed back:
as is, JSON- or Python-escaped (a key holding a newline or a quote), percent-encoded, base64 of ``user:key`` (basic
auth), and each line of a multi-line key. It is applied to table cells and metadata (:func:`mmbatch.tableio.
write_table`), progress commits, the judge cache, and everything printed to stdout and stderr (:func:`guard_streams`).
"""

from __future__ import annotations

import base64
import json
import sys
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

import polars as pl

MASK = "***"
MIN_PIECE = 8
"""Lines of a multi-line key shorter than this are not scrubbed on their own (they would mask ordinary words)."""

_variants: list[str] = []
"""Every form of every registered key, longest first (a longer form is replaced before a shorter one inside it)."""


def register_secret(value: str | None) -> None:
    """Scrub ``value`` (and its echoed forms) from everything written or printed from now on."""
    if not value:
        return
    forms = {value, json.dumps(value)[1:-1], repr(value)[1:-1], value.encode("unicode_escape").decode("ascii"),
             urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value),
             base64.b64encode(value.encode()).decode("ascii")}
    forms.update(line for line in value.splitlines() if len(line.strip()) >= MIN_PIECE)
    forms = {form for form in forms if len(form) >= min(len(value), MIN_PIECE)}
    _variants[:] = sorted(set(_variants) | forms, key=len, reverse=True)


def forget_secrets() -> None:
    """Clear the registry (a new in-process run with other keys, and tests)."""
    _variants.clear()


def has_secrets() -> bool:
    """Whether any key is registered."""
    return bool(_variants)


def scrub_text(text: str) -> str:
    """``text`` with every registered key form replaced by ``***``."""
    for form in _variants:
        if form in text:
            text = text.replace(form, MASK)
    return text


def scrub_value(value: Any) -> Any:
    """Strings inside ``value`` (nested dicts and lists, as in metadata and JSON) scrubbed; keys of dicts too."""
    if not _variants:
        return value
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {scrub_value(k): scrub_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_value(item) for item in value]
    return value


def scrub_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its text columns scrubbed (a no-op, and free, when no key is registered)."""
    if not _variants:
        return frame
    text_columns = [name for name, dtype in frame.schema.items() if dtype == pl.String]
    if not text_columns:
        return frame
    expressions = []
    for name in text_columns:
        column = pl.col(name)
        for form in _variants:
            column = column.str.replace_all(form, MASK, literal=True)
        expressions.append(column.alias(name))
    return frame.with_columns(expressions)


class ScrubbingStream:
    """A text stream that scrubs what is written to it before passing it on."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(scrub_text(text) if _variants else text)
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def guard_streams() -> Iterator[None]:
    """Scrub everything printed to stdout and stderr (messages, tracebacks, progress lines) while inside."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ScrubbingStream(sys.stdout), ScrubbingStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
