"""The API keys in use, and scrubbing them out of the texts where a server can echo them.

Keys are registered where a stage reads one to use it (:func:`mmbatch.openai_client.api_key_from_environment`: infer
with an API backend, extract with the judge), never merely because a variable is set: a stage that sends no key
cannot leak one, and must not change a cell because it looks like one.

Only a value that cannot be ordinary text is registered (:func:`is_scrubbable`: 8 characters or more, 6 of them
distinct, of two kinds or more among lower case, upper case, digits and the rest). ``B``, ``EMPTY`` or ``password`` as
a key would otherwise turn every answer "B" or every word holding it into ``***``; such a key is not scrubbed.

Scrubbing covers the forms a key takes when it is echoed back (:func:`_forms`): as it is, in any letter case,
JSON- or Python-escaped, percent-encoded, HTML-escaped (named or numeric entities), as hex, in base64 (alone, in
``Bearer KEY`` or ``user:KEY``, or anywhere inside a longer base64 text), each line of a multi-line key, and any of
these wrapped across lines. It is applied only where a secret can appear: server replies and error texts
(:class:`mmbatch.openai_client.ChatClient`), the judge cache, the metadata a stage records, and everything printed to
stdout and stderr (:func:`guard_streams`); never to the data cells of a file.

This module imports nothing heavy: every command imports it at start-up.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

MASK = "***"
MIN_SECRET_CHARS = 8
"""A shorter value (or line of a multi-line key) is never scrubbed: it would mask ordinary words and answers."""
MIN_DISTINCT_CHARS = 6
"""Fewer distinct characters (``aaaaaaaa``, ``abababab``) cannot be told from ordinary text either."""
MIN_CHARACTER_KINDS = 2
"""Kinds among lower case, upper case, digits and other characters: one kind alone (``password``, ``12345678``) is
a word or a number as often as a key."""
_WRAP = r"(?:(?:\r\n|\r|\n|\\r\\n|\\n|\\r)[ \t]*)?"
"""What may stand between two characters of an echoed key: a line break (real or JSON-escaped) and indentation."""

_forms_registered: set[str] = set()
_pattern: re.Pattern[str] | None = None
"""One pattern matching every form of every registered key (None: nothing registered)."""


def is_scrubbable(value: str) -> bool:
    """Whether ``value`` is distinctive enough to be scrubbed without masking ordinary text (see the module)."""
    if len(value) < MIN_SECRET_CHARS or len(set(value)) < MIN_DISTINCT_CHARS:
        return False
    kinds = (str.islower, str.isupper, str.isdigit, lambda c: not c.isalnum())
    return sum(any(kind(c) for c in value) for kind in kinds) >= MIN_CHARACTER_KINDS


def register_secret(value: str | None) -> None:
    """Scrub ``value`` (and its echoed forms) from what is printed and from server texts from now on; a value that
    is not :func:`is_scrubbable` (nor any of its lines) is left alone."""
    global _pattern
    if not value:
        return
    pieces = [value] + [line.strip() for line in value.splitlines()]
    forms = {form for piece in pieces if is_scrubbable(piece) for form in _forms(piece)}
    forms = {form for form in forms if len(form) >= MIN_SECRET_CHARS}
    if not forms - _forms_registered:
        return
    _forms_registered.update(forms)
    # Longest first: a longer form is replaced before a shorter one inside it.
    alternatives = ("".join(re.escape(c) + _WRAP for c in form[:-1]) + re.escape(form[-1])
                    for form in sorted(_forms_registered, key=len, reverse=True))
    _pattern = re.compile("|".join(alternatives), re.IGNORECASE)


def _forms(value: str) -> set[str]:
    """The texts ``value`` becomes when a server or a proxy echoes it back (letter case is matched apart)."""
    # Imported here: only a stage that registers a key needs its encodings, and every command's start imports this.
    import base64
    import binascii
    import html
    import json
    import urllib.parse

    data = value.encode("utf-8")
    forms = {value, json.dumps(value)[1:-1], repr(value)[1:-1], value.encode("unicode_escape").decode("ascii"),
             urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value), html.escape(value),
             html.escape(value, quote=False), html.escape(value).replace("&#x27;", "&#39;"),
             "".join(f"&#{ord(c)};" for c in value), "".join(f"&#x{ord(c):x};" for c in value),
             binascii.hexlify(data).decode("ascii")}
    for framed in (data, b"Bearer " + data, b":" + data):
        forms.add(base64.b64encode(framed).decode("ascii"))
    for shift in range(3):  # the key inside any longer base64 text: the part its own bytes alone decide
        encoded = base64.b64encode(b"\0" * shift + data).decode("ascii")
        start = 4 if shift else 0
        end = 4 * ((shift + len(data)) // 3)
        core = encoded[start:end]
        forms.update({core, core.replace("+", "-").replace("/", "_")})
    return forms


def forget_secrets() -> None:
    """Clear the registry (a new in-process run with other keys, and tests)."""
    global _pattern
    _forms_registered.clear()
    _pattern = None


def has_secrets() -> bool:
    """Whether any key is registered."""
    return _pattern is not None


def scrub_text(text: str) -> str:
    """``text`` with every registered key form replaced by ``***``."""
    if _pattern is None or not text:
        return text
    return _pattern.sub(MASK, text)


def scrub_value(value: Any) -> Any:
    """Strings inside ``value`` (nested dicts and lists, as in metadata and JSON) scrubbed; keys of dicts too."""
    if _pattern is None:
        return value
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {scrub_value(k): scrub_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_value(item) for item in value]
    return value


class ScrubbingStream:
    """A text stream that scrubs what is written to it before passing it on."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(scrub_text(text))
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
